/**
 * The Lattice supervisor: starts a sprite for a role in its workspace, stores what it reports,
 * maps its events onto the blackboard entry, hands actions and proposals to their sinks, resumes
 * waiting sprites, and reconciles unfinished runs after a crash.
 *
 * The sprite's stdout and stderr go to files in the run's directory (not pipes), so a sprite
 * outlives a supervisor crash without a broken pipe: a restarted supervisor re-attaches to a
 * sprite that is still alive by tailing those files and the outbox from the stored offsets until
 * the sprite exits, then settles the run from its events.
 */
import { spawn, spawnSync } from "node:child_process";
import { closeSync, existsSync, fstatSync, mkdirSync, openSync, readSync, rmSync, watch, type FSWatcher } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { Blackboard, isTerminal, type Entry, type StoredEntry } from "../../blackboard/index.js";
import { findRole, followUpId, type Project, type RoleConfig } from "../../config/index.js";
import {
  NotFoundError,
  PmagentError,
  RefusedError,
  Redactor,
  UnavailableError,
  UsageError,
  confinePath,
  contentHash,
  createLogger,
  secretsFromEnv,
  writeFileAtomic,
  type Logger,
} from "../../core/index.js";
import type { Store } from "../../store/index.js";
import { agentStdin, runnerArgv } from "../agents/index.js";
import { checkpointExists, restoreCheckpoint } from "../checkpoint/index.js";
import { artifactItems, errorEntry, followUpRefs } from "./follow-up.js";
import { NO_ADJUSTMENTS, type EnvironmentAdjustments, type SupervisorHooks } from "./hooks.js";
import { RunIngestor } from "../ingest/index.js";
import { assertInputs, latticeDir, outboxPath, removeResume, resumePath, assertRealDirectory, openRegularFile } from "../protocol/index.js";
import { dieWithParent, findExecutable, findSpriteOfRun, killGroup, processAlive, processStartTime, signalGroup, checkExtraEnv, findSandboxTool, prepareRunDir, runSandbox, sandboxArgv, selfCommand, spriteEnv } from "../sandbox/index.js";
import { SecretStore } from "../actions/index.js";
import { RunStore, UNFINISHED_RUN_STATES, isTerminalRunState, type GateDecision, type RunRecord, type RunState, type RunWaiting, type StoredEvent } from "../runs/index.js";

export const DEFAULT_POLL_MS = 100;
/** Event types the supervisor acts on when they are stored. */
const SIGNIFICANT = new Set(["PHASE_STARTED", "ACTION_REQUEST", "ENVIRONMENT_PROPOSAL"]);
/** A waiting run keeps its entry claimed this long: nobody takes over a sprite that waits for input. */
export const PARKED_LEASE_MS = 7 * 24 * 3600 * 1000;
const KILL_GRACE_MS = 3000;
const READ_CHUNK = 1024 * 1024;

export interface SupervisorOptions {
  store: Store;
  project: Project;
  hooks?: SupervisorHooks;
  /** The supervisor's environment: the allow-list reads from it, its secret values are redacted. */
  env?: NodeJS.ProcessEnv;
  redactor?: Redactor;
  /** How a sprite runs pmagent (`pmagent emit`, `pmagent checkpoint`); default: this process's CLI. */
  pmagentCommand?: string[];
  logCapBytes?: number;
  /** Outbox and output polling interval while a sprite runs. */
  pollMs?: number;
  leaseMs?: number;
  host?: string;
  clock?: () => number;
  logger?: Logger;
  /** Live view of newly stored events (console, SSE). */
  onEvents?: (run: RunRecord, events: StoredEvent[]) => void;
}

export interface StartRunOptions {
  role: string;
  entryId?: string;
  /** The sprite's argv; default: the role's configured runner command. */
  command?: string[];
  /** Relative to the project root; default `.pmagent/workspaces/<run id>`. */
  workspace?: string;
  /** The worker holding the entry's claim (heartbeats, refused transitions after a takeover). */
  worker?: string;
  /** A gate decision already made for this entry (the worker asks before claiming). */
  decided?: GateDecision;
  timeoutS?: number;
  /** Called with the run id as soon as the run is recorded. */
  onStarted?: (runId: string) => void;
}

export interface ResumeOptions {
  inputs: Record<string, unknown>;
  context?: Record<string, unknown>;
  /** Written into resume.json's `inputs` (mode 0600) but never stored in the database or logs. */
  secretInputs?: Record<string, string>;
  /** A blocking action failed: resume with the error in `context.error`, inputs unchecked. */
  failure?: { action: string; message: string };
}

export interface ResumeResult {
  run: RunRecord;
  /** True when this exact resume was done before: nothing happened. */
  noop: boolean;
  /** Settles when the relaunched sprite has finished (and its follow-ups are done). */
  finished: Promise<RunRecord>;
}

interface ActiveRun {
  /** The attempt running here; it settles once the run is settled (read the record with whenIdle). */
  attempt: Promise<void> | null;
  dispatches: Set<Promise<unknown>>;
  child: { pid: number } | null;
}

interface Exit {
  code: number | null;
  signal: string | null;
  error?: string;
}

const newRunId = () => `run_${new Date().toISOString().replace(/[-:.]/g, "").slice(0, 15)}_${randomBytes(4).toString("hex")}`;

export class Supervisor {
  readonly runs: RunStore;
  readonly board: Blackboard;
  readonly host: string;
  private readonly o: SupervisorOptions;
  private readonly env: NodeJS.ProcessEnv;
  private readonly redactor: Redactor;
  /** Secret inputs handed to a run by this process (any source, e.g. a library caller's resumeRun). */
  private readonly runSecrets = new Map<string, string[]>();
  private secretStore: SecretStore | undefined;
  private readonly active = new Map<string, ActiveRun>();
  private readonly log: Logger;
  private readonly pollMs: number;
  /** The bwrap binary sprites run in (null: unsandboxed), once known. */
  private bwrap: string | null | undefined;

  constructor(options: SupervisorOptions) {
    this.o = options;
    this.env = options.env ?? process.env;
    this.redactor = options.redactor ?? new Redactor(secretsFromEnv(this.env));
    this.host = options.host ?? hostname();
    this.pollMs = options.pollMs ?? DEFAULT_POLL_MS;
    const config = options.project.config;
    this.runs = new RunStore(options.store, config.project_id, options.clock);
    this.board = new Blackboard(options.store, { projectId: config.project_id, humans: config.humans, clock: options.clock, leaseMs: options.leaseMs });
    this.log = options.logger ?? createLogger("pmagent.lattice", this.redactor);
  }

  /**
   * The redactor for one run's output: the supervisor's own secrets, the secret inputs this
   * process handed to the run, the current value of every credential the run's role may fetch
   * (config `roles[].credentials`) and every value of the secrets file, read again from the
   * secret store each time a run is launched or followed. That last part is what makes redaction survive a restart: a supervisor that
   * re-attaches to a resumed sprite never saw the FETCH_CREDENTIAL it answered, but the role's
   * credentials are exactly the values such a sprite can have been given. Nothing about a secret
   * is stored, not even a salted hash: a hash cannot find the secret inside arbitrary output
   * without hashing every substring, and a hash of a short secret kept beside its salt in the
   * database could be brute-forced from a copy of it. Limit: a credential rotated between its
   * delivery and the restart is redacted by its new value only.
   */
  private runRedactor(run: RunRecord): Redactor {
    const secrets = [...(this.runSecrets.get(run.id) ?? []), ...this.credentialValues(run), ...this.secretFileValues(run)];
    return secrets.length ? this.redactor.withSecrets(secrets) : this.redactor;
  }

  /**
   * Every value of the secrets file: a sprite may hold any of them, not only its role's. A file
   * that cannot be read or parsed stops a run whose role may fetch credentials (its output could
   * hold a value nobody can redact): redaction never goes on without the values. A run whose
   * role fetches none goes on, with a warning.
   */
  private secretFileValues(run: RunRecord): string[] {
    try {
      this.secretStore ??= new SecretStore({ env: this.env, root: this.o.project.root, file: this.o.project.config.secrets.file });
      return this.secretStore.values();
    } catch (err) {
      const needs = this.roleFetches(run.role);
      const why = (err as Error).message;
      if (needs) throw new UnavailableError("secrets_unreadable", `${why}; run ${run.id} of role ${run.role} is stopped: its role may fetch credentials, and its output cannot be redacted without their values. Fix the secrets file, then start the run again`);
      this.log.warn({ run: run.id, err: why }, "secrets file not read for redaction");
      return [];
    }
  }

  private secrets(): SecretStore {
    return (this.secretStore ??= new SecretStore({ env: this.env, root: this.o.project.root, file: this.o.project.config.secrets.file }));
  }

  private credentialValues(run: RunRecord): string[] {
    let names: readonly string[];
    try {
      names = this.role(run.role).credentials;
    } catch {
      return []; // the role is gone from the config: its credentials are no longer known
    }
    const out: string[] = [];
    for (const name of names) {
      try {
        // Made on first use: a bad secrets.file (outside the root) fails FETCH_CREDENTIAL, not the supervisor.
        this.secretStore ??= new SecretStore({ env: this.env, root: this.o.project.root, file: this.o.project.config.secrets.file });
        out.push(this.secretStore.get(name));
      } catch (err) {
        // Not set (any more), or the secrets file is unreadable: its value is not known here.
        if ((err as PmagentError).code !== "credential_not_found") this.log.warn({ run: run.id, credential: name, err: (err as Error).message }, "credential not read for redaction");
      }
    }
    return out;
  }

  get store(): Store {
    return this.o.store;
  }

  /** bwrap per the config's `sandbox` mode; throws when it is required and missing. */
  private sandboxTool(): string | null {
    if (this.bwrap === undefined) {
      const found = findSandboxTool(this.o.project.config.sandbox, this.env.PATH ?? "");
      if (found.warning) this.log.warn({}, found.warning);
      this.bwrap = found.bwrap;
    }
    return this.bwrap;
  }

  get project(): Project {
    return this.o.project;
  }

  /** Whether a run gate is configured (then each entry is asked about before it is claimed). */
  get gated(): boolean {
    return this.o.hooks?.gate !== undefined;
  }

  private role(name: string): RoleConfig {
    return findRole(this.o.project.config, name).role;
  }

  /** Ask the gate (if any) about a run and record its answer; DENY is recorded, not thrown. */
  async askGate(role: string, entry: StoredEntry | null, command: string[]): Promise<GateDecision | null> {
    const gate = this.o.hooks?.gate;
    if (!gate) return null;
    const d = await gate.decide({ role, entry: entry?.entry ?? null, command });
    if (d === null) return null;
    if (!d || !["ALLOW", "DENY", "CONDITIONAL"].includes(d.decision)) {
      throw new PmagentError("gate_invalid", `the run gate answered ${JSON.stringify(d?.decision)}; expected ALLOW, DENY or CONDITIONAL`);
    }
    const decision: GateDecision = { decision: d.decision, reasoning: String(d.reasoning ?? ""), conditions: (d.conditions ?? []).map(String) };
    await this.runs.recordGateDecision(entry?.entry.id ?? "", entry?.version ?? 0, role, decision, null);
    return decision;
  }

  private commandFor(role: RoleConfig, given: string[] | undefined): string[] {
    const command = given && given.length > 0 ? given : runnerArgv(role.runner, this.o.project.config);
    if (!command || command.length === 0) {
      throw new UsageError("no_sprite_command", `role ${role.name} has no runner.command or runner.agent in pmagent.config.json: configure one or pass the command after --`);
    }
    return command;
  }

  /**
   * Start one run and supervise it until nothing more happens here: it finished, or it waits for
   * input with no action of this supervisor still under way. Refused (no run) when the gate denies.
   */
  async startRun(options: StartRunOptions): Promise<RunRecord> {
    const role = this.role(options.role);
    const command = this.commandFor(role, options.command);
    this.sandboxTool();
    let entry: StoredEntry | null = null;
    if (options.entryId !== undefined) {
      entry = await this.board.get(options.entryId);
      if (entry.entry.to !== role.name) {
        throw new RefusedError("entry_not_for_role", `entry ${entry.entry.id} is addressed to ${entry.entry.to}, not ${role.name}: run it with --role ${entry.entry.to}`);
      }
      if (isTerminal(entry.entry.status)) throw new RefusedError("entry_finished", `entry ${entry.entry.id} is ${entry.entry.status}: there is nothing left to run`);
    }
    const gate = options.decided ?? (await this.askGate(role.name, entry, command));
    if (gate?.decision === "DENY") {
      throw new RefusedError("run_denied", `the run gate denied a run of ${role.name}${entry ? ` for entry ${entry.entry.id}` : ""}: ${gate.reasoning || "no reason given"}`, {
        decision: gate,
      });
    }
    const root = this.o.project.root;
    const id = newRunId();
    const workspace = options.workspace !== undefined ? confinePath(root, options.workspace, "--workspace") : join(root, ".pmagent", "workspaces", id);
    const run = await this.runs.create({
      id,
      project_id: this.o.project.config.project_id,
      role: role.name,
      entry_id: entry?.entry.id ?? null,
      sprite_id: `sprite-${id.slice(-8)}`,
      work_item_id: entry?.entry.id ?? id,
      command,
      workspace,
      checkpoint_dir: join(root, ".pmagent", "checkpoints", id),
      run_dir: join(root, ".pmagent", "runs", id),
      worker: options.worker ?? null,
      host: this.host,
      supervisor_pid: process.pid,
      gate,
    });
    options.onStarted?.(run.id);
    const active = this.track(run.id);
    active.attempt = this.launch(run, { fresh: true, entry: entry?.entry ?? null, timeoutS: options.timeoutS, userWorkspace: options.workspace !== undefined });
    return this.whenIdle(run.id);
  }

  private track(runId: string): ActiveRun {
    let a = this.active.get(runId);
    if (!a) {
      a = { attempt: null, dispatches: new Set(), child: null };
      this.active.set(runId, a);
    }
    return a;
  }

  /** Resolve once the run's current attempt and every follow-up (sinks, resumes) here are done. */
  async whenIdle(runId: string): Promise<RunRecord> {
    for (;;) {
      const a = this.active.get(runId);
      if (!a) return this.runs.get(runId);
      if (a.attempt) {
        await a.attempt;
        continue;
      }
      if (a.dispatches.size > 0) {
        await Promise.allSettled([...a.dispatches]);
        continue;
      }
      this.active.delete(runId);
      return this.runs.get(runId);
    }
  }

  private prepareWorkspace(run: RunRecord, entry: Entry | null, userWorkspace: boolean): void {
    const root = this.o.project.root;
    if (!existsSync(run.workspace) && !userWorkspace && existsSync(join(root, ".git"))) {
      // A cheap clone of the project repository (objects shared): the sprite works on a copy.
      mkdirSync(join(run.workspace, ".."), { recursive: true });
      const r = spawnSyncGit(["clone", "--quiet", "--shared", root, run.workspace], root, this.env);
      if (r !== null) throw new PmagentError("workspace_failed", `cannot clone ${root} into the run's workspace ${run.workspace}: ${r}`, { kind: "unavailable" });
    }
    mkdirSync(latticeDir(run.workspace), { recursive: true });
    if (entry) writeFileAtomic(join(latticeDir(run.workspace), "entry.json"), `${JSON.stringify(entry, null, 2)}\n`);
  }

  private async adjustments(run: RunRecord, entry: Entry | null): Promise<EnvironmentAdjustments> {
    const provider = this.o.hooks?.environment;
    if (!provider) return NO_ADJUSTMENTS;
    const adj = await provider.adjustmentsFor(run.role, { entry, runId: run.id });
    const result = { preinstall: adj.preinstall ?? [], env: adj.env ?? {} };
    checkExtraEnv(result.env, `accepted environment adjustments for ${run.role}`);
    return result;
  }

  private files(run: RunRecord, attempt = run.attempt): { stdout: string; stderr: string } {
    return { stdout: join(run.run_dir, `stdout.${attempt}.log`), stderr: join(run.run_dir, `stderr.${attempt}.log`) };
  }

  /** Prepare and spawn one attempt of a run, then supervise it; resolves once the run is settled. */
  private async launch(run: RunRecord, opts: { fresh: boolean; entry: Entry | null; timeoutS?: number; userWorkspace?: boolean }): Promise<void> {
    const active = this.track(run.id);
    try {
      const role = this.role(run.role);
      if (opts.fresh) this.prepareWorkspace(run, opts.entry, opts.userWorkspace === true);
      const runnerEnv = role.runner?.env ?? {};
      checkExtraEnv(runnerEnv, `lanes[].roles[${role.name}].runner.env`);
      const adj = await this.adjustments(run, opts.entry);
      const bwrap = this.sandboxTool();
      const pmagentCommand = this.o.pmagentCommand ?? selfCommand();
      const dirs = prepareRunDir(run.run_dir, pmagentCommand, this.env.PATH ?? "", { sandboxed: bwrap !== null });
      mkdirSync(run.checkpoint_dir, { recursive: true });
      const lattice: Record<string, string> = {
        LATTICE_WORKSPACE: run.workspace,
        LATTICE_SPRITE_ID: run.sprite_id,
        LATTICE_WORK_ITEM_ID: run.work_item_id,
        LATTICE_CHECKPOINT_DIR: run.checkpoint_dir,
        LATTICE_RUN_ID: run.id,
        LATTICE_ROLE: run.role,
      };
      if (run.entry_id) lattice.PMAGENT_ENTRY_FILE = join(latticeDir(run.workspace), "entry.json");
      if (run.gate?.decision === "CONDITIONAL") lattice.LATTICE_RUN_CONDITIONS = JSON.stringify(run.gate.conditions);
      const env = spriteEnv({ base: this.env, shimDir: dirs.shimDir, toolDir: dirs.toolDir, home: dirs.home, lattice, extra: { ...runnerEnv, ...adj.env } });
      const storeFile = this.store.dialect === "sqlite" ? this.store.location : null;
      const spec = bwrap ? runSandbox({ bwrap, project: this.o.project, storeFile, workspace: run.workspace, checkpointDir: run.checkpoint_dir, dirs, pmagentCommand, command: run.command, home: this.env.HOME, entryPayload: opts.entry?.payload, path: env.PATH }) : null;
      // Sandboxed, the supervisor's TMPDIR is not there; the workspace is also at /workspace.
      if (spec) Object.assign(env, { TMPDIR: "/tmp", LATTICE_SANDBOX: "bwrap" });
      const wrap = (argv: string[]) => (spec ? sandboxArgv(argv, spec) : argv);
      const files = this.files(run);
      for (const step of adj.preinstall) {
        const code = await runStep(wrap(["sh", "-c", step]), run.workspace, env, files.stderr);
        if (code !== 0) throw new PmagentError("preinstall_failed", `preinstall step \`${step}\` exited with ${code}; the sprite was not started`);
      }
      if (spec && !findExecutable(run.command[0]!, env.PATH ?? "", { cwd: run.workspace })) throw new PmagentError("sprite_not_found", `cannot start ${run.command[0]}: command not found`);
      const timeoutS = opts.timeoutS ?? role.runner?.timeout_s ?? 3600;
      // Before the sprite starts: a run whose output could not be redacted never starts.
      const redactor = this.runRedactor(run);
      // An agent run gets its model key on stdin (never in its argv, environment or a file).
      const stdin = agentStdin(run.command, role, (name) => this.secrets().get(name));
      return await this.spawnAndSupervise(run, wrap(run.command), env, files, timeoutS, active, redactor, stdin);
    } catch (err) {
      // Once the sprite runs, a failure is in supervising it (storing its output), not in starting it.
      const stage = active.child ? "supervising the sprite failed" : "cannot start the sprite";
      const reason = err instanceof PmagentError ? err.message : `${stage}: ${(err as Error).message}`;
      await this.runs.update(run.id, { state: "failed", reason: this.redactor.redact(reason), finished: true }, UNFINISHED_RUN_STATES);
      await this.syncEntry(await this.runs.get(run.id));
    } finally {
      active.attempt = null;
      active.child = null;
    }
  }

  private async spawnAndSupervise(run: RunRecord, argv: string[], env: Record<string, string>, files: { stdout: string; stderr: string }, timeoutS: number, active: ActiveRun, redactor: Redactor, stdin: string | null = null): Promise<void> {
    const out = openSync(files.stdout, "a", 0o600);
    const err = openSync(files.stderr, "a", 0o600);
    let child;
    try {
      // Own process group: a cancel or timeout stops the sprite and everything it started. A
      // worker's sprite also gets a parent-death signal: it dies with its worker instead of running
      // on beside the sprite of the worker that takes the entry over. (A `pmagent run` sprite
      // outlives its supervisor: a restarted supervisor re-attaches to it.)
      const launched = run.worker ? dieWithParent(argv, { cwd: run.workspace, path: env.PATH ?? "" }) : argv;
      child = spawn(launched[0]!, launched.slice(1), { cwd: run.workspace, env, stdio: [stdin === null ? "ignore" : "pipe", out, err], detached: true });
    } finally {
      closeSync(out);
      closeSync(err);
    }
    if (stdin !== null) {
      child.stdin?.on("error", () => undefined);
      child.stdin?.end(stdin);
    }
    const exited = new Promise<Exit>((resolveExit) => {
      child.once("error", (e) => resolveExit({ code: null, signal: null, error: `cannot start ${run.command[0]}: ${(e as NodeJS.ErrnoException).code === "ENOENT" ? "command not found" : e.message}` }));
      child.once("exit", (code, signal) => resolveExit({ code, signal }));
    });
    const pid = child.pid;
    if (pid !== undefined) {
      active.child = { pid };
      await this.runs.update(run.id, { state: "running", sprite_pid: pid, sprite_started: processStartTime(pid), supervisor_pid: process.pid }, ["starting"]);
    }
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      if (pid !== undefined) stopGroup(pid);
    }, timeoutS * 1000);
    try {
      const exit = await this.follow(await this.runs.get(run.id), exited, redactor);
      if (timedOut) exit.error = `timed out after ${timeoutS} s (runner.timeout_s); the sprite was stopped`;
      await this.settle(run.id, exit);
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Store the run's output while the sprite runs and drain it all once `exited` resolves:
   * stdout/stderr files and the outbox from the run's stored offsets.
   */
  private async follow(run: RunRecord, exited: Promise<Exit>, redactor: Redactor): Promise<Exit> {
    const files = this.files(run);
    const ingestor = new RunIngestor({
      store: this.o.store,
      runId: run.id,
      attempt: run.attempt,
      outboxPath: outboxPath(run.workspace),
      violationsPath: join(run.run_dir, "violations.log"),
      outbox: run.outbox,
      stdoutOffset: run.stdout_offset,
      stderrOffset: run.stderr_offset,
      logBytes: run.log_bytes,
      logTruncated: run.log_truncated,
      redactor,
      logCapBytes: this.o.logCapBytes,
      clock: this.o.clock,
      keep: (type) => this.o.onEvents !== undefined || SIGNIFICANT.has(type),
      onNewEvents: (events) => this.onNewEvents(run.id, events),
    });
    // Read both files to their ends, stopping early while too much waits to be stored.
    const pump = () => {
      let any = false;
      for (;;) {
        if (ingestor.full) return any;
        const offsets = ingestor.streamOffsets;
        const a = readFrom(files.stdout, offsets.stdout, (b) => ingestor.pushStdout(b));
        const b = readFrom(files.stderr, offsets.stderr, (c) => ingestor.pushStderr(c));
        if (!a && !b) return any;
        any = true;
      }
    };
    let watcher: FSWatcher | undefined;
    try {
      watcher = watch(run.run_dir, () => pump());
      watcher.on("error", () => undefined);
    } catch {
      watcher = undefined; // polling alone still works
    }
    const heartbeat = this.startHeartbeat(run);
    // A resume that carried a credential: resume.json goes once the sprite has read it, which it
    // does before its first event (the protocol's acknowledging INFO).
    let dropResume = run.attempt > 1 && this.runSecrets.has(run.id);
    const timer = setInterval(() => {
      pump();
      if (dropResume && ingestor.stored > 0) {
        dropResume = false;
        removeResume(run.workspace);
      }
      void ingestor.poll().catch(() => undefined);
    }, this.pollMs);
    let exit: Exit;
    try {
      exit = await exited;
    } finally {
      clearInterval(timer);
      watcher?.close();
      heartbeat?.stop();
    }
    // Drain: read each file to its end, letting the store catch up whenever the queue fills.
    for (;;) {
      const more = pump();
      // A flush of its own (not just waiting for the queue), so a full queue always drains.
      await ingestor.poll();
      await ingestor.settle();
      if (!more && !ingestor.full) break;
    }
    await ingestor.finish();
    return exit;
  }

  private startHeartbeat(run: RunRecord): { stop(): void } | undefined {
    if (!run.worker || !run.entry_id) return undefined;
    const leaseMs = this.board.leaseMs;
    const timer = setInterval(() => {
      this.board.heartbeat(run.worker!, run.entry_id!, leaseMs).catch(async (err) => {
        if ((err as PmagentError).code !== "claim_lost") return;
        clearInterval(timer);
        // Guarded: a run fenced by the takeover keeps the reason it was superseded with.
        await this.runs.update(run.id, { reason: `claim on entry ${run.entry_id} lost (${(err as Error).message}); the sprite was stopped` }, UNFINISHED_RUN_STATES);
        const current = await this.runs.get(run.id);
        if (current.sprite_pid) stopGroup(current.sprite_pid);
      });
    }, Math.max(50, Math.floor(leaseMs / 3)));
    return { stop: () => clearInterval(timer) };
  }

  private async onNewEvents(runId: string, events: StoredEvent[]): Promise<void> {
    const run = await this.runs.get(runId, this.store, false);
    this.o.onEvents?.(run, events);
    for (const e of events) {
      if (e.event_type === "PHASE_STARTED" && run.entry_id) await this.entryInProgress(run);
      if (e.event_type === "ACTION_REQUEST" || e.event_type === "ENVIRONMENT_PROPOSAL") void this.dispatch(run, e, false);
    }
  }

  /** PHASE_STARTED → in_progress (when the entry is still open: `pmagent run --entry` without a claim). */
  private async entryInProgress(run: RunRecord): Promise<void> {
    const entry = await this.board.find(run.entry_id!);
    if (entry?.entry.status !== "open") return;
    await this.board.transition(run.role, run.entry_id!, "in_progress").catch((err) => this.log.warn({ run: run.id, err: (err as Error).message }, "entry not moved to in_progress"));
  }

  /** Hand an event to its sink without holding up ingestion; mark it dispatched when the sink is done. */
  private dispatch(run: RunRecord, event: StoredEvent, redelivery: boolean): Promise<void> {
    const active = this.track(run.id);
    const p = this.deliver(run, event, redelivery).catch((err) => this.log.error({ run: run.id, event: event.id, err: (err as Error).message }, "sink failed"));
    active.dispatches.add(p);
    void p.finally(() => active.dispatches.delete(p));
    return p;
  }

  private async deliver(run: RunRecord, event: StoredEvent, redelivery: boolean): Promise<void> {
    const hooks = this.o.hooks ?? {};
    const ctx = { run, event, redelivery };
    if (event.event_type === "ENVIRONMENT_PROPOSAL") {
      const outcome = hooks.proposals ? await hooks.proposals.onEnvironmentProposal(ctx) : { status: "recorded", note: "no proposal sink is configured; the proposal is kept as an event" };
      await this.runs.markDispatched(event, outcome ?? null);
      return;
    }
    if (hooks.actions) {
      const outcome = await hooks.actions.onActionRequest(ctx);
      await this.runs.markDispatched(event, outcome ?? null);
      return;
    }
    const payload = event.event.payload as { action?: string; blocking?: boolean };
    const message = `no action executor is configured: ${payload.action} was not carried out`;
    await this.runs.markDispatched(event, { status: "failed", error: message });
    if (payload.blocking) {
      const settled = await this.whenAttemptDone(run.id);
      if (settled.state !== "waiting") return;
      await this.resumeRun(run.id, { inputs: {}, failure: { action: String(payload.action), message } });
    }
  }

  private async whenAttemptDone(runId: string): Promise<RunRecord> {
    const a = this.active.get(runId);
    if (a?.attempt) await a.attempt;
    return this.runs.get(runId);
  }

  /** Settle a run after its sprite exited: its state from the attempt's last COMPLETED/ERROR/WAITING. */
  private async settle(runId: string, exit: Exit, opts: { workerDied?: boolean } = {}): Promise<void> {
    // The reads here skip counting the run's events: a count walks an index over all of them (tens
    // of milliseconds for a run of a million events). The record callers get is read once, counted,
    // by whenIdle.
    const run = await this.runs.get(runId, this.store, false);
    const last = await this.runs.lastEventOfTypes(runId, run.attempt, ["COMPLETED", "ERROR", "WAITING"]);
    const exitText = exit.error ?? `exit code ${exit.code ?? "unknown"}${exit.signal ? `, signal ${exit.signal}` : ""}`;
    let state: RunState;
    let reason: string | null = null;
    let waiting: RunWaiting | undefined;
    const payload = last ? ((JSON.parse(last.event_json) as { payload: Record<string, unknown> }).payload) : {};
    if (exit.error) {
      state = "failed";
      reason = exit.error;
    } else if (last?.event_type === "COMPLETED") {
      state = payload.status === "success" ? "succeeded" : "failed";
      if (state === "failed") reason = `COMPLETED with status failure${payload.summary ? `: ${String(payload.summary)}` : ""}`;
    } else if (last?.event_type === "ERROR") {
      state = "failed";
      reason = `ERROR: ${String(payload.message)}`;
    } else if (last?.event_type === "WAITING") {
      const checkpoint = String(payload.checkpoint_id);
      if (checkpointExists(run.checkpoint_dir, checkpoint)) {
        state = "waiting";
        waiting = { event_id: last.event_id, reason: String(payload.reason), checkpoint_id: checkpoint, expected_inputs: (payload.expected_inputs as Record<string, string> | undefined) ?? {} };
      } else {
        state = "failed";
        reason = `WAITING named checkpoint ${checkpoint}, which does not exist: create it (Sprite.checkpoint() or \`pmagent checkpoint create\`) before emitting WAITING`;
        await this.runs.recordProtocolError(runId, "outbox", null, reason, "");
      }
    } else if (opts.workerDied && run.worker) {
      // It died with its worker (parent-death signal): the entry is another worker's to take over.
      state = "canceled";
      reason = WORKER_DIED;
    } else {
      state = "failed";
      reason = `the sprite ended (${exitText}) without COMPLETED, ERROR or WAITING`;
    }
    if (state === "succeeded" && exit.code !== null && exit.code !== 0) {
      state = "failed";
      reason = `COMPLETED with status success, but the sprite then exited with code ${exit.code}`;
    }
    await this.runs.update(
      runId,
      { state, reason, exit_code: exit.code, exit_signal: exit.signal, sprite_pid: null, finished: isTerminalRunState(state), ...(waiting ? { waiting } : {}) },
      UNFINISHED_RUN_STATES,
    );
    this.cleanupStreams(run);
    const settled = await this.runs.get(runId, this.store, false);
    if (settled.state === "waiting") await this.parkClaim(settled);
    else await this.syncEntry(settled);
  }

  private cleanupStreams(run: RunRecord): void {
    const f = this.files(run);
    rmSync(f.stdout, { force: true });
    rmSync(f.stderr, { force: true });
    // The sprite has exited: a resume that may have carried a credential is not left behind.
    if (run.attempt > 1 && (this.runSecrets.has(run.id) || this.roleFetches(run.role))) removeResume(run.workspace);
  }

  /** Whether a role may fetch credentials (false for a role gone from the config). */
  private roleFetches(role: string): boolean {
    try {
      return this.role(role).credentials.length > 0;
    } catch {
      return false;
    }
  }

  /** A waiting run holds its entry's claim without heartbeats until it is resumed. */
  private async parkClaim(run: RunRecord): Promise<void> {
    if (!run.worker || !run.entry_id) return;
    await this.board.heartbeat(run.worker, run.entry_id, PARKED_LEASE_MS).catch(() => undefined);
  }

  /**
   * Map a finished run onto its entry (once; redone by reconciliation after a crash): succeeded →
   * the lane's next entry is posted (idempotent) and the entry is done; failed → error;
   * canceled → canceled.
   */
  async syncEntry(run: RunRecord): Promise<void> {
    if (!isTerminalRunState(run.state) || run.entry_synced) return;
    if (!run.entry_id) {
      await this.runs.update(run.id, { entry_synced: true });
      return;
    }
    const entry = await this.board.find(run.entry_id);
    if (entry && !isTerminal(entry.entry.status)) {
      if (run.worker && entry.claimed_by && entry.claimed_by !== run.worker) {
        await this.runs.update(run.id, { entry_synced: true, reason: `${run.reason ? `${run.reason}; ` : ""}entry ${run.entry_id} was taken over by ${entry.claimed_by}; left to it` });
        return;
      }
      if (run.state === "succeeded") {
        await this.postNext(run, entry.entry);
        await this.board.transition(run.role, run.entry_id, "done", { note: `run ${run.id} succeeded` });
      } else if (run.state === "failed") {
        // A failure reaches a human (roles contract §2.4), besides the entry's own error status.
        const events = await this.runs.events(run.id, { types: ["ERROR", "ARTIFACT"] });
        await this.board.post(run.role, errorEntry(run, entry.entry, this.o.project.config.humans, events));
        await this.board.transition(run.role, run.entry_id, "error", { note: `run ${run.id} failed: ${run.reason ?? "unknown"}`.slice(0, 2000) });
      } else if (run.reason !== WORKER_STOPPED && run.reason !== WORKER_DIED) {
        await this.board.transition(run.role, run.entry_id, "canceled", { note: `run ${run.id} canceled${run.reason ? `: ${run.reason}` : ""}` });
      }
    }
    await this.runs.update(run.id, { entry_synced: true });
  }

  private async postNext(run: RunRecord, entry: Entry): Promise<void> {
    const { lane, role } = findRole(this.o.project.config, run.role);
    const next = role.next;
    if (!next) return;
    const events = await this.runs.events(run.id, { types: ["ARTIFACT", "COMPLETED"] });
    const artifacts = artifactItems(run, events);
    const completed = [...events].reverse().find((e) => e.event_type === "COMPLETED");
    const summary = (completed?.event.payload as { summary?: string } | undefined)?.summary;
    const revision = revisionRequest(completed?.event.payload as Record<string, unknown> | undefined);
    await this.board.post(run.role, {
      id: followUpId(lane, entry.id, next.id_suffix),
      to: next.to,
      kind: next.kind,
      payload: { refs: followUpRefs(run, entry, artifacts), ...(summary ? { summary } : {}), ...(revision ? { details: revision } : {}) },
      target_docs: entry.target_docs,
      source_run_id: run.id,
    });
  }

  /**
   * Resume a waiting run: check the inputs against its `expected_inputs`, restore the WAITING
   * checkpoint, write `.lattice/resume.json` (0600) and relaunch the sprite. The same resume
   * (checkpoint and payload) again is a no-op.
   */
  resumeRun(runId: string, options: ResumeOptions): Promise<ResumeResult> {
    // Counted as work under way on the run from the call on, so `whenIdle` waits for the relaunch.
    const active = this.track(runId);
    const p = this.resume(runId, options);
    active.dispatches.add(p);
    void p.finally(() => active.dispatches.delete(p)).catch(() => undefined);
    return p;
  }

  private async resume(runId: string, options: ResumeOptions): Promise<ResumeResult> {
    let run = await this.whenAttemptDone(runId);
    const secret = options.secretInputs ?? {};
    const inputs = options.inputs ?? {};
    const context = { ...(options.context ?? {}), ...(options.failure ? { error: { action: options.failure.action, message: options.failure.message } } : {}) };
    const checkpointId = run.waiting?.checkpoint_id ?? null;
    // Secret values stay out of the key (it is stored); their names are part of it.
    const key = contentHash({ checkpoint_id: checkpointId, inputs, secret_inputs: Object.keys(secret).sort(), context });
    if (await this.runs.hasResume(runId, key)) return { run, noop: true, finished: Promise.resolve(run) };
    if (run.state !== "waiting" || !run.waiting) {
      throw new RefusedError("run_not_waiting", `run ${runId} is ${run.state}, not waiting: only a waiting run can be resumed`, { run: runId, state: run.state });
    }
    for (const k of Object.keys(secret)) {
      if (k in inputs) throw new UsageError("resume_input_twice", `input ${k} is given both as an input and as a secret input: give it once`);
    }
    if (!options.failure) assertInputs({ ...inputs, ...secret }, run.waiting.expected_inputs);
    if (!checkpointExists(run.checkpoint_dir, run.waiting.checkpoint_id)) {
      throw new NotFoundError("checkpoint_not_found", `checkpoint ${run.waiting.checkpoint_id} of run ${runId} is gone from ${run.checkpoint_dir}: the run cannot be resumed`);
    }
    const waiting = run.waiting;
    const attempt = run.attempt + 1;
    const claimed = await this.store.transaction(async (q) => {
      if (!(await this.runs.recordResume(runId, key, waiting.checkpoint_id, attempt, q))) return false;
      return this.runs.update(runId, { state: "starting", attempt, supervisor_pid: process.pid, resetStreams: true, reason: null }, ["waiting"], q);
    });
    if (!claimed) {
      run = await this.runs.get(runId);
      if (await this.runs.hasResume(runId, key)) return { run, noop: true, finished: Promise.resolve(run) };
      throw new RefusedError("run_not_waiting", `run ${runId} was resumed by someone else meanwhile (it is ${run.state})`);
    }
    if (Object.keys(secret).length) this.runSecrets.set(runId, Object.values(secret));
    run = await this.runs.get(runId);
    const active = this.track(runId);
    const started = (async () => {
      try {
        restoreCheckpoint(run.workspace, run.checkpoint_dir, waiting.checkpoint_id);
        const body = { work_item_id: run.work_item_id, checkpoint_id: waiting.checkpoint_id, inputs: { ...inputs, ...secret }, context };
        // Through a `.lattice` the sprite made a link, the file (with its secret inputs) would land elsewhere.
        assertRealDirectory(latticeDir(run.workspace), "the workspace's .lattice directory");
        writeFileAtomic(resumePath(run.workspace), `${JSON.stringify(body, null, 2)}\n`, 0o600);
      } catch (err) {
        await this.runs.update(runId, { state: "failed", reason: `resume failed: ${(err as Error).message}`, finished: true }, ["starting"]);
        await this.syncEntry(await this.runs.get(runId));
        return;
      }
      const entry = run.entry_id ? ((await this.board.find(run.entry_id))?.entry ?? null) : null;
      return this.launch(run, { fresh: false, entry });
    })();
    active.attempt = started;
    return { run, noop: false, finished: started.then(() => this.whenIdle(runId)) };
  }

  /** Cancel a run: stop its sprite (its whole process group) and record why. */
  async cancel(runId: string, reason = "canceled by a user"): Promise<RunRecord> {
    const run = await this.runs.get(runId);
    if (isTerminalRunState(run.state)) throw new RefusedError("run_finished", `run ${runId} is already ${run.state}: nothing to cancel`);
    await this.runs.update(runId, { state: "canceled", reason, finished: true }, ["starting", "running", "waiting"]);
    const pid = this.active.get(runId)?.child?.pid ?? run.sprite_pid;
    if (pid && (this.active.get(runId)?.child || processAlive(pid, run.sprite_started))) stopGroup(pid);
    const canceled = await this.runs.get(runId);
    if (!this.active.get(runId)?.attempt) await this.syncEntry(canceled);
    return canceled;
  }

  /**
   * Fence the runs of an entry that `worker` has just claimed (a takeover after a lease expired):
   * each run of another worker not finished yet is canceled as superseded, so its finish is
   * refused (settling only moves unfinished runs) as is its late output (ingest checks the claim),
   * and its sprite's process group is killed when it still runs on this host.
   */
  async fenceEntry(entryId: string, worker: string): Promise<RunRecord[]> {
    const fenced: RunRecord[] = [];
    for (const run of await this.runs.list({ entryId, state: ["starting", "running", "waiting"] })) {
      if (run.worker === worker) continue;
      const reason = `superseded: entry ${entryId} was taken over by ${worker} after the lease of ${run.worker ?? "its run"} expired`;
      if (!(await this.runs.update(run.id, { state: "canceled", reason, entry_synced: true, finished: true }, ["starting", "running", "waiting"]))) continue;
      if (run.host === this.host && run.sprite_pid !== null && processAlive(run.sprite_pid, run.sprite_started)) killGroup(run.sprite_pid);
      this.log.warn({ run: run.id, entry: entryId, worker }, "run superseded by a takeover");
      fenced.push(await this.runs.get(run.id));
    }
    return fenced;
  }

  /**
   * After a crash: every unfinished run of this host whose supervisor is gone is taken over.
   * A sprite still alive is re-attached (its output files and outbox tailed from the stored
   * offsets until it exits); one that ended is drained and settled. Finished runs whose entry
   * was not updated get it updated; actions and proposals not yet dispatched are handed over again.
   */
  async reconcile(): Promise<RunRecord[]> {
    const taken: Array<Promise<RunRecord>> = [];
    const takenIds = new Set<string>();
    for (const run of await this.runs.list({ state: [...UNFINISHED_RUN_STATES] })) {
      if (run.host !== this.host) continue;
      if (run.supervisor_pid !== null && run.supervisor_pid !== process.pid && processAlive(run.supervisor_pid)) continue;
      if (this.active.has(run.id)) continue;
      if (!(await this.runs.update(run.id, { supervisor_pid: process.pid }, UNFINISHED_RUN_STATES))) continue;
      const active = this.track(run.id);
      const attempt = (async () => {
        try {
          // No pid recorded: the supervisor died between spawning the sprite and saving its pid, or before spawning it.
          const pid = run.sprite_pid ?? findSpriteOfRun(run.id);
          const started = run.sprite_pid !== null ? run.sprite_started : pid !== null ? processStartTime(pid) : null;
          if (pid !== null && run.sprite_pid === null) await this.runs.update(run.id, { state: "running", sprite_pid: pid, sprite_started: started }, UNFINISHED_RUN_STATES);
          const exited: Promise<Exit> = pid !== null ? waitForExit(pid, started, this.pollMs) : Promise.resolve({ code: null, signal: null });
          let redactor: Redactor;
          try {
            redactor = this.runRedactor(run);
          } catch (err) {
            // Its output cannot be redacted: the sprite is stopped and the run fails, unread.
            if (pid !== null && processAlive(pid, started)) stopGroup(pid);
            await this.runs.update(run.id, { state: "failed", reason: (err as Error).message, sprite_pid: null, finished: true }, UNFINISHED_RUN_STATES);
            await this.syncEntry(await this.runs.get(run.id));
            return;
          }
          const exit = await this.follow(run, exited, redactor);
          await this.settle(run.id, exit, { workerDied: true });
        } finally {
          active.attempt = null;
        }
      })();
      active.attempt = attempt;
      takenIds.add(run.id);
      taken.push(attempt.then(() => this.whenIdle(run.id)));
    }
    for (const run of await this.runs.unsynced()) await this.syncEntry(run);
    // A run whose actions are handed over again is listed too, whatever its state, once they are
    // done (not a sprite a blocking action's result relaunched: that one runs on).
    const again = await this.redispatch();
    for (const [id, dispatched] of again) if (!takenIds.has(id)) taken.push(dispatched.then(() => this.runs.get(id)));
    return Promise.all(taken);
  }

  /**
   * Hand over again, whatever the state of their run: actions and proposals never marked
   * dispatched (their supervisor died first) in runs of this host no live supervisor follows, and
   * actions left pending, cut off mid-attempt or with their sprite not resumed (the action
   * executor's claim keeps one attempt at a time, its idempotency key one delivery).
   */
  private async redispatch(): Promise<Map<string, Promise<unknown>>> {
    const runs = new Map<string, RunRecord | undefined>();
    const runOf = async (id: string) => {
      if (!runs.has(id)) runs.set(id, await this.runs.find(id, this.store, false));
      return runs.get(id);
    };
    const followedElsewhere = (run: RunRecord) =>
      run.host !== this.host || (run.state !== "waiting" && run.supervisor_pid !== null && run.supervisor_pid !== process.pid && processAlive(run.supervisor_pid));
    const again = new Map<string, { run: RunRecord; event: StoredEvent }>();
    for (const event of await this.runs.undispatchedAll(["ACTION_REQUEST", "ENVIRONMENT_PROPOSAL"])) {
      const run = await runOf(event.run_id);
      if (run && !followedElsewhere(run)) again.set(`${run.id}:${event.id}`, { run, event });
    }
    for (const a of (await this.o.hooks?.actions?.orphaned?.(this.o.project.config.project_id)) ?? []) {
      if (again.has(`${a.run_id}:${a.event_id}`)) continue;
      const run = await runOf(a.run_id);
      const event = run ? await this.runs.eventById(run.id, a.event_id, "ACTION_REQUEST") : undefined;
      if (run && event) again.set(`${run.id}:${event.id}`, { run, event });
    }
    const byRun = new Map<string, Array<Promise<void>>>();
    for (const { run, event } of again.values()) byRun.set(run.id, [...(byRun.get(run.id) ?? []), this.dispatch(run, event, true)]);
    return new Map([...byRun].map(([id, ps]) => [id, Promise.allSettled(ps)]));
  }
}

/** A soft-gate review that succeeded but asks for changes: carried into the next entry's `payload.details`. */
function revisionRequest(payload: Record<string, unknown> | undefined): { revision_requested: true; requested_changes: string[] } | undefined {
  if (payload?.revision_requested !== true) return undefined;
  const changes = Array.isArray(payload.requested_changes) ? payload.requested_changes.map(String) : [];
  return { revision_requested: true, requested_changes: changes };
}

/** The reason a worker records on the run it stops; its entry is left for another worker to take over. */
export const WORKER_STOPPED = "the worker stopped; the entry is left in_progress for another worker to take over when its lease expires";
/** The reason recorded on a worker's run whose sprite died with its worker (found by reconciliation); the entry is left likewise. */
export const WORKER_DIED = "the worker died and its sprite with it; the entry is left in_progress for another worker to take over when its lease expires";

function stopGroup(pid: number): void {
  signalGroup(pid, "SIGTERM");
  setTimeout(() => signalGroup(pid, "SIGKILL"), KILL_GRACE_MS).unref();
}

/** Exit of a process that is not our child (re-attached after a restart): poll until it is gone. */
function waitForExit(pid: number, started: string | null, pollMs: number): Promise<Exit> {
  return new Promise((resolveExit) => {
    const check = () => {
      if (!processAlive(pid, started)) resolveExit({ code: null, signal: null });
      else setTimeout(check, pollMs);
    };
    check();
  });
}

/** Read a file from `offset` to its end (or one chunk's worth), handing each chunk over; true if anything was read. */
function readFrom(path: string, offset: number, push: (b: Buffer) => void): boolean {
  let fd: number | null;
  try {
    // The sprite can reach its output files: one it swapped for a FIFO must not block this process.
    fd = openRegularFile(path, "the sprite's output file");
  } catch {
    return false;
  }
  if (fd === null) return false;
  try {
    const size = fstatSync(fd).size;
    if (size <= offset) return false;
    const len = Math.min(READ_CHUNK, size - offset);
    const buf = Buffer.allocUnsafe(len);
    const n = readSync(fd, buf, 0, len, offset);
    if (n > 0) push(buf.subarray(0, n));
    return n > 0;
  } finally {
    closeSync(fd);
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

function spawnSyncGit(args: string[], cwd: string, env: NodeJS.ProcessEnv): string | null {
  const r = spawnSync("git", args, { cwd, env, encoding: "utf8" });
  if (r.error) return r.error.message;
  return r.status === 0 ? null : (r.stderr || `git exited with ${r.status}`).trim();
}
