import { execFileSync, spawn } from "node:child_process";
import { open } from "node:fs/promises";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { followRunLogs, type Supervisor } from "../../src/lattice/index.js";
import { CLI, runCli } from "../helpers/proc.js";
import { availableStoreKinds } from "../helpers/stores.js";
import { useSupervisorFixture } from "../helpers/supervisor-fixture.js";

const kinds = await availableStoreKinds();

/** A `pmagent` child whose output is read as it comes; `until(text)` resolves once stdout holds it. */
function follower(args: string[], cwd: string, env: NodeJS.ProcessEnv) {
  const child = spawn(process.execPath, [CLI, ...args], { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  const waiting: Array<{ text: string; resolve: () => void }> = [];
  child.stdout.on("data", (d: Buffer) => {
    stdout += d.toString();
    for (const w of waiting.filter((x) => stdout.includes(x.text))) w.resolve();
  });
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on("close", resolve));
  return {
    until: (text: string) =>
      stdout.includes(text) ? Promise.resolve() : new Promise<void>((resolve) => waiting.push({ text, resolve })),
    exited,
    out: () => stdout,
    err: () => stderr,
  };
}

describe.each(kinds)("runs logs/events --follow on $name", (kind) => {
  let sup: Supervisor;
  let env: NodeJS.ProcessEnv;
  let gate: string;

  const fx = useSupervisorFixture(kind);
  beforeEach(async () => {
    sup = fx.tp.supervisor();
    env = { ...process.env, ...fx.ts.env };
    // The sprite stops at a FIFO until the test opens it: the follower must show what came before, live.
    gate = join(fx.tp.root, "gate.fifo");
    execFileSync("mkfifo", [gate]);
  });

  /** Start a run that logs and emits, waits at the gate, then logs and emits again and completes; its id once recorded. */
  async function gatedRun(): Promise<{ id: string; finished: Promise<unknown> }> {
    let started!: (id: string) => void;
    const id = new Promise<string>((resolve) => (started = resolve));
    const command = fx.tp.sprite("gated", {
      steps: [
        { log: "before the gate" },
        { stderr: "a warning" },
        { emit: "INFO", payload: { message: "first event" } },
        { sh: `read line < ${gate}` },
        { log: "after the gate" },
        { emit: "INFO", payload: { message: "second event" } },
        { emit: "COMPLETED", payload: { status: "success" } },
      ],
    });
    const finished = sup.startRun({ role: "Builder", command, onStarted: started });
    return { id: await id, finished };
  }

  // Opened off the event loop: the FIFO's open waits for the sprite to read it, and the supervisor
  // that starts the sprite runs on this event loop.
  const openGate = async () => {
    const fh = await open(gate, "w");
    await fh.write("go\n");
    await fh.close();
  };

  it("prints the log as it is stored while the sprite runs, then the rest, and exits when the run ends", async () => {
    const run = await gatedRun();
    const logs = follower(["runs", "logs", run.id, "--follow"], fx.tp.root, env);
    const events = follower(["runs", "events", run.id, "--follow"], fx.tp.root, env);
    // Shown while the sprite still waits at the gate: stored as it came, not when the run ended.
    await logs.until("before the gate");
    await events.until("first event");
    expect(logs.out()).not.toContain("after the gate");
    expect((await sup.runs.get(run.id)).state).toBe("running");
    await openGate();
    await run.finished;
    expect(await logs.exited).toBe(0);
    expect(await events.exited).toBe(0);
    expect(logs.out()).toBe("before the gate\n[stderr] a warning\nafter the gate\n");
    expect(events.out()).toMatch(/1 {2}INFO +first event[^\n]*\n +2 {2}INFO +second event[^\n]*\n +3 {2}COMPLETED/);
    expect(logs.err() + events.err()).toBe("");
  });

  it("json: one object a line; a finished run prints everything and exits at once", async () => {
    const run = await gatedRun();
    await openGate();
    await run.finished;
    const r = await runCli(["runs", "logs", run.id, "--follow", "--format", "json", "--stream", "stdout"], {
      cwd: fx.tp.root,
      env,
    });
    expect(r.code, r.stderr).toBe(0);
    expect(
      r.stdout
        .trim()
        .split("\n")
        .map((l) => (JSON.parse(l) as { text: string }).text),
    ).toEqual(["before the gate", "after the gate"]);
    const e = await runCli(["runs", "events", run.id, "--follow", "--type", "COMPLETED"], { cwd: fx.tp.root, env });
    expect(e.stdout).toMatch(/^ +3 {2}COMPLETED/);
  });

  it("follows in process too, woken by the store's notifications", async () => {
    const run = await gatedRun();
    const seen: string[] = [];
    let first!: () => void;
    const firstSeen = new Promise<void>((resolve) => (first = resolve));
    const done = (async () => {
      // A long poll: only a notification wakes this follower in time.
      for await (const batch of followRunLogs(sup.runs, run.id, { pollMs: 60_000 })) {
        seen.push(...batch.map((l) => l.text));
        if (seen.includes("before the gate")) first();
      }
    })();
    await firstSeen;
    await openGate();
    await run.finished;
    await done;
    expect(seen).toEqual(["before the gate", "a warning", "after the gate"]);
  });

  it("refuses an unknown run and paging flags with --follow", async () => {
    for (const sub of ["logs", "events"]) {
      const r = await runCli(["runs", sub, "nope", "--follow"], { cwd: fx.tp.root, env });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain("run nope does not exist in project demo");
    }
    const cursor = await runCli(["runs", "events", "nope", "--follow", "--cursor", "x"], { cwd: fx.tp.root, env });
    expect(cursor.code).toBe(2);
    expect(cursor.stderr).toContain("--follow reads from the start: it takes no --cursor");
    const newest = await runCli(["runs", "events", "nope", "--follow", "--order", "newest"], { cwd: fx.tp.root, env });
    expect(newest.stderr).toContain("--follow reads oldest first: it takes no --order newest");
    const limit = await runCli(["runs", "events", "nope", "--follow", "--limit", "3"], { cwd: fx.tp.root, env });
    expect(limit.stderr).toContain("--follow prints every event: it takes no --limit");
  });
});
