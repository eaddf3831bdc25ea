/**
 * The state one Supervisor shares with its steps (launch, follow, settle, resume, reconcile …):
 * the stores, the runs under way in this process and the per-run bookkeeping around them. Each
 * step is a function taking this context; the Supervisor class builds it and composes the steps.
 */
import { join } from "node:path";
import type { Blackboard } from "../../blackboard/index.js";
import { findRole, type RoleConfig } from "../../config/index.js";
import type { Logger, Redactor } from "../../core/index.js";
import type { Store } from "../../store/index.js";
import type { SecretStore } from "../actions/index.js";
import type { CheckpointVault, SharedCheckpoints } from "../checkpoint/index.js";
import type { RunRecord, RunStore } from "../runs/index.js";
import { findSandboxTool } from "../sandbox/index.js";
import type { ResumeOptions, ResumeResult, SupervisorOptions } from "./options.js";

export const DEFAULT_POLL_MS = 100;
/** A waiting run keeps its entry claimed this long: nobody takes over a sprite that waits for input. */
export const PARKED_LEASE_MS = 7 * 24 * 3600 * 1000;

export interface ActiveRun {
  /** The attempt running here; it settles once the run is settled (read the record with whenIdle). */
  attempt: Promise<void> | null;
  dispatches: Set<Promise<unknown>>;
  child: { pid: number } | null;
}

export interface Exit {
  code: number | null;
  signal: string | null;
  error?: string;
}

export interface SupervisorContext {
  /** What the Supervisor was built with: its project, store, hooks and settings. */
  readonly options: SupervisorOptions;
  readonly store: Store;
  readonly runs: RunStore;
  readonly board: Blackboard;
  readonly host: string;
  /** The supervisor's environment: the allow-list reads from it, its secret values are redacted. */
  readonly env: NodeJS.ProcessEnv;
  readonly redactor: Redactor;
  readonly log: Logger;
  readonly pollMs: number;
  /** Secret inputs handed to a run by this process (any source, e.g. a library caller's resumeRun). */
  readonly runSecrets: Map<string, string[]>;
  readonly active: Map<string, ActiveRun>;
  /** Where WAITING checkpoints are kept, out of the sprites' reach, and restored from. */
  readonly checkpoints: CheckpointVault;
  /** The same checkpoints shared with every machine on the store (PostgreSQL only; null on SQLite, one machine). */
  readonly shared: SharedCheckpoints | null;
  /** Made on first use: a bad secrets.file (outside the root) fails its user, not the supervisor. */
  secretStore: SecretStore | undefined;
  /** The bwrap binary sprites run in (null: unsandboxed), once known. */
  bwrap: string | null | undefined;
  /** The Supervisor's resumeRun (a blocking action's failure resumes its sprite). */
  resumeRun(runId: string, options: ResumeOptions): Promise<ResumeResult>;
}

export function role(ctx: SupervisorContext, name: string): RoleConfig {
  return findRole(ctx.options.project.config, name).role;
}

/** bwrap per the config's `sandbox` mode; throws when it is required and missing. */
export function sandboxTool(ctx: SupervisorContext): string | null {
  if (ctx.bwrap === undefined) {
    const found = findSandboxTool(ctx.options.project.config.sandbox, ctx.env.PATH ?? "");
    if (found.warning) ctx.log.warn({}, found.warning);
    ctx.bwrap = found.bwrap;
  }
  return ctx.bwrap;
}

export function track(ctx: SupervisorContext, runId: string): ActiveRun {
  let a = ctx.active.get(runId);
  if (!a) {
    a = { attempt: null, dispatches: new Set(), child: null };
    ctx.active.set(runId, a);
  }
  return a;
}

/** Resolve once the run's current attempt and every follow-up (sinks, resumes) here are done. */
export async function whenIdle(ctx: SupervisorContext, runId: string): Promise<RunRecord> {
  for (;;) {
    const a = ctx.active.get(runId);
    if (!a) return ctx.runs.get(runId);
    if (a.attempt) {
      const attempt = a.attempt;
      await attempt;
      // An attempt that ended without clearing itself must not be awaited again: awaiting a
      // settled promise in a loop never yields to timers or signals (the process wedges).
      if (a.attempt === attempt) a.attempt = null;
      continue;
    }
    if (a.dispatches.size > 0) {
      await Promise.allSettled([...a.dispatches]);
      continue;
    }
    ctx.active.delete(runId);
    return ctx.runs.get(runId);
  }
}

export async function whenAttemptDone(ctx: SupervisorContext, runId: string): Promise<RunRecord> {
  const a = ctx.active.get(runId);
  if (a?.attempt) await a.attempt;
  return ctx.runs.get(runId);
}

/** The files an attempt's stdout and stderr go to, in the run's directory. */
export function streamFiles(run: RunRecord, attempt = run.attempt): { stdout: string; stderr: string } {
  return { stdout: join(run.run_dir, `stdout.${attempt}.log`), stderr: join(run.run_dir, `stderr.${attempt}.log`) };
}
