/**
 * Crash harness: run `pmagent run` in its own process, SIGKILL it at a chosen moment, restart
 * (`pmagent runs reconcile`), and compare what the store holds with what the sprite's outbox holds.
 * Reusable: `crashTrial` returns the runs and their stored events for further checks (e.g. that no
 * action was carried out twice).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, watch, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { readOutbox, type RunRecord, type StoredEvent } from "../../src/lattice/index.js";
import type { Store } from "../../src/store/index.js";
import { CLI } from "../helpers/proc.js";
import { parseConfig } from "../../src/config/index.js";
import type { TestStore } from "../helpers/stores.js";
import type { TestProject } from "./helpers.js";
import { RunStore, type Supervisor } from "../../src/lattice/index.js";
import { processAlive } from "../../src/lattice/sandbox/processes.js";

export interface CrashTrialOptions {
  /** The project root (holds pmagent.config.json). */
  root: string;
  projectId: string;
  store: Store;
  /** Environment selecting the store for child pmagent processes (TestStore.env). */
  storeEnv: Record<string, string>;
  /** A fresh supervisor on the same project and store, with whatever hooks the test checks. */
  restart: () => Supervisor;
  role: string;
  entryId?: string;
  /** The sprite's argv. */
  command: string[];
  /**
   * When to SIGKILL the supervisor: a time after it was spawned, or once the sprite's outbox has
   * this many lines (plus a jitter), which keeps the kill point meaningful on a loaded machine,
   * or once `when` resolves (an event the test waits for: a request received, a state stored).
   */
  kill: { afterMs: number } | { afterOutboxLines: number; jitterMs: number } | { when: () => Promise<void> };
}

export interface CrashTrialResult {
  /** Runs recorded during the trial (zero when the kill came before the run was recorded). */
  runs: RunRecord[];
  /** Per run: the ids in its outbox (in order) and the events stored. */
  outbox: Map<string, string[]>;
  stored: Map<string, StoredEvent[]>;
  /** What the restart settled, for failure messages. */
  restart: string;
}

function outboxLines(workspace: string): number {
  try {
    return readFileSync(join(workspace, ".lattice", "outbox.jsonl"), "utf8").split("\n").length - 1;
  } catch {
    return 0;
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Resolves once the outbox of a run started after this call has `lines` lines: the project's
 * workspaces are watched (each run's workspace is named after it), so the wait follows the
 * sprite's writes instead of querying the store every few milliseconds.
 */
export function outboxReaches(root: string, lines: number): { reached: Promise<void>; close: () => void } {
  const workspaces = join(root, ".pmagent", "workspaces");
  mkdirSync(workspaces, { recursive: true });
  const before = new Set(readdirSync(workspaces));
  let close = () => {};
  const reached = new Promise<void>((resolve) => {
    const watcher = watch(workspaces, { recursive: true }, () => check());
    // Node's recursive watch on Linux attaches to a new directory after it is created: a file made
    // in it at once (a run's outbox) can go unseen, and a sprite that writes once and then waits
    // sends no later event. A slow look catches that one.
    const missed = setInterval(() => check(), 200);
    close = () => {
      watcher.close();
      clearInterval(missed);
    };
    const check = () => {
      const fresh = readdirSync(workspaces).filter((d) => !before.has(d));
      if (fresh.some((d) => outboxLines(join(workspaces, d)) >= lines)) {
        close();
        resolve();
      }
    };
    check();
  });
  return { reached, close };
}

export async function crashTrial(o: CrashTrialOptions): Promise<CrashTrialResult> {
  const runs = new RunStore(o.store, o.projectId);
  const before = new Set((await runs.list()).map((r) => r.id));
  // Watching starts before the spawn, so the run's workspace is seen however fast it appears.
  const watchOutbox = "afterOutboxLines" in o.kill ? outboxReaches(o.root, o.kill.afterOutboxLines) : null;
  const args = [CLI, "run", "--role", o.role, ...(o.entryId ? ["--entry", o.entryId] : []), "--", ...o.command];
  const child = spawn(process.execPath, args, { cwd: o.root, env: { ...process.env, ...o.storeEnv }, stdio: "ignore" });
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  if ("afterMs" in o.kill) await Promise.race([sleep(o.kill.afterMs), exited]);
  else if ("when" in o.kill) await Promise.race([o.kill.when(), exited]);
  else {
    await Promise.race([watchOutbox!.reached, exited]);
    watchOutbox!.close();
    await Promise.race([sleep(o.kill.jitterMs), exited]);
  }
  child.kill("SIGKILL");
  await exited;
  // The restart: a new supervisor (this process) reconciles the dead one's runs.
  const settled = await o.restart().reconcile();
  const restart = settled.map((r) => `${r.id} ${r.state}${r.reason ? ` (${r.reason})` : ""}`).join("; ");
  const mine = (await runs.list()).filter((r) => !before.has(r.id));
  return { ...(await outboxAndStored(runs, mine)), restart };
}

/** The runs, what each one's outbox holds and what the store holds of it (what lostOrDoubled compares). */
export async function outboxAndStored(runs: RunStore, mine: RunRecord[]): Promise<Omit<CrashTrialResult, "restart">> {
  const outbox = new Map<string, string[]>();
  const stored = new Map<string, StoredEvent[]>();
  for (const run of mine) {
    const read = readOutbox(join(run.workspace, ".lattice", "outbox.jsonl"));
    outbox.set(
      run.id,
      read.items.filter((i) => i.kind === "event").map((i) => (i as { id: string }).id),
    );
    stored.set(run.id, await runs.events(run.id));
  }
  return { runs: mine, outbox, stored };
}

/** Problems found: an outbox event not stored, an event stored twice, or stored out of outbox order. */
export function lostOrDoubled(result: CrashTrialResult): string[] {
  const problems: string[] = [];
  for (const run of result.runs) {
    const outbox = result.outbox.get(run.id) ?? [];
    const ids = (result.stored.get(run.id) ?? []).map((e) => e.id);
    const storedSet = new Set(ids);
    if (storedSet.size !== ids.length)
      problems.push(`run ${run.id}: ${ids.length - storedSet.size} events stored twice`);
    const missing = outbox.filter((id) => !storedSet.has(id));
    if (missing.length) problems.push(`run ${run.id}: ${missing.length} outbox events not stored (state ${run.state})`);
    const inOutbox = ids.filter((id) => outbox.includes(id));
    if (inOutbox.join() !== [...new Set(outbox)].join())
      problems.push(`run ${run.id}: stored order differs from outbox order`);
    if (!["succeeded", "failed", "waiting", "canceled"].includes(run.state))
      problems.push(`run ${run.id}: still ${run.state} after the restart`);
  }
  return problems;
}

/** Resolve once `path` exists (watching its directory), or reject after `timeoutMs` naming it. */
export function waitForFile(path: string, timeoutMs = 30_000): Promise<void> {
  return new Promise((resolve, reject) => {
    const dir = dirname(path);
    mkdirSync(dir, { recursive: true });
    const done = (err?: Error) => {
      clearTimeout(timer);
      watcher.close();
      if (err) reject(err);
      else resolve();
    };
    const watcher = watch(dir, () => {
      if (existsSync(path)) done();
    });
    const timer = setTimeout(() => done(new Error(`${path} did not appear within ${timeoutMs} ms`)), timeoutMs);
    if (existsSync(path)) done();
  });
}

/**
 * Resolve once process `pid` is gone, or reject after `timeoutMs`. A process that is not our
 * child has no exit event to wait on: its liveness is checked every few milliseconds.
 */
export function waitForDeath(pid: number, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    const check = () => {
      if (!processAlive(pid)) resolve();
      else if (Date.now() > deadline) reject(new Error(`process ${pid} still runs ${timeoutMs} ms later`));
      else setTimeout(check, 10);
    };
    check();
  });
}

/** A `pmagent worker` process for `role` in `root`; `output` collects its stdout. */
export function startWorker(
  root: string,
  storeEnv: Record<string, string>,
  args: string[],
): { child: ChildProcess; exited: Promise<void>; output: () => string } {
  const child = spawn(process.execPath, [CLI, "worker", ...args], {
    cwd: root,
    env: { ...process.env, ...storeEnv },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout!.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr!.resume();
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  return { child, exited, output: () => out };
}

/** The role's runner in the config file (what a `pmagent worker` process reads). */
export function setRunnerOnDisk(tp: TestProject, command: string[], sandbox?: "required" | "auto" | "off"): void {
  const cfg = JSON.parse(readFileSync(tp.project.configPath, "utf8")) as {
    lanes: Array<{ roles: Array<Record<string, unknown>> }>;
    sandbox?: string;
  };
  cfg.lanes[0]!.roles[0]!.runner = { command, env: {}, timeout_s: 300 };
  if (sandbox) cfg.sandbox = sandbox;
  const text = JSON.stringify(cfg, null, 2);
  writeFileSync(tp.project.configPath, text);
  tp.project.config = parseConfig(text, "pmagent.config.json");
}

/** Let the claim of `entryId` run out now (time passing, without waiting the lease out). */
export async function expireLease(ts: TestStore, entryId: string): Promise<void> {
  await ts.store.run("UPDATE bb_entries SET lease_expires_ms = ? WHERE project_id = 'demo' AND id = ?", [
    Date.now() - 1,
    entryId,
  ]);
}

/** A sprite that reports its pid to `pidFile`, then `busy` events and a marker file, then runs on. */
export function longSprite(pidFile: string, busy = 0, marker = `${pidFile}.busy`): unknown {
  const steps: unknown[] = [
    { emit: "PHASE_STARTED", payload: { phase: "work" } },
    { sh: `echo $PPID > ${pidFile}.tmp && mv ${pidFile}.tmp ${pidFile}` },
  ];
  for (let i = 0; i < busy; i++) steps.push({ emit: "INFO", payload: { message: `late ${i}` } });
  steps.push({ sh: `touch ${marker}` });
  for (let i = 0; i < 600; i++) steps.push({ emit: "INFO", payload: { message: `tick ${i}` } }, { sleep: 200 });
  return { steps };
}
