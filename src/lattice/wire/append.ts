/** The sprite's side of the outbox: one fsync'd line per event (protocol/outbox.ts reads it). */
import { closeSync, constants, fsyncSync, mkdirSync, openSync, writeSync } from "node:fs";
import { dirname } from "node:path";
import { ConflictError } from "../../core/index.js";

/** Append one event as a line, creating the directory and file, and fsync before returning. */
export function appendOutbox(path: string, event: unknown): void {
  const line = `${JSON.stringify(event)}\n`;
  mkdirSync(dirname(path), { recursive: true });
  let fd: number;
  try {
    // Never through a symbolic link: an outbox pointed at another file (the secrets file) must not append to it.
    fd = openSync(path, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW, 0o644);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ELOOP")
      throw new ConflictError(
        "outbox_symlink",
        `the outbox ${path} is a symbolic link: it must be a plain file in the workspace; nothing was written`,
        { path },
      );
    throw err;
  }
  try {
    // One write call per line: concurrent appenders (O_APPEND) never interleave inside a line.
    writeSync(fd, line);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
