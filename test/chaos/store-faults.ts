/**
 * Set-up shared by the store-fault chaos tests: a sprite that writes its events in bulks, a small
 * disk of its own for a SQLite file (a tmpfs in a mount namespace that dies with this process),
 * and the check that a run's stored events are its outbox's, each once, with no hole below the
 * position the run saved.
 */
import { spawn, type ChildProcess, type SpawnOptions } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import type { RunRecord, RunStore } from "../../src/lattice/index.js";
import { CLI, runProcess, type ProcResult } from "../helpers/proc.js";
import { lostOrDoubled, outboxAndStored } from "../lattice/harness.js";

/** A sprite's last step (test/lattice/sprites/scenario.mjs). */
export const COMPLETED_STEP = { emit: "COMPLETED", payload: { status: "success", summary: "all written" } };

/** A sprite's steps: `rounds` bulks of `size` INFO events (with the step `between` between two), then COMPLETED. */
export function bulkSteps(rounds: number, size: number, between?: unknown): unknown[] {
  const steps: unknown[] = [];
  for (let i = 0; i < rounds; i++) steps.push({ bulk: size }, ...(between && i < rounds - 1 ? [between] : []));
  steps.push(COMPLETED_STEP);
  return steps;
}

/**
 * What is wrong with a run's stored events against its outbox: a hole below the outbox position
 * the run saved (its reader would never come back for it), and once it is finished any outbox
 * event lost or doubled.
 */
export async function eventProblems(runs: RunStore, run: RunRecord): Promise<string[]> {
  const found = await outboxAndStored(runs, [run]);
  const stored = new Set(found.stored.get(run.id)!.map((e) => e.id));
  const hole = found.outbox
    .get(run.id)!
    .slice(0, run.outbox.line_no - 1)
    .filter((id) => !stored.has(id)).length;
  const problems =
    hole > 0
      ? [`run ${run.id}: ${hole} outbox events before its saved position (line ${run.outbox.line_no}) are not stored`]
      : [];
  if (run.state !== "running" && run.state !== "starting") problems.push(...lostOrDoubled({ ...found, restart: "" }));
  return problems;
}

/** A process under way: its result once it ends, and its standard error as it comes. */
export interface Started {
  done: Promise<ProcResult>;
  /** Resolves once its standard error holds `text` (rejects if it ends without, or after `timeoutMs`). */
  saysOnStderr(text: string, timeoutMs?: number): Promise<void>;
}

/** Start `command ARGS…`, collecting its output as it comes. */
export function start(command: string, args: string[], options: SpawnOptions = {}): Started {
  const child = spawn(command, args, { ...options, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  const waiting: Array<() => void> = [];
  child.stdout!.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on("data", (d: Buffer) => {
    stderr += d.toString();
    for (const check of waiting) check();
  });
  const done = new Promise<ProcResult>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
  return {
    done,
    saysOnStderr: (text, timeoutMs = 30_000) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(
          () =>
            reject(new Error(`${command} did not say "${text}" on stderr within ${timeoutMs} ms: ${stdout}${stderr}`)),
          timeoutMs,
        );
        const check = () => {
          if (!stderr.includes(text)) return;
          clearTimeout(timer);
          resolve();
        };
        waiting.push(check);
        check();
        void done.then((r) => {
          clearTimeout(timer);
          reject(new Error(`${command} ended (${r.code}) without saying "${text}" on stderr: ${r.stdout}${r.stderr}`));
        }, reject);
      }),
  };
}

export interface SmallDisk {
  /** The disk's directory, as processes run with `run` see it. */
  readonly dir: string;
  /**
   * A copy of the SQLite file `path` (under `dir`) and its write-ahead log where this process
   * reaches it, taken while no process writes it. (SQLite resolves the symbolic link that
   * /proc/PID/root is, so it cannot open the file in the namespace from here.)
   */
  copyOut(path: string): Promise<string>;
  /** Run `pmagent ARGS…` (the build) in the disk's mount namespace. */
  pmagent(args: string[], options: SpawnOptions): Started;
  /** The fault clears: the disk grows to `size` (e.g. "64m"). */
  grow(size: string): Promise<void>;
  close(): Promise<void>;
}

/**
 * A tmpfs of `size` (e.g. "1m") mounted on a new directory in a mount namespace of its own, held
 * by a process that waits on its stdin: when this process ends, however it ends, the holder reads
 * the end of its input and exits, and the mount goes with its namespace.
 */
export async function smallDisk(size: string): Promise<SmallDisk> {
  const dir = mkdtempSync(join(tmpdir(), "pmagent-small-disk-"));
  const holder: ChildProcess = spawn(
    "unshare",
    [
      "--mount",
      "--propagation",
      "private",
      "sh",
      "-c",
      'mount -t tmpfs -o size="$1" tmpfs "$2" && echo mounted && exec cat',
      "sh",
      size,
      dir,
    ],
    {
      stdio: ["pipe", "pipe", "pipe"],
    },
  );
  const exited = new Promise<void>((resolve) => holder.once("exit", () => resolve()));
  let err = "";
  holder.stderr!.on("data", (d: Buffer) => (err += d.toString()));
  await new Promise<void>((resolve, reject) => {
    holder.stdout!.once("data", () => resolve());
    void exited.then(() => reject(new Error(`cannot mount a ${size} tmpfs in a mount namespace: ${err.trim()}`)));
  });
  const pid = String(holder.pid);
  const copies: string[] = [];
  // Entering a mount namespace moves to its root: the working directory is given again.
  const nsenter = (argv: string[], options: SpawnOptions) => [
    "--target",
    pid,
    "--mount",
    ...(options.cwd ? [`--wd=${String(options.cwd)}`] : []),
    "--",
    ...argv,
  ];
  const inside = (argv: string[], options: SpawnOptions = {}) => runProcess("nsenter", nsenter(argv, options), options);
  return {
    dir,
    async copyOut(path) {
      const to = mkdtempSync(join(tmpdir(), "pmagent-small-disk-copy-"));
      copies.push(to);
      const r = await inside([
        "sh",
        "-c",
        'for f in "$1" "$1-wal"; do if [ -e "$f" ]; then cp "$f" "$2/" || exit 1; fi; done',
        "sh",
        path,
        to,
      ]);
      if (r.code !== 0) throw new Error(`cannot copy ${path} out of the small disk: ${r.stderr}`);
      return join(to, basename(path));
    },
    pmagent: (args, options) => start("nsenter", nsenter([process.execPath, CLI, ...args], options), options),
    async grow(to) {
      const r = await inside(["mount", "-o", `remount,size=${to}`, dir]);
      if (r.code !== 0) throw new Error(`cannot grow the tmpfs at ${dir}: ${r.stderr}`);
    },
    async close() {
      holder.stdin!.end();
      await exited;
      for (const d of [dir, ...copies]) rmSync(d, { recursive: true, force: true });
    },
  };
}
