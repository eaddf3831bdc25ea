/** The WAL checkpointer thread of a SQLite store (see SqliteStore): checkpoints on request. */
import { parentPort, workerData } from "node:worker_threads";
import { Database } from "./better-sqlite3.js";

const port = parentPort;
if (!port) throw new Error("sqlite-checkpoint-thread.js runs as a worker thread of a SQLite store");
const db = new Database((workerData as { file: string }).file, { fileMustExist: true });
port.on("message", (m: "checkpoint" | "close") => {
  if (m === "close") {
    db.close();
    port.close();
    return;
  }
  try {
    // PASSIVE: copy what it can without waiting for (or blocking) the store's writer.
    db.pragma("wal_checkpoint(PASSIVE)");
  } catch {
    // What is not copied now is copied by the next run, or by the store's own safety net.
  }
  port.postMessage("done");
});
