import { spawn } from "node:child_process";
import { once } from "node:events";
import { REPO_ROOT } from "./proc.js";

/** The other process: takes the write lock, says so, and holds it until a line arrives on stdin. */
const HOLDER = `
const Database = require("better-sqlite3");
const db = new Database(process.argv[1], { timeout: 5000 });
db.exec("BEGIN IMMEDIATE");
process.stdout.write("locked\\n");
process.stdin.once("data", () => {
  db.exec("ROLLBACK");
  db.close();
  process.stdout.write("released\\n");
  process.exit(0);
});
`;

export interface HeldLock {
  /** Let go of the lock; resolves once the holder has exited. */
  release(): Promise<void>;
}

/** Another process holding the SQLite write lock on `file` (BEGIN IMMEDIATE) until released. */
export async function holdWriteLock(file: string): Promise<HeldLock> {
  const child = spawn(process.execPath, ["-e", HOLDER, file], { cwd: REPO_ROOT, stdio: ["pipe", "pipe", "inherit"] });
  let out = "";
  child.stdout.setEncoding("utf8");
  const locked = new Promise<void>((resolve, reject) => {
    child.stdout.on("data", (d: string) => {
      out += d;
      if (out.includes("locked\n")) resolve();
    });
    child.once("exit", (code) => reject(new Error(`the lock holder exited (${code}) before it took the lock`)));
  });
  await locked;
  const exited = once(child, "exit");
  return {
    async release() {
      child.stdin.end("release\n");
      await exited;
    },
  };
}
