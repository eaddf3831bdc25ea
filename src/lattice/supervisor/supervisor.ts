/**
 * The Lattice supervisor: starts a sprite for a role in its workspace, stores what it reports,
 * maps its events onto the blackboard entry, hands actions and proposals to their sinks, resumes
 * waiting sprites, and reconciles unfinished runs after a crash.
 *
 * The sprite's stdout and stderr go to files in the run's directory (not pipes), so a sprite
 * outlives a supervisor crash without a broken pipe: a restarted supervisor re-attaches to a
 * sprite that is still alive by tailing those files and the outbox from the stored offsets until
 * the sprite exits, then settles the run from its events.
 *
 * This class is the composition only: each step of a run's life is its own file beside it —
 * start (gate, record), launch (workspace, sandbox, spawn), follow (the ingest loop), dispatch
 * (sinks), settle, entry-sync, resume, cancel, takeover (fencing) and reconcile — each a function
 * of the shared SupervisorContext (context.ts).
 */
import { join } from "node:path";
import { Blackboard, type StoredEntry } from "../../blackboard/index.js";
import { Redactor, createLogger, secretsFromEnv } from "../../core/index.js";
import type { Project } from "../../config/index.js";
import type { Store } from "../../store/index.js";
import { CheckpointVault, SharedCheckpoints } from "../checkpoint/index.js";
import { machineName } from "./machine.js";
import { RunStore, type GateDecision, type RunRecord } from "../runs/index.js";
import { cancel } from "./cancel.js";
import { DEFAULT_POLL_MS, whenIdle, type SupervisorContext } from "./context.js";
import { syncEntry } from "./entry-sync.js";
import type { ResumeOptions, ResumeResult, StartRunOptions, SupervisorOptions } from "./options.js";
import { reconcile } from "./reconcile.js";
import { queueResume, takeQueuedResume, type QueueResumeOptions } from "./queue.js";
import { resumeRun } from "./resume.js";
import { askGate, startRun } from "./start.js";
import { fenceEntry } from "./takeover.js";

export { DEFAULT_POLL_MS, PARKED_LEASE_MS } from "./context.js";
export { WORKER_DIED, WORKER_STOPPED } from "./entry-sync.js";
export type { ResumeOptions, ResumeResult, StartRunOptions, SupervisorOptions } from "./options.js";
export type { QueueResumeOptions } from "./queue.js";

export class Supervisor {
  readonly runs: RunStore;
  readonly board: Blackboard;
  readonly host: string;
  private readonly ctx: SupervisorContext;

  constructor(options: SupervisorOptions) {
    const env = options.env ?? process.env;
    const redactor = options.redactor ?? new Redactor(secretsFromEnv(env));
    this.host = options.host ?? machineName(env);
    const config = options.project.config;
    this.runs = new RunStore(options.store, config.project_id, options.clock);
    this.board = new Blackboard(options.store, {
      projectId: config.project_id,
      humans: config.humans,
      clock: options.clock,
      leaseMs: options.leaseMs,
    });
    const ctx: SupervisorContext = {
      options,
      store: options.store,
      runs: this.runs,
      board: this.board,
      host: this.host,
      env,
      redactor,
      log: options.logger ?? createLogger("pmagent.lattice", redactor),
      pollMs: options.pollMs ?? DEFAULT_POLL_MS,
      runSecrets: new Map(),
      active: new Map(),
      checkpoints: new CheckpointVault(join(options.project.root, ".pmagent", "checkpoint-store")),
      shared: options.store.dialect === "postgres" ? new SharedCheckpoints(options.store) : null,
      secretStore: undefined,
      bwrap: undefined,
      resumeRun: (runId, o) => this.resumeRun(runId, o),
    };
    this.ctx = ctx;
  }

  get store(): Store {
    return this.ctx.options.store;
  }

  get project(): Project {
    return this.ctx.options.project;
  }

  /** Whether a run gate is configured (then each entry is asked about before it is claimed). */
  get gated(): boolean {
    return this.ctx.options.hooks?.gate !== undefined;
  }

  /** Ask the gate (if any) about a run and record its answer; DENY is recorded, not thrown. */
  askGate(role: string, entry: StoredEntry | null, command: string[]): Promise<GateDecision | null> {
    return askGate(this.ctx, role, entry, command);
  }

  /**
   * Start one run and supervise it until nothing more happens here: it finished, or it waits for
   * input with no action of this supervisor still under way. Refused (no run) when the gate denies.
   */
  startRun(options: StartRunOptions): Promise<RunRecord> {
    return startRun(this.ctx, options);
  }

  /** Resolve once the run's current attempt and every follow-up (sinks, resumes) here are done. */
  whenIdle(runId: string): Promise<RunRecord> {
    return whenIdle(this.ctx, runId);
  }

  /**
   * Map a finished run onto its entry (once; redone by reconciliation after a crash): succeeded →
   * the lane's next entry is posted (idempotent) and the entry is done; failed → error;
   * canceled → canceled.
   */
  syncEntry(run: RunRecord): Promise<void> {
    return syncEntry(this.ctx, run);
  }

  /**
   * Resume a waiting run: check the inputs against its `expected_inputs`, restore the WAITING
   * checkpoint, write `.lattice/resume.json` (0600) and relaunch the sprite. The same resume
   * (checkpoint and payload) again is a no-op.
   */
  resumeRun(runId: string, options: ResumeOptions): Promise<ResumeResult> {
    return resumeRun(this.ctx, runId, options);
  }
  /** Leave a resume for any worker of the run's role, on any machine (`pmagent resume --queue`). */
  queueResume(runId: string, options: QueueResumeOptions): Promise<{ run: RunRecord; noop: boolean }> {
    return queueResume(this.ctx, runId, options);
  }

  /** Carry out the oldest queued resume of `roles` this supervisor wins; undefined when none is queued. */
  takeQueuedResume(roles: readonly string[]): Promise<ResumeResult | undefined> {
    return takeQueuedResume(this.ctx, roles, (runId, o) => this.resumeRun(runId, o));
  }

  /** Cancel a run: stop its sprite (its whole process group) and record why. */
  cancel(runId: string, reason = "canceled by a user"): Promise<RunRecord> {
    return cancel(this.ctx, runId, reason);
  }

  /** Fence the runs of an entry that `worker` has just claimed (a takeover after a lease expired). */
  fenceEntry(entryId: string, worker: string): Promise<RunRecord[]> {
    return fenceEntry(this.ctx, entryId, worker);
  }

  /** After a crash: take over this host's orphaned runs, sync entries, hand over undispatched actions again (reconcile.ts). */
  reconcile(): Promise<RunRecord[]> {
    return reconcile(this.ctx);
  }
}
