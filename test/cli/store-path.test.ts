import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CLI, runCli, runProcess } from "../helpers/proc.js";

const BWRAP = "/usr/bin/bwrap";
const root = process.getuid?.() === 0;

let dir: string;
const env = (path: string) => ({ ...process.env, PMAGENT_DATABASE_URL: "", PMAGENT_SQLITE_PATH: path });
/** `pmagent bb list` with the SQLite file at `path`: one line on stderr, exit code 2, nothing created. */
async function refused(path: string): Promise<string> {
  // A guard, not a measurement: a path under /proc used to spin forever.
  const r = await runCli(["bb", "list"], { cwd: dir, env: env(path), timeout: 20_000 });
  expect(r.code).toBe(2);
  expect(r.stdout).toBe("");
  const lines = r.stderr.trimEnd().split("\n");
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/\[store_path_unusable\]$/);
  return lines[0]!;
}

const FIX =
  "set PMAGENT_SQLITE_PATH (or storage.path in pmagent.config.json) to a file in a writable directory on a disk, e.g. .pmagent/pmagent.db";

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "pmagent-store-path-"));
  expect((await runCli(["init", "--project-id", "demo"], { cwd: dir, env: env("") })).code).toBe(0);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("an unusable SQLite path is refused with one line and exit code 2", () => {
  it("under /proc (where mkdir -p used to spin forever), /sys and /dev, also through a symbolic link", async () => {
    expect(await refused("/proc/1/pmagent/pmagent.db")).toBe(
      `pmagent: the SQLite database /proc/1/pmagent/pmagent.db (from PMAGENT_SQLITE_PATH) is under /proc, a kernel file system, not a disk: ${FIX} [store_path_unusable]`,
    );
    expect(await refused("/proc/self/environ")).toContain(
      "/proc/self/environ (from PMAGENT_SQLITE_PATH) is under /proc, a kernel file system",
    );
    expect(await refused("/sys/pmagent.db")).toContain(
      "/sys/pmagent.db (from PMAGENT_SQLITE_PATH) is under /sys, a kernel file system",
    );
    expect(await refused("/dev/null")).toContain(
      "/dev/null (from PMAGENT_SQLITE_PATH) is under /dev, a kernel file system",
    );
    symlinkSync("/proc/self", join(dir, "proc-link"));
    expect(await refused(join(dir, "proc-link/pmagent.db"))).toMatch(
      /proc-link\/pmagent\.db \(from PMAGENT_SQLITE_PATH\) is under \/proc \(it resolves to \/proc\/\d+\/pmagent\.db\), a kernel file system/,
    );
  });

  it("below a regular file (where a stack trace was printed), a directory as the file, a FIFO as the file", async () => {
    const config = join(dir, "pmagent.config.json");
    expect(await refused(join(config, "a/b/pmagent.db"))).toBe(
      `pmagent: the SQLite database ${config}/a/b/pmagent.db (from PMAGENT_SQLITE_PATH) cannot be created: ${config} is a file, not a directory: ${FIX} [store_path_unusable]`,
    );
    expect(await refused(join(config, "pmagent.db"))).toContain(
      `cannot be created: ${config} is a file, not a directory`,
    );
    const sub = join(dir, "a-directory");
    mkdirSync(sub);
    expect(await refused(sub)).toBe(
      `pmagent: the SQLite database ${sub} (from PMAGENT_SQLITE_PATH) is a directory: name a file inside it, e.g. ${sub}/pmagent.db [store_path_unusable]`,
    );
    const fifo = join(dir, "a-fifo");
    execFileSync("mkfifo", [fifo]);
    expect(await refused(fifo)).toContain(
      `${fifo} (from PMAGENT_SQLITE_PATH) is not a regular file (a device, FIFO or socket)`,
    );
  });

  it("from storage.path in the config, named as such", async () => {
    const other = mkdtempSync(join(tmpdir(), "pmagent-store-path-"));
    try {
      expect((await runCli(["init", "--project-id", "demo"], { cwd: other, env: env("") })).code).toBe(0);
      const file = join(other, "pmagent.config.json");
      const config = JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
      writeFileSync(file, JSON.stringify({ ...config, storage: { driver: "sqlite", path: "/proc/pmagent.db" } }));
      const r = await runCli(["bb", "list"], { cwd: other, env: env("") });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain("the SQLite database /proc/pmagent.db (from storage.path) is under /proc");
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  });

  // As root every directory is writable except on a read-only file system: bubblewrap mounts one.
  it.skipIf(root && !existsSync(BWRAP))("in a directory this user cannot write", async () => {
    const locked = join(dir, "locked");
    mkdirSync(join(locked, "db"), { recursive: true });
    const file = join(locked, "db/pmagent.db");
    const r = root
      ? await runProcess(
          BWRAP,
          ["--dev-bind", "/", "/", "--ro-bind", locked, locked, "--chdir", dir, process.execPath, CLI, "bb", "list"],
          { env: env(file) },
        )
      : await (async () => {
          execFileSync("chmod", ["0555", join(locked, "db")]);
          return runCli(["bb", "list"], { cwd: dir, env: env(file) });
        })();
    expect(r.code).toBe(2);
    expect(r.stderr.trimEnd()).toBe(
      `pmagent: the SQLite database ${file} (from PMAGENT_SQLITE_PATH) is not writable: ${join(locked, "db")} ${root ? "is on a read-only file system" : "does not let this user write to it"}: ${FIX} [store_path_unusable]`,
    );
  });
});
