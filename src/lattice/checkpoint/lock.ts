/**
 * One process at a time changes a checkpoint directory: a prune running beside a create would
 * delete blobs the new manifest is about to reference. The lock is a file holding the owner's pid;
 * a lock left by a dead process is taken over.
 */
import { closeSync, openSync, readSync, unlinkSync, writeSync } from "node:fs";
import { join } from "node:path";
import { UnavailableError } from "../../core/index.js";
import { openRegularFile } from "../protocol/index.js";

const WAIT_MS = 30_000;
const POLL_MS = 20;

function ownerAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** The pid a lock file names (NaN when it names none), or undefined when it is gone. */
function readOwner(path: string): number | undefined {
  const fd = openRegularFile(path, "the checkpoint directory's lock");
  if (fd === null) return undefined;
  try {
    const buf = Buffer.alloc(32);
    return Number(buf.toString("utf8", 0, readSync(fd, buf, 0, buf.length, 0)));
  } finally {
    closeSync(fd);
  }
}

export function withDirLock<T>(dir: string, fn: () => T): T {
  const path = join(dir, "lock");
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    try {
      const fd = openSync(path, "wx", 0o644);
      writeSync(fd, String(process.pid));
      closeSync(fd);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
    // A FIFO or a link in its place is refused (openRegularFile), never waited on.
    const owner = readOwner(path);
    if (owner === undefined) continue; // released between our open and read: try again
    // An empty file is an owner between open and write: give it time before calling it dead.
    if (!Number.isNaN(owner) && owner !== 0 && !ownerAlive(owner)) {
      try {
        unlinkSync(path);
      } catch {
        // another waiter removed it first
      }
      continue;
    }
    if (Date.now() > deadline) {
      throw new UnavailableError(
        "checkpoint_dir_locked",
        `checkpoint directory ${dir} is locked by process ${owner || "unknown"} for more than ${WAIT_MS / 1000}s; if no pmagent checkpoint command is running, delete ${path}`,
      );
    }
    sleepSync(POLL_MS);
  }
  try {
    return fn();
  } finally {
    unlinkSync(path);
  }
}
