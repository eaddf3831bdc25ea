/**
 * One process at a time changes a checkpoint directory: a prune running beside a create would
 * delete blobs the new manifest is about to reference. The lock is a file holding the owner's pid;
 * a lock left by a dead process is taken over.
 */
import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from "node:fs";
import { join } from "node:path";
import { UnavailableError } from "../../core/index.js";

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
    let owner: number;
    try {
      owner = Number(readFileSync(path, "utf8"));
    } catch {
      continue; // released between our open and read: try again
    }
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
      throw new UnavailableError("checkpoint_dir_locked", `checkpoint directory ${dir} is locked by process ${owner || "unknown"} for more than ${WAIT_MS / 1000}s; if no pmagent checkpoint command is running, delete ${path}`);
    }
    sleepSync(POLL_MS);
  }
  try {
    return fn();
  } finally {
    unlinkSync(path);
  }
}
