/**
 * Opening the files a sprite can reach (its outbox, resume file, output and violation logs) so
 * that it cannot make the supervisor hang or read elsewhere: a FIFO opened for reading blocks
 * until a writer comes (and with a synchronous open the whole process, SIGTERM handlers
 * included), a device never ends, and a symbolic link can point anywhere. Such a file is
 * refused with a typed error; a regular file is read to its size, so no read can wait forever.
 */
import { closeSync, constants, fstatSync, lstatSync, openSync, type Stats } from "node:fs";
import { dirname, join } from "node:path";
import { ConflictError, RefusedError } from "../../core/index.js";

/** What a file that is not a regular one is, for the error message. */
function kindOf(st: Stats): string {
  if (st.isFIFO()) return "a FIFO";
  if (st.isSocket()) return "a socket";
  if (st.isCharacterDevice() || st.isBlockDevice()) return "a device";
  if (st.isDirectory()) return "a directory";
  if (st.isSymbolicLink()) return "a symbolic link";
  return st.isFile() ? "a regular file" : "of an unknown kind";
}

function refuse(what: string, path: string, kind: string): ConflictError {
  return new ConflictError(
    "not_regular_file",
    `${what} ${path} is ${kind}, not a regular file: it must be a plain file in the workspace (no FIFO, socket, device or symbolic link); it is not read`,
    { path },
  );
}

/**
 * Open `path` for reading, refusing anything but a regular file (`what` names it in the error).
 * Returns null when it does not exist. The open never blocks (O_NONBLOCK: a FIFO without a
 * writer would) and never follows a symbolic link (O_NOFOLLOW); the check is on the file opened
 * (fstat), so it cannot be swapped between check and read. With `parent`, the directory holding
 * it must be a real directory too (not a link to one elsewhere).
 */
export function openRegularFile(path: string, what: string, options: { parent?: boolean } = {}): number | null {
  if (options.parent) assertRealDirectory(dirname(path), `the directory of ${what}`);
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return null;
    if (code === "ELOOP") throw refuse(what, path, "a symbolic link");
    if (code === "ENXIO") throw refuse(what, path, "a socket");
    throw err;
  }
  const st = fstatSync(fd);
  if (!st.isFile()) {
    closeSync(fd);
    throw refuse(what, path, kindOf(st));
  }
  return fd;
}

/** Refuse `dir` unless it is a real directory (or missing): not a symbolic link to one elsewhere. */
export function assertRealDirectory(dir: string, what: string): void {
  let st: Stats;
  try {
    st = lstatSync(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return;
    throw err;
  }
  if (st.isSymbolicLink())
    throw new ConflictError(
      "not_regular_file",
      `${what} ${dir} is a symbolic link: it must be a real directory in the workspace; nothing is read or written through it`,
      { path: dir },
    );
  if (!st.isDirectory())
    throw new ConflictError("not_regular_file", `${what} ${dir} is ${kindOf(st)}, not a directory`, { path: dir });
}

/**
 * The path of `rel` (`/`-separated, no `.`, `..` or empty segments) beneath the directory `root`,
 * after checking that every directory on the way is a real directory: none is a symbolic link
 * (which would take the path elsewhere) and none is missing unless `missingOk`. The last segment
 * itself is not looked at; open it with O_NOFOLLOW. `verified` carries the directories already
 * checked, so a walk over many paths checks each directory once.
 *
 * This is the equivalent of openat2's RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS for the supervisor's
 * use: it reads and writes what a sprite left only after the sprite has exited (its sandbox's PID
 * namespace dies with it), so nothing swaps a directory between this check and the use.
 */
export function beneath(
  root: string,
  rel: string,
  what: string,
  verified: Set<string> = new Set(),
  options: { missingOk?: boolean } = {},
): string {
  const parts = rel.split("/");
  if (parts.some((p) => p === "" || p === "." || p === "..")) {
    throw new RefusedError(
      "path_outside_root",
      `${what} "${rel}" is not a plain relative path (no '.', '..' or empty segments)`,
      { path: rel },
    );
  }
  let dir = root;
  for (const part of parts.slice(0, -1)) {
    dir = join(dir, part);
    if (verified.has(dir)) continue;
    let st: Stats;
    try {
      st = lstatSync(dir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT" && options.missingOk) return join(root, rel);
      throw err;
    }
    if (st.isSymbolicLink())
      throw new ConflictError(
        "not_regular_file",
        `${what} "${rel}" passes through ${dir}, a symbolic link: nothing is read or written through it`,
        { path: rel },
      );
    if (!st.isDirectory())
      throw new ConflictError(
        "not_regular_file",
        `${what} "${rel}" passes through ${dir}, which is ${kindOf(st)}, not a directory`,
        { path: rel },
      );
    verified.add(dir);
  }
  return join(root, rel);
}

/** `openRegularFile` for `rel` beneath `root`: no symbolic link followed on the way or at the end. */
export function openRegularFileBeneath(root: string, rel: string, what: string, verified?: Set<string>): number | null {
  return openRegularFile(beneath(root, rel, what, verified, { missingOk: true }), what);
}
