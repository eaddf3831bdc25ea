import { describe, expect, it } from "vitest";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SETPRIV, dieWithParent, findExecutable, processAlive } from "../../../src/lattice/sandbox/processes.js";
import { waitForDeath } from "../harness.js";
import { DIST } from "../helpers.js";

describe("dieWithParent", () => {
  const where = { cwd: "/", path: process.env.PATH ?? "" };

  it("wraps a command that exists in setpriv with a parent-death SIGKILL, keeping its argv", () => {
    expect(dieWithParent([process.execPath, "-e", "0"], where)).toEqual([
      SETPRIV,
      "--pdeathsig",
      "KILL",
      "--",
      process.execPath,
      "-e",
      "0",
    ]);
    expect(dieWithParent(["sh", "-c", "true"], where)).toEqual([
      SETPRIV,
      "--pdeathsig",
      "KILL",
      "--",
      "sh",
      "-c",
      "true",
    ]);
  });

  it("leaves a command it cannot find as it is, so that spawning it still reports it missing", () => {
    expect(dieWithParent(["/nonexistent/sprite-binary"], where)).toEqual(["/nonexistent/sprite-binary"]);
    expect(dieWithParent(["no-such-command-anywhere"], where)).toEqual(["no-such-command-anywhere"]);
    expect(dieWithParent([], where)).toEqual([]);
  });

  it("leaves the command as it is where setpriv is missing", () => {
    expect(dieWithParent(["sh"], where, "/nonexistent/setpriv")).toEqual(["sh"]);
  });

  /** A parent process that spawns `argv` in its own group (as the supervisor does) and prints its pid. */
  async function orphanOf(argv: string[]): Promise<number> {
    const script = `const c = require("node:child_process").spawn(${JSON.stringify(argv[0])}, ${JSON.stringify(argv.slice(1))}, { detached: true, stdio: "ignore" }); console.log(c.pid); setInterval(() => {}, 1000);`;
    const parent = spawn(process.execPath, ["-e", script], { stdio: ["ignore", "pipe", "inherit"] });
    const pid = await new Promise<number>((r) =>
      parent.stdout.once("data", (d: Buffer) => r(Number(String(d).trim()))),
    );
    parent.kill("SIGKILL");
    await new Promise((r) => parent.once("exit", r));
    return pid;
  }

  it("makes the wrapped process die with its parent; unwrapped, it runs on", { timeout: 30_000 }, async () => {
    const wrapped = await orphanOf(dieWithParent(["sleep", "60"], where));
    await waitForDeath(wrapped);
    const bare = await orphanOf(["sleep", "60"]);
    try {
      expect(processAlive(bare)).toBe(true);
    } finally {
      process.kill(bare, "SIGKILL");
    }
  });
});

describe("findExecutable", () => {
  it("resolves along PATH, relative to cwd, and refuses directories and files that are not executable", () => {
    const dir = mkdtempSync(join(tmpdir(), "pmagent-proc-"));
    try {
      writeFileSync(join(dir, "tool"), "#!/bin/sh\n", { mode: 0o755 });
      writeFileSync(join(dir, "data"), "x", { mode: 0o644 });
      expect(findExecutable("tool", `/nonexistent:${dir}`, { cwd: "/" })).toBe(join(dir, "tool"));
      expect(findExecutable("./tool", "", { cwd: dir })).toBe(join(dir, "tool"));
      expect(findExecutable("data", dir, { cwd: "/" })).toBeUndefined();
      expect(findExecutable(dir, "", { cwd: "/" })).toBeUndefined();
      expect(findExecutable("tool", "", { cwd: "/" })).toBeUndefined();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("processesOfRun", () => {
  it("lists the processes naming the run, which lead their group, never the process asking nor another run's", async () => {
    const runId = `run_test_${process.pid}`;
    // The process asking names the run (a \`pmagent\` started inside a sprite would), as do its
    // children, one of them a group leader; another child names another run.
    const script = `
      const { spawn } = await import("node:child_process");
      const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore", detached: true });
      const grandchild = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" });
      const other = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore", env: { ...process.env, LATTICE_RUN_ID: "${runId}x" } });
      const { processesOfRun } = await import(${JSON.stringify(join(DIST, "lattice", "sandbox", "index.js"))});
      const found = processesOfRun(${JSON.stringify(runId)});
      console.log(JSON.stringify({ self: process.pid, child: child.pid, grandchild: grandchild.pid, found }));
      for (const p of [child, grandchild, other]) p.kill("SIGKILL");
    `;
    const out = await new Promise<string>((resolve, reject) => {
      const p = spawn(process.execPath, ["--input-type=module", "-e", `(async () => {${script}})()`], {
        detached: true,
        env: { ...process.env, LATTICE_RUN_ID: runId },
        stdio: ["ignore", "pipe", "inherit"],
      });
      let text = "";
      p.stdout.on("data", (d: Buffer) => (text += d.toString()));
      p.once("error", reject);
      p.once("exit", () => resolve(text));
    });
    const { self, child, grandchild, found } = JSON.parse(out) as Record<string, unknown>;
    expect(found).toEqual(
      [
        { pid: child, leader: true },
        { pid: grandchild, leader: false },
      ].sort((a, b) => (a.pid as number) - (b.pid as number)),
    );
    expect(found).not.toContainEqual(expect.objectContaining({ pid: self }));
  });
});
