/**
 * Settling a run after its sprite exited: its state from the attempt's last COMPLETED, ERROR or
 * WAITING, the attempt's stream files removed, then the entry synced or its claim parked.
 */
import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import { hasCode } from "../../core/index.js";
import { EVENT_TYPES, outboxPath, removeResume } from "../protocol/index.js";
import { SANDBOX_WORKSPACE, runHome } from "../sandbox/index.js";
import { createCheckpoint } from "../checkpoint/index.js";
import {
  UNFINISHED_RUN_STATES,
  isTerminalRunState,
  type RunRecord,
  type RunState,
  type RunWaiting,
} from "../runs/index.js";
import { PARKED_LEASE_MS, sandboxTool, streamFiles, type Exit, type SupervisorContext } from "./context.js";
import { handOn } from "./cycle.js";
import { WORKER_DIED, syncEntry } from "./entry-sync.js";
import { roleFetches } from "./redaction.js";

/** Settle a run after its sprite exited: its state from the attempt's last COMPLETED/ERROR/WAITING. */
export async function settle(
  ctx: SupervisorContext,
  runId: string,
  exit: Exit,
  opts: { workerDied?: boolean } = {},
): Promise<void> {
  // The reads here skip counting the run's events: a count walks an index over all of them (tens
  // of milliseconds for a run of a million events). The record callers get is read once, counted,
  // by whenIdle.
  const run = await ctx.runs.get(runId, ctx.store, false);
  const last = await ctx.runs.lastEventOfTypes(runId, run.attempt, ["COMPLETED", "ERROR", "WAITING"]);
  const exitText = exit.error ?? `exit code ${exit.code ?? "unknown"}${exit.signal ? `, signal ${exit.signal}` : ""}`;
  let state: RunState;
  let reason: string | null = null;
  let waiting: RunWaiting | undefined;
  const payload = last ? (JSON.parse(last.event_json) as { payload: Record<string, unknown> }).payload : {};
  if (exit.error) {
    state = "failed";
    reason = exit.error;
  } else if (last?.event_type === "COMPLETED") {
    state = payload.status === "success" ? "succeeded" : "failed";
    if (state === "failed")
      reason = `COMPLETED with status failure${payload.summary ? `: ${String(payload.summary)}` : ""}`;
  } else if (last?.event_type === "ERROR") {
    state = "failed";
    reason = `ERROR: ${String(payload.message)}`;
  } else if (last?.event_type === "WAITING") {
    const checkpoint = String(payload.checkpoint_id);
    const problem = await keepCheckpoint(ctx, run, checkpoint);
    if (problem === undefined) {
      state = "waiting";
      const home = await keepHome(ctx, run);
      waiting = {
        event_id: last.event_id,
        reason: String(payload.reason),
        checkpoint_id: checkpoint,
        expected_inputs: (payload.expected_inputs as Record<string, string> | undefined) ?? {},
        ...(home ? { home_checkpoint_id: home } : {}),
      };
    } else {
      state = "failed";
      reason = problem;
      await ctx.runs.recordProtocolError(runId, { source: "outbox", line_no: null, reason, excerpt: "" });
    }
  } else if (opts.workerDied && run.worker) {
    // It died with its worker (parent-death signal): the entry is another worker's to take over.
    state = "canceled";
    reason = WORKER_DIED;
  } else if (exit.code !== null && !exit.signal && (await spokeNoLattice(ctx, run))) {
    // Any program may be a sprite (README): one that never spoke Lattice ends by its exit status.
    state = exit.code === 0 ? "succeeded" : "failed";
    reason = `the sprite exited with code ${exit.code} and sent no Lattice events, so its exit status decides; ${whereEventsGo(ctx, run)}`;
  } else {
    state = "failed";
    reason = `the sprite ended (${exitText}) without COMPLETED, ERROR or WAITING; ${whereEventsGo(ctx, run)}`;
  }
  if (state === "succeeded" && exit.code !== null && exit.code !== 0) {
    state = "failed";
    reason = `COMPLETED with status success, but the sprite then exited with code ${exit.code}`;
  }
  if (state === "succeeded") {
    // The run's work goes onto its cycle's branch before the next role is asked to start from it.
    const problem = await handOn(
      ctx,
      run,
      run.entry_id,
      typeof payload.outcome === "string" ? payload.outcome : undefined,
    );
    if (problem !== null) {
      state = "failed";
      reason = ctx.redactor.redact(problem);
    }
  }
  await ctx.runs.update(
    runId,
    {
      state,
      reason,
      exit_code: exit.code,
      exit_signal: exit.signal,
      sprite_pid: null,
      finished: isTerminalRunState(state),
      ...(waiting ? { waiting } : {}),
    },
    UNFINISHED_RUN_STATES,
  );
  cleanupStreams(ctx, run);
  const settled = await ctx.runs.get(runId, ctx.store, false);
  if (settled.state === "waiting") await parkClaim(ctx, settled);
  else await syncEntry(ctx, settled);
}

/**
 * Whether the run's sprite never spoke Lattice: its first attempt, no event stored and no line
 * refused as a bad event. A sprite that spoke and then ended without a word crashed mid-protocol.
 */
async function spokeNoLattice(ctx: SupervisorContext, run: RunRecord): Promise<boolean> {
  if (run.attempt !== 1) return false;
  if (await ctx.runs.lastEventOfTypes(run.id, run.attempt, EVENT_TYPES)) return false;
  return (await ctx.runs.protocolErrors(run.id)).length === 0;
}

/**
 * Take the checkpoint a WAITING names into the supervisor's vault, now that the sprite has
 * exited and cannot change it: the resume restores from there (on another machine, from its copy
 * in the shared store). Returns why it cannot, if so.
 */
async function keepCheckpoint(ctx: SupervisorContext, run: RunRecord, checkpoint: string): Promise<string | undefined> {
  try {
    ctx.checkpoints.adopt(run.id, run.checkpoint_dir, checkpoint);
  } catch (err) {
    if (hasCode(err, "checkpoint_not_found")) {
      return `WAITING named checkpoint ${checkpoint}, which does not exist: create it (Sprite.checkpoint() or \`pmagent checkpoint create\`) before emitting WAITING`;
    }
    return `WAITING named checkpoint ${checkpoint}, which cannot be kept for the resume: ${(err as Error).message}`;
  }
  // Shared (PostgreSQL), so any machine can resume the run.
  await ctx.shared?.push(ctx.checkpoints, run.id, checkpoint);
  return undefined;
}

/**
 * Where checkpoints are shared (PostgreSQL), the sprite's HOME is kept with its checkpoint: an
 * agent's session lives there, and a resume on another machine continues it. Taken by the
 * supervisor (links stored as links, never followed) now that the sprite has exited.
 */
async function keepHome(ctx: SupervisorContext, run: RunRecord): Promise<string | undefined> {
  const home = runHome(run.run_dir);
  if (!ctx.shared || !existsSync(home)) return undefined;
  const dir = join(run.run_dir, "home-checkpoints");
  const { id } = createCheckpoint(home, dir);
  ctx.checkpoints.adopt(run.id, dir, id);
  await ctx.shared.push(ctx.checkpoints, run.id, id);
  return id;
}

/**
 * Where the run's events are read from, for the reason of a run that ended without a word: the
 * spec's literal /workspace is the workspace only in the sandbox.
 */
export function whereEventsGo(ctx: SupervisorContext, run: RunRecord): string {
  const outbox = outboxPath(run.workspace);
  if (sandboxTool(ctx) !== null)
    return `its outbox is ${outbox} (/workspace/.lattice/outbox.jsonl in its sandbox, where /workspace is its workspace; LATTICE_WORKSPACE=${run.workspace})`;
  const stray = run.workspace !== SANDBOX_WORKSPACE && existsSync(join(SANDBOX_WORKSPACE, ".lattice", "outbox.jsonl"));
  return `the sprite runs without a sandbox, so its workspace is not /workspace: it is ${run.workspace} (LATTICE_WORKSPACE), its outbox ${outbox} (LATTICE_OUTBOX)${stray ? `; ${join(SANDBOX_WORKSPACE, ".lattice", "outbox.jsonl")} exists outside the workspace and is not read` : ""}`;
}

function cleanupStreams(ctx: SupervisorContext, run: RunRecord): void {
  const f = streamFiles(run);
  rmSync(f.stdout, { force: true });
  rmSync(f.stderr, { force: true });
  // The sprite has exited: a resume that may have carried a credential is not left behind.
  if (run.attempt > 1 && (ctx.runSecrets.has(run.id) || roleFetches(ctx, run.role))) removeResume(run.workspace);
}

/** A waiting run holds its entry's claim without heartbeats until it is resumed. */
async function parkClaim(ctx: SupervisorContext, run: RunRecord): Promise<void> {
  if (!run.worker || !run.entry_id) return;
  await ctx.board.heartbeat(run.worker, run.entry_id, PARKED_LEASE_MS).catch(() => undefined);
}
