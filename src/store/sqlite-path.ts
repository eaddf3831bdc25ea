import { accessSync, constants, realpathSync, statSync, type Stats } from "node:fs";
import { basename, dirname, join, resolve, sep } from "node:path";
import { UsageError } from "../core/index.js";

/**
 * Kernel file systems: nothing there is a file on a disk, and creating directories under /proc
 * loops forever in `mkdir -p`. Shared memory under /dev is an ordinary tmpfs and stays allowed.
 */
const KERNEL_ROOTS = ["/proc", "/sys", "/dev"];
const ALLOWED_UNDER_KERNEL_ROOTS = ["/dev/shm"];

const under = (path: string, root: string) => path === root || path.startsWith(root + sep);

/** `stat` that tells "not there" (a missing component, or one that is a file) from "there". */
function statOrMissing(path: string): Stats | undefined {
  try {
    return statSync(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return undefined;
    throw err;
  }
}

/**
 * Refuse a SQLite database path that can never hold a database, with a message that says why,
 * before anything is created: a path under /proc, /sys or /dev (through symbolic links too), a
 * directory or a device as the file, a parent that is a regular file, a place this user cannot
 * write (SQLite also creates the `-wal` and `-shm` files beside the database).
 *
 * @param source where the path came from, named in the message (e.g. `PMAGENT_SQLITE_PATH`)
 */
export function assertUsableSqlitePath(file: string, source = "the store path"): void {
  const path = resolve(file);
  const what = `the SQLite database ${path} (from ${source})`;
  const fix =
    "set PMAGENT_SQLITE_PATH (or storage.path in pmagent.config.json) to a file in a writable directory on a disk, e.g. .pmagent/pmagent.db";
  const refuse = (why: string, advice = fix): never => {
    throw new UsageError("store_path_unusable", `${what} ${why}: ${advice}`, { path });
  };

  // The nearest part of the path that exists; what lies below it is still to be created.
  let existing = path;
  let stats: Stats | undefined;
  const missing: string[] = [];
  try {
    while (!(stats = statOrMissing(existing))) {
      missing.unshift(basename(existing));
      existing = dirname(existing);
    }
  } catch (err) {
    return refuse(`cannot be reached: ${(err as Error).message}`);
  }
  const real = join(realpathSync(existing), ...missing);
  const kernel = KERNEL_ROOTS.find((root) => under(real, root));
  if (kernel && !ALLOWED_UNDER_KERNEL_ROOTS.some((root) => under(real, root))) {
    refuse(
      `is under ${kernel}${under(path, kernel) ? "" : ` (it resolves to ${real})`}, a kernel file system, not a disk`,
    );
  }
  if (existing === path) {
    if (stats.isDirectory()) refuse("is a directory", `name a file inside it, e.g. ${join(path, "pmagent.db")}`);
    if (!stats.isFile()) refuse("is not a regular file (a device, FIFO or socket)");
  } else if (!stats.isDirectory()) {
    refuse(`cannot be created: ${existing} is a file, not a directory`);
  }
  const writable = (target: string, mode: number) => {
    try {
      accessSync(target, mode);
    } catch (err) {
      refuse(
        `is not writable: ${target} ${(err as NodeJS.ErrnoException).code === "EROFS" ? "is on a read-only file system" : "does not let this user write to it"}`,
      );
    }
  };
  // The directory the database and its -wal and -shm files go in (or the part of it that exists).
  writable(existing === path ? dirname(path) : existing, constants.W_OK | constants.X_OK);
  if (existing === path) writable(path, constants.R_OK | constants.W_OK);
}
