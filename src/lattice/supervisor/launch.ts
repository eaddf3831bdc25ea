/**
 * Launching one attempt of a run: the workspace prepared (a shared clone, entry.json), the
 * environment adjustments and preinstall steps, the sandbox, the sprite spawned in its own
 * process group with its output going to files, then followed and settled.
 */
import { execFile, spawn } from "node:child_process";
import { closeSync, existsSync, mkdirSync, openSync } from "node:fs";
import { join } from "node:path";
import type { Entry } from "../../blackboard/index.js";
import { PmagentError, writeFileAtomic, type Redactor } from "../../core/index.js";
import { agentStdin } from "../agents/index.js";
import { latticeDir, outboxPath, resumePath } from "../protocol/index.js";
import { UNFINISHED_RUN_STATES, type RunRecord } from "../runs/index.js";
import {
  checkExtraEnv,
  dieWithParent,
  findExecutable,
  prepareRunDir,
  processStartTime,
  runSandbox,
  sandboxArgv,
  selfCommand,
  spriteEnv,
} from "../sandbox/index.js";
import {
  role as roleOf,
  sandboxTool,
  streamFiles,
  track,
  type ActiveRun,
  type Exit,
  type SupervisorContext,
} from "./context.js";
import { cycleEnv, startOnCycle } from "./cycle.js";
import { syncEntry } from "./entry-sync.js";
import { follow } from "./follow.js";
import { NO_ADJUSTMENTS, type EnvironmentAdjustments } from "./hooks.js";
import { stopSprite } from "./processes.js";
import { runRedactor, secrets } from "./redaction.js";
import { settle } from "./settle.js";
import { DEFAULT_IDLE_TIMEOUT_S, idleReason } from "./watchdog.js";

export interface LaunchOptions {
  fresh: boolean;
  entry: Entry | null;
  timeoutS?: number;
  userWorkspace?: boolean;
}

/** Prepare and spawn one attempt of a run, then supervise it; resolves once the run is settled. */
export async function launch(ctx: SupervisorContext, run: RunRecord, opts: LaunchOptions): Promise<void> {
  const active = track(ctx, run.id);
  try {
    const role = roleOf(ctx, run.role);
    if (opts.fresh) await prepareWorkspace(ctx, run, opts.entry, opts.userWorkspace === true);
    // A fresh clone starts on its lane cycle's branch; a resumed run is on it already.
    const cycle =
      opts.fresh && opts.userWorkspace !== true && existsSync(join(run.workspace, ".git"))
        ? await startOnCycle(ctx, run, opts.entry)
        : run.cycle;
    const runnerEnv = role.runner?.env ?? {};
    checkExtraEnv(runnerEnv, `lanes[].roles[${role.name}].runner.env`);
    const adj = await adjustments(ctx, run, opts.entry);
    const bwrap = sandboxTool(ctx);
    const pmagentCommand = ctx.options.pmagentCommand ?? selfCommand();
    const dirs = prepareRunDir(run.run_dir, pmagentCommand, ctx.env.PATH ?? "", { sandboxed: bwrap !== null });
    mkdirSync(run.checkpoint_dir, { recursive: true });
    const lattice: Record<string, string> = {
      // The spec's /workspace paths, where the workspace really is (they hold in the sandbox too).
      LATTICE_WORKSPACE: run.workspace,
      LATTICE_OUTBOX: outboxPath(run.workspace),
      LATTICE_RESUME_FILE: resumePath(run.workspace),
      LATTICE_SPRITE_ID: run.sprite_id,
      LATTICE_WORK_ITEM_ID: run.work_item_id,
      LATTICE_CHECKPOINT_DIR: run.checkpoint_dir,
      LATTICE_RUN_ID: run.id,
      LATTICE_ROLE: run.role,
      ...cycleEnv(cycle),
      ...(role.on_outcome ? { PMAGENT_OUTCOMES: Object.keys(role.on_outcome).join(",") } : {}),
    };
    if (run.entry_id) lattice.PMAGENT_ENTRY_FILE = join(latticeDir(run.workspace), "entry.json");
    if (run.gate?.decision === "CONDITIONAL") lattice.LATTICE_RUN_CONDITIONS = JSON.stringify(run.gate.conditions);
    // The sandbox's network rule for this run (it holds where LATTICE_SANDBOX=bwrap).
    const network = adj.network ?? ctx.options.project.config.sandbox_network;
    lattice.PMAGENT_SANDBOX_NETWORK = network;
    const env = spriteEnv({
      base: ctx.env,
      shimDir: dirs.shimDir,
      toolDir: dirs.toolDir,
      home: dirs.home,
      lattice,
      extra: { ...runnerEnv, ...adj.env },
      pathFirst: adj.path,
    });
    const storeFile = ctx.store.dialect === "sqlite" ? ctx.store.location : null;
    const spec = bwrap
      ? runSandbox({
          bwrap,
          project: ctx.options.project,
          storeFile,
          workspace: run.workspace,
          checkpointDir: run.checkpoint_dir,
          dirs,
          pmagentCommand,
          command: run.command,
          home: ctx.env.HOME,
          entryPayload: opts.entry?.payload,
          path: env.PATH,
          network,
        })
      : null;
    // Sandboxed, the supervisor's TMPDIR is not there; the workspace is also at /workspace.
    if (spec) Object.assign(env, { TMPDIR: "/tmp", LATTICE_SANDBOX: "bwrap" });
    const wrap = (argv: string[]) => (spec ? sandboxArgv(argv, spec) : argv);
    const files = streamFiles(run);
    for (const step of adj.preinstall) {
      const code = await runStep(wrap(["sh", "-c", step]), run.workspace, env, files.stderr);
      if (code !== 0)
        throw new PmagentError(
          "preinstall_failed",
          `preinstall step \`${step}\` exited with ${code}; the sprite was not started`,
        );
    }
    if (spec && !findExecutable(run.command[0]!, env.PATH ?? "", { cwd: run.workspace }))
      throw new PmagentError("sprite_not_found", `cannot start ${run.command[0]}: command not found`);
    const timeoutS = opts.timeoutS ?? role.runner?.timeout_s ?? 3600;
    const idleS = role.runner?.idle_timeout_s ?? DEFAULT_IDLE_TIMEOUT_S;
    // Before the sprite starts: a run whose output could not be redacted never starts.
    const redactor = runRedactor(ctx, run);
    // An agent run gets its model key on stdin (never in its argv, environment or a file).
    const stdin = agentStdin(run.command, role, (name) => secrets(ctx).get(name));
    return await spawnAndSupervise(ctx, run, active, {
      argv: wrap(run.command),
      env,
      files,
      timeoutS,
      idleS,
      redactor,
      stdin,
    });
  } catch (err) {
    // Once the sprite runs, a failure is in supervising it (storing its output), not in starting it.
    const stage = active.child ? "supervising the sprite failed" : "cannot start the sprite";
    const reason = err instanceof PmagentError ? err.message : `${stage}: ${(err as Error).message}`;
    await ctx.runs.update(
      run.id,
      { state: "failed", reason: ctx.redactor.redact(reason), finished: true },
      UNFINISHED_RUN_STATES,
    );
    await syncEntry(ctx, await ctx.runs.get(run.id));
  } finally {
    active.attempt = null;
    active.child = null;
  }
}

async function prepareWorkspace(
  ctx: SupervisorContext,
  run: RunRecord,
  entry: Entry | null,
  userWorkspace: boolean,
): Promise<void> {
  const root = ctx.options.project.root;
  if (!existsSync(run.workspace) && !userWorkspace && existsSync(join(root, ".git"))) {
    // A cheap clone of the project repository (objects shared): the sprite works on a copy.
    mkdirSync(join(run.workspace, ".."), { recursive: true });
    // Not spawnSync: a worker with several runs at once keeps following the others meanwhile.
    const r = await runGit(["clone", "--quiet", "--shared", root, run.workspace], root, ctx.env);
    if (r !== null)
      throw new PmagentError(
        "workspace_failed",
        `cannot clone ${root} into the run's workspace ${run.workspace}: ${r}`,
        { kind: "unavailable" },
      );
  }
  mkdirSync(latticeDir(run.workspace), { recursive: true });
  if (entry) writeFileAtomic(join(latticeDir(run.workspace), "entry.json"), `${JSON.stringify(entry, null, 2)}\n`);
}

async function adjustments(
  ctx: SupervisorContext,
  run: RunRecord,
  entry: Entry | null,
): Promise<EnvironmentAdjustments> {
  const provider = ctx.options.hooks?.environment;
  if (!provider) return NO_ADJUSTMENTS;
  const adj = await provider.adjustmentsFor(run.role, { entry, runId: run.id });
  const result = {
    preinstall: adj.preinstall ?? [],
    env: adj.env ?? {},
    path: adj.path ?? [],
    ...(adj.network ? { network: adj.network } : {}),
  };
  checkExtraEnv(result.env, `accepted environment adjustments for ${run.role}`);
  return result;
}

/** How a run's sprite is started and watched: its command line, environment, output files and limits. */
interface SpawnSpec {
  argv: string[];
  env: Record<string, string>;
  files: { stdout: string; stderr: string };
  timeoutS: number;
  idleS: number;
  /** Redacts what the sprite writes before it is stored. */
  redactor: Redactor;
  /** Written to the sprite's stdin (an agent's model key), or null for none. */
  stdin: string | null;
}

async function spawnAndSupervise(
  ctx: SupervisorContext,
  run: RunRecord,
  active: ActiveRun,
  spec: SpawnSpec,
): Promise<void> {
  const { argv, env, files, timeoutS, idleS, redactor, stdin } = spec;
  const out = openSync(files.stdout, "a", 0o600);
  const err = openSync(files.stderr, "a", 0o600);
  let child;
  try {
    // Own process group: a cancel or timeout stops the sprite and everything it started. A
    // worker's sprite also gets a parent-death signal: it dies with its worker instead of running
    // on beside the sprite of the worker that takes the entry over. (A `pmagent run` sprite
    // outlives its supervisor: a restarted supervisor re-attaches to it.)
    const launched = run.worker ? dieWithParent(argv, { cwd: run.workspace, path: env.PATH ?? "" }) : argv;
    child = spawn(launched[0]!, launched.slice(1), {
      cwd: run.workspace,
      env,
      stdio: [stdin === null ? "ignore" : "pipe", out, err],
      detached: true,
    });
  } finally {
    closeSync(out);
    closeSync(err);
  }
  if (stdin !== null) {
    child.stdin?.on("error", () => undefined);
    child.stdin?.end(stdin);
  }
  const exited = new Promise<Exit>((resolveExit) => {
    child.once("error", (e) =>
      resolveExit({
        code: null,
        signal: null,
        error: `cannot start ${run.command[0]}: ${(e as NodeJS.ErrnoException).code === "ENOENT" ? "command not found" : e.message}`,
      }),
    );
    child.once("exit", (code, signal) => resolveExit({ code, signal }));
  });
  const pid = child.pid;
  if (pid !== undefined) {
    active.child = { pid };
    await ctx.runs.update(
      run.id,
      { state: "running", sprite_pid: pid, sprite_started: processStartTime(pid), supervisor_pid: process.pid },
      ["starting"],
    );
  }
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    if (pid !== undefined) void stopSprite(pid, run.id);
  }, timeoutS * 1000);
  let idled = false;
  const idle =
    idleS > 0 && pid !== undefined
      ? { ms: idleS * 1000, onIdle: () => ((idled = true), void stopSprite(pid, run.id)) }
      : undefined;
  try {
    const exit = await follow(ctx, await ctx.runs.get(run.id), exited, redactor, idle);
    if (exit === null) return; // left for reconcile
    if (timedOut) exit.error = `timed out after ${timeoutS} s (runner.timeout_s); the sprite was stopped`;
    else if (idled) exit.error = await idleReason(ctx, run, idleS);
    await settle(ctx, run.id, exit);
  } finally {
    clearTimeout(timer);
  }
}

function runStep(argv: string[], cwd: string, env: Record<string, string>, logFile: string): Promise<number> {
  const fd = openSync(logFile, "a", 0o600);
  try {
    const child = spawn(argv[0]!, argv.slice(1), { cwd, env, stdio: ["ignore", fd, fd] });
    return new Promise((done) => {
      child.once("error", () => done(127));
      child.once("exit", (code) => done(code ?? 1));
    });
  } finally {
    closeSync(fd);
  }
}

function runGit(args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<string | null> {
  return new Promise((resolve) => {
    execFile("git", args, { cwd, env, encoding: "utf8" }, (err, _stdout, stderr) => {
      if (!err) return resolve(null);
      resolve(typeof err.code === "number" ? (stderr || `git exited with ${err.code}`).trim() : err.message);
    });
  });
}
