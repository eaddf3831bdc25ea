import { mkdirSync, renameSync, writeFileSync, openSync, fsyncSync, closeSync, lstatSync } from "node:fs";
import { dirname, resolve, relative, isAbsolute, sep, join } from "node:path";
import { RefusedError } from "./errors.js";
import { randomHex } from "./random.js";

/** Write a file atomically: a temporary file beside it, fsync, then rename over the target. */
export function writeFileAtomic(path: string, data: string | Buffer, mode?: number): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.${process.pid}.${randomHex(4)}.tmp`;
  writeFileSync(tmp, data, mode === undefined ? undefined : { mode });
  const fd = openSync(tmp, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
}

/**
 * Resolve `input` inside `root` and refuse anything that would leave it (`..`, absolute paths
 * elsewhere). Paths that come from users, sprites or the network go through here.
 */
export function confinePath(root: string, input: string, what = "path"): string {
  const base = resolve(root);
  const target = resolve(base, input);
  const rel = relative(base, target);
  if (rel === "") return target;
  if (rel.startsWith("..") || isAbsolute(rel) || rel.split(sep).includes("..")) {
    throw new RefusedError("path_outside_root", `${what} "${input}" is outside ${base}`);
  }
  return target;
}

/**
 * `confinePath`, and refused when the path, or a directory on the way to it, is a symbolic link:
 * for writes a file's contents decide (a link inside the root may lead anywhere).
 */
export function confinePathNoLinks(root: string, input: string, what = "path"): string {
  const target = confinePath(root, input, what);
  const base = resolve(root);
  let at = base;
  for (const part of relative(base, target).split(sep).filter(Boolean)) {
    at = join(at, part);
    let link: boolean;
    try {
      link = lstatSync(at).isSymbolicLink();
    } catch {
      break; // Not there yet: nothing further to follow.
    }
    if (link)
      throw new RefusedError(
        "path_is_link",
        `${what} "${input}" goes through the symbolic link ${relative(base, at)}: links are not followed; replace it with the file itself`,
      );
  }
  return target;
}
