/**
 * A sprite that swaps its outbox for a FIFO once hung `pmagent worker` for good: the synchronous
 * open of the FIFO blocked the whole process, SIGTERM handler included. Now the outbox is refused
 * as a protocol error and the worker still stops on SIGTERM.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CLI, runCli } from "../helpers/proc.js";
import { openSqliteTestStore, type TestStore } from "../helpers/stores.js";
import { DIST, SCENARIO_SPRITE } from "../lattice/helpers.js";

describe("pmagent worker with an outbox swapped for a FIFO", () => {
  let ts: TestStore;
  let root: string;
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    ts = await openSqliteTestStore();
    root = mkdtempSync(join(tmpdir(), "pmagent-cli-fifo-"));
    env = { ...process.env, ...ts.env };
  });
  afterAll(async () => {
    // A worker that did not stop leaves its sprite (a group of its own) asleep: stop it (also after a timeout).
    const pid = (await ts.store.get<{ sprite_pid: number | null }>("SELECT sprite_pid FROM lattice_runs"))?.sprite_pid;
    if (pid) {
      try {
        process.kill(-Number(pid), "SIGKILL");
      } catch {
        // already gone
      }
    }
    await ts.cleanup();
    rmSync(root, { recursive: true, force: true });
  });

  it("records the refused outbox and exits on SIGTERM", { timeout: 60_000 }, async () => {
    const scenario = join(root, "fifo.json");
    writeFileSync(
      scenario,
      JSON.stringify({
        steps: [{ sh: "rm -f .lattice/outbox.jsonl && mkfifo .lattice/outbox.jsonl" }, { sleep: 600_000 }],
      }),
    );
    const command = [process.execPath, SCENARIO_SPRITE, DIST, scenario];
    const config = {
      project_id: "cli",
      lanes: [
        { layer: "t", name: "l", roles: [{ name: "Builder", allowed_kinds: ["build_request"], runner: { command } }] },
      ],
    };
    writeFileSync(join(root, "pmagent.config.json"), JSON.stringify(config));
    expect(
      (
        await runCli(["bb", "post", "-"], {
          cwd: root,
          env,
          input: JSON.stringify({ id: "job-1", to: "Builder", kind: "build_request" }),
        })
      ).code,
    ).toBe(0);

    const worker = spawn(process.execPath, [CLI, "worker", "--role", "Builder", "--poll-ms", "20"], {
      cwd: root,
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    worker.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      worker.on("exit", (code, signal) => resolve({ code, signal })),
    );
    try {
      // The worker has read the outbox (and refused it) once the protocol error is stored.
      let reason: string | undefined;
      while (reason === undefined && worker.exitCode === null) {
        reason = (
          await ts.store.get<{ reason: string }>("SELECT reason FROM lattice_protocol_errors WHERE source = 'outbox'")
        )?.reason;
        if (reason === undefined) await new Promise((r) => setTimeout(r, 50));
      }
      expect(reason).toMatch(
        /^outbox unreadable, no longer read for this run: the outbox .*outbox\.jsonl is a FIFO, not a regular file/,
      );
      worker.kill("SIGTERM");
      expect(await exited).toEqual({ code: 0, signal: null });
      // Only the worker's progress lines: no error, no stack trace.
      const lines = stderr.trimEnd().split("\n");
      for (const line of lines) expect(line).toMatch(/^\d\d:\d\d:\d\d (worker|claimed|running|stopped) /);
      expect(lines.at(-1)).toMatch(/ stopped \(SIGTERM\): 1 run \(1 canceled\)$/);
      const run = await ts.store.get<{ state: string }>("SELECT state FROM lattice_runs");
      expect(run?.state).toBe("canceled");
    } finally {
      if (worker.exitCode === null) worker.kill("SIGKILL");
    }
  });
});
