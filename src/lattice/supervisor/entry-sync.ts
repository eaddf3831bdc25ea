/**
 * A finished run mapped onto its blackboard entry: the lane's next entry posted and the entry
 * done, or an error entry for a human and the entry in error, or the entry canceled.
 */
import { isTerminal, type Entry } from "../../blackboard/index.js";
import { hasCode } from "../../core/index.js";
import { findRole, followUpId, nextStep } from "../../config/index.js";
import { isTerminalRunState, type RunRecord } from "../runs/index.js";
import type { SupervisorContext } from "./context.js";
import { artifactItems, errorEntry, followUpRefs } from "./follow-up.js";

/** The reason a worker records on the run it stops; its entry is left for another worker to take over. */
export const WORKER_STOPPED =
  "the worker stopped; the entry is left in_progress for another worker to take over when its lease expires";
/** The reason recorded on a worker's run whose sprite died with its worker (found by reconciliation); the entry is left likewise. */
export const WORKER_DIED =
  "the worker died and its sprite with it; the entry is left in_progress for another worker to take over when its lease expires";

/**
 * Map a finished run onto its entry (once; redone by reconciliation after a crash): succeeded →
 * the lane's next entry is posted (idempotent) and the entry is done; failed → error;
 * canceled → canceled.
 */
export async function syncEntry(ctx: SupervisorContext, run: RunRecord): Promise<void> {
  try {
    await syncOnce(ctx, run);
  } catch (err) {
    // Two processes syncing the same run (a reconcile beside the run's own supervisor): the second
    // finds the entry finished by the first. Nothing is left to do but to say so.
    if (!hasCode(err, "transition_refused") || !run.entry_id) throw err;
    const entry = await ctx.board.find(run.entry_id);
    if (!entry || !isTerminal(entry.entry.status)) throw err;
    await ctx.runs.update(run.id, { entry_synced: true });
  }
}

async function syncOnce(ctx: SupervisorContext, run: RunRecord): Promise<void> {
  if (!isTerminalRunState(run.state) || run.entry_synced) return;
  if (!run.entry_id) {
    await ctx.runs.update(run.id, { entry_synced: true });
    return;
  }
  const entry = await ctx.board.find(run.entry_id);
  if (entry && !isTerminal(entry.entry.status)) {
    if (run.worker && entry.claimed_by && entry.claimed_by !== run.worker) {
      await ctx.runs.update(run.id, {
        entry_synced: true,
        reason: `${run.reason ? `${run.reason}; ` : ""}entry ${run.entry_id} was taken over by ${entry.claimed_by}; left to it`,
      });
      return;
    }
    if (run.state === "succeeded") {
      await postNext(ctx, run, entry.entry);
      await ctx.board.transition(run.role, run.entry_id, "done", { note: `run ${run.id} succeeded` });
    } else if (run.state === "failed") {
      // A failure reaches a human (roles contract §2.4), besides the entry's own error status.
      const events = await ctx.runs.events(run.id, { types: ["ERROR", "ARTIFACT"] });
      await ctx.board.post(run.role, errorEntry(run, entry.entry, ctx.options.project.config.humans, events));
      await ctx.board.transition(run.role, run.entry_id, "error", {
        note: `run ${run.id} failed: ${run.reason ?? "unknown"}`.slice(0, 2000),
      });
    } else if (run.reason !== WORKER_STOPPED && run.reason !== WORKER_DIED) {
      await ctx.board.transition(run.role, run.entry_id, "canceled", {
        note: `run ${run.id} canceled${run.reason ? `: ${run.reason}` : ""}`,
      });
    }
  }
  await ctx.runs.update(run.id, { entry_synced: true });
}

async function postNext(ctx: SupervisorContext, run: RunRecord, entry: Entry): Promise<void> {
  const { lane, role } = findRole(ctx.options.project.config, run.role);
  const events = await ctx.runs.events(run.id, { types: ["ARTIFACT", "COMPLETED"] });
  const completed = [...events].reverse().find((e) => e.event_type === "COMPLETED");
  const payload = completed?.event.payload as Record<string, unknown> | undefined;
  const outcome = typeof payload?.outcome === "string" ? payload.outcome : undefined;
  const next = nextStep(role, entry, outcome);
  if (!next) return;
  const sentBack = outcome !== undefined && role.on_outcome?.[outcome] !== undefined;
  const routed = !sentBack && (role.routes ?? []).some((r) => r.on === entry.kind);
  const artifacts = artifactItems(run, events);
  const summary = typeof payload?.summary === "string" ? payload.summary : undefined;
  const revision = revisionRequest(payload);
  // Work sent back on an outcome carries the review; a route passes the entry's details on as they came (a router does not rewrite, §3.6.1).
  const details = sentBack
    ? {
        outcome,
        from_role: run.role,
        ...(summary ? { review: summary } : {}),
        ...(revision ? { requested_changes: revision.requested_changes } : {}),
      }
    : (revision ?? (routed && entry.payload.details !== undefined ? entry.payload.details : undefined));
  await ctx.board.post(run.role, {
    id: followUpId(lane, entry.id, next.id_suffix),
    to: next.to,
    kind: next.kind,
    payload: {
      refs: routed
        ? { ...objectRefs(entry), ...followUpRefs(run, entry, artifacts) }
        : followUpRefs(run, entry, artifacts),
      ...(summary ? { summary } : {}),
      ...(details !== undefined ? { details } : {}),
    },
    target_docs: entry.target_docs,
    source_run_id: run.id,
  });
}

/** The entry's own `payload.refs` when it is an object (e.g. the owner's `source_issue`), passed on by a route. */
function objectRefs(entry: Entry): Record<string, unknown> {
  const refs = entry.payload.refs;
  return refs !== null && typeof refs === "object" && !Array.isArray(refs) ? (refs as Record<string, unknown>) : {};
}

/** A soft-gate review that succeeded but asks for changes: carried into the next entry's `payload.details`. */
function revisionRequest(
  payload: Record<string, unknown> | undefined,
): { revision_requested: true; requested_changes: string[] } | undefined {
  if (payload?.revision_requested !== true) return undefined;
  const changes = Array.isArray(payload.requested_changes) ? payload.requested_changes.map(String) : [];
  return { revision_requested: true, requested_changes: changes };
}
