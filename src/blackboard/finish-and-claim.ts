import { change, changeIn, type ChangeOptions, type EntryPatch } from "./change.js";
import { claim, claimChanges, claimIn, claimPg } from "./claims.js";
import type { BoardContext } from "./context.js";
import { finishClaimBatched } from "./finish-claim-batch.js";
import { canTransition } from "./lifecycle.js";
import { toStored } from "./rows.js";
import type { Status, StoredEntry } from "./schema.js";

/**
 * A worker finishing its claim of `id` (moving it to `to` as `actor`, as `transition` with
 * `worker` does) and claiming its next entry (as `claim` does, for `next.role`, default `actor`)
 * in one go. The finish is checked and refused as `transition`'s is, and then nothing is claimed.
 * On PostgreSQL, finish and claim of an open entry are one call of `bb_finish_claim_batch`
 * (migration 50), together with those of the process's other workers finishing at the same
 * moment: one round trip and one commit for all of them (see finish-claim-batch.ts); an expired
 * claim is taken over by a second statement. On SQLite both are one transaction.
 */
export async function finishAndClaim(
  ctx: BoardContext,
  actor: string,
  id: string,
  to: Status,
  next: { worker: string; kinds: readonly string[]; role?: string; leaseMs?: number; note?: string },
): Promise<{ finished: StoredEntry; next: StoredEntry | undefined }> {
  const role = next.role ?? actor;
  const leaseMs = next.leaseMs ?? ctx.leaseMs;
  const options: ChangeOptions = { worker: next.worker, ...(next.note !== undefined ? { note: next.note } : {}) };
  const patch: EntryPatch = { status: to, ...(next.note !== undefined ? { note: next.note } : {}) };
  if (ctx.store.dialect !== "postgres") {
    const now = ctx.now();
    return ctx.store.transaction(async (q) => {
      const finished = await changeIn(ctx, q, { actor, id, patch, options, now });
      return {
        finished,
        next:
          next.kinds.length === 0
            ? undefined
            : await claimIn(ctx, q, { worker: next.worker, role, kinds: next.kinds, leaseMs, now }),
      };
    });
  }
  if (next.note === undefined && next.kinds.length > 0 && canTransition("in_progress", to)) {
    const now = ctx.now();
    const { finished, claimed } = await finishClaimBatched(ctx.store, {
      project: ctx.projectId,
      actor,
      id,
      to,
      worker: next.worker,
      human: ctx.humans.includes(actor),
      role,
      kinds: next.kinds,
      now_ms: now.ms,
      now_iso: now.iso,
      lease_until: now.ms + leaseMs,
      fin_changes: JSON.stringify({ status: { from: "in_progress", to } }),
      claim_changes: JSON.stringify(claimChanges("open", null, next.worker)),
    });
    if (finished) {
      return {
        finished: toStored(finished),
        next: claimed
          ? toStored(claimed)
          : await claimPg(ctx, { worker: next.worker, role, kinds: next.kinds, leaseMs, now: ctx.now() }, true),
      };
    }
    // Not finished (claim lost, refused, unknown entry): the general path says why.
  }
  const finished = await change(ctx, actor, id, patch, options);
  return { finished, next: await claim(ctx, { worker: next.worker, role, kinds: next.kinds, leaseMs }) };
}
