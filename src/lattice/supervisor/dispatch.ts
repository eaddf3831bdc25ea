/**
 * Newly stored events acted on: PHASE_STARTED moves the entry to in_progress, ACTION_REQUEST and
 * ENVIRONMENT_PROPOSAL go to their sinks without holding up ingestion.
 */
import { retryStoreFaults } from "../../store/index.js";
import type { RunRecord, StoredEvent } from "../runs/index.js";
import { track, whenAttemptDone, type SupervisorContext } from "./context.js";

/**
 * The event types onNewEvents needs for `run`: every type for an `onEvents` hook; otherwise the
 * ones it acts on (PHASE_STARTED only when the run has an entry to move). The ingestor hands on
 * only these (each one parsed again on the storing thread), not a run's every narration event.
 */
export function acted(ctx: SupervisorContext, run: RunRecord): (eventType: string) => boolean {
  if (ctx.options.onEvents !== undefined) return () => true;
  const entry = run.entry_id !== null;
  return (type) => type === "ACTION_REQUEST" || type === "ENVIRONMENT_PROPOSAL" || (entry && type === "PHASE_STARTED");
}

export async function onNewEvents(ctx: SupervisorContext, runId: string, events: StoredEvent[]): Promise<void> {
  // The events are stored: a read a store fault cut off is read again (a failure here leaves them unacted on).
  const run = await retryStoreFaults(() => ctx.runs.get(runId, ctx.store, false));
  ctx.options.onEvents?.(run, events);
  // The entry moves once: a later PHASE_STARTED would only look it up again.
  let started = false;
  for (const e of events) {
    if (e.event_type === "PHASE_STARTED" && run.entry_id && !started) {
      started = true;
      await entryInProgress(ctx, run);
    }
    if (e.event_type === "ACTION_REQUEST" || e.event_type === "ENVIRONMENT_PROPOSAL") void dispatch(ctx, run, e, false);
  }
}

/** PHASE_STARTED → in_progress (when the entry is still open: `pmagent run --entry` without a claim). */
async function entryInProgress(ctx: SupervisorContext, run: RunRecord): Promise<void> {
  const entry = await retryStoreFaults(() => ctx.board.find(run.entry_id!));
  if (entry?.entry.status !== "open") return;
  await ctx.board
    .transition(run.role, run.entry_id!, "in_progress")
    .catch((err) => ctx.log.warn({ run: run.id, err: (err as Error).message }, "entry not moved to in_progress"));
}

/** Hand an event to its sink without holding up ingestion; mark it dispatched when the sink is done. */
export function dispatch(
  ctx: SupervisorContext,
  run: RunRecord,
  event: StoredEvent,
  redelivery: boolean,
): Promise<void> {
  const active = track(ctx, run.id);
  const p = deliver(ctx, run, event, redelivery).catch((err) =>
    ctx.log.error({ run: run.id, event: event.id, err: (err as Error).message }, "sink failed"),
  );
  active.dispatches.add(p);
  void p.finally(() => active.dispatches.delete(p));
  return p;
}

async function deliver(ctx: SupervisorContext, run: RunRecord, event: StoredEvent, redelivery: boolean): Promise<void> {
  const hooks = ctx.options.hooks ?? {};
  const c = { run, event, redelivery };
  if (event.event_type === "ENVIRONMENT_PROPOSAL") {
    const outcome = hooks.proposals
      ? await hooks.proposals.onEnvironmentProposal(c)
      : { status: "recorded", note: "no proposal sink is configured; the proposal is kept as an event" };
    await ctx.runs.markDispatched(event, outcome ?? null);
    return;
  }
  if (hooks.actions) {
    const outcome = await hooks.actions.onActionRequest(c);
    await ctx.runs.markDispatched(event, outcome ?? null);
    return;
  }
  const payload = event.event.payload as { action?: string; blocking?: boolean };
  const message = `no action executor is configured: ${payload.action} was not carried out`;
  await ctx.runs.markDispatched(event, { status: "failed", error: message });
  if (payload.blocking) {
    const settled = await whenAttemptDone(ctx, run.id);
    if (settled.state !== "waiting") return;
    await ctx.resumeRun(run.id, { inputs: {}, failure: { action: String(payload.action), message } });
  }
}
