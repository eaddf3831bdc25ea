import { RefusedError, contentHash, parseWith } from "../core/index.js";
import type { Queryable } from "../store/index.js";
import { finishClaimPg } from "./claims.js";
import type { BoardContext, Stamp } from "./context.js";
import { recordHistory } from "./history.js";
import { assertMayChange, assertTransition, canTransition } from "./lifecycle.js";
import { checkVersion, requireRow, toStored, writeRow } from "./rows.js";
import { EntrySchema, type Entry, type Status, type StoredEntry } from "./schema.js";
import { OPEN_CHANNEL, openPayload } from "./wake.js";

export interface ChangeOptions {
  /** Refuse the write unless the entry is still at this version. */
  expectedVersion?: number;
  /** A worker completing its claim: refused if the claim was taken over. */
  worker?: string;
  note?: string;
}

export interface EntryPatch {
  status?: Status;
  to?: string;
  kind?: string;
  payload?: Record<string, unknown>;
  target_docs?: Entry["target_docs"];
  note?: string;
  source_issue?: number | string;
  source_comment_id?: number | string;
  source_run_id?: number | string;
}

/** Change an entry's status as `actor` (lifecycle and permission rules apply). */
export async function transition(
  ctx: BoardContext,
  actor: string,
  id: string,
  to: Status,
  options: ChangeOptions = {},
): Promise<StoredEntry> {
  if (
    options.worker !== undefined &&
    options.note === undefined &&
    options.expectedVersion === undefined &&
    ctx.store.dialect === "postgres" &&
    canTransition("in_progress", to)
  ) {
    const done = await finishClaimPg(ctx, actor, id, to, options.worker);
    if (done) return done;
    // Not the simple case (claim lost, refused, unknown entry): the general path says why.
  }
  return change(ctx, actor, id, { status: to, ...(options.note !== undefined ? { note: options.note } : {}) }, options);
}

/** Change fields and/or the status of an entry as `actor`. */
export async function change(
  ctx: BoardContext,
  actor: string,
  id: string,
  patch: EntryPatch,
  options: ChangeOptions = {},
): Promise<StoredEntry> {
  const now = ctx.now();
  return ctx.store.transaction((q) => changeIn(ctx, q, { actor, id, patch, options, now }));
}

/** One change of `change`: `actor` patches entry `id` at `now`. */
export interface ChangeRequest {
  actor: string;
  id: string;
  patch: EntryPatch;
  options: ChangeOptions;
  now: Stamp;
}

/** `change` inside the caller's transaction. */
export async function changeIn(ctx: BoardContext, q: Queryable, request: ChangeRequest): Promise<StoredEntry> {
  const { actor, id, patch, options, now } = request;
  const row = await requireRow(ctx, q, id, true);
  checkVersion(row, options.expectedVersion);
  const current = toStored(row);
  const entry = current.entry;
  const to = patch.status ?? entry.status;
  const what =
    patch.status !== undefined && patch.status !== entry.status
      ? `move it ${entry.status} → ${patch.status}`
      : "change it";
  if (options.worker !== undefined && current.claimed_by !== options.worker) {
    throw new RefusedError(
      "claim_lost",
      `entry ${id}: worker ${options.worker} no longer holds its claim (${current.claimed_by ? `taken over by ${current.claimed_by}` : `not claimed, ${entry.status}`})`,
      { entry: id, worker: options.worker },
    );
  }
  assertMayChange(entry, actor, ctx.humans, what);
  if (patch.status !== undefined && patch.status !== entry.status) assertTransition(entry, patch.status, actor);
  else if (patch.status !== undefined) {
    throw new RefusedError(
      "transition_refused",
      `entry ${id}: ${actor} cannot move it ${entry.status} → ${patch.status} (it is already ${entry.status})`,
      { entry: id, actor, from: entry.status, to: patch.status },
    );
  }
  const next = parseWith(
    EntrySchema,
    { ...entry, ...patch, status: to, updated_at: now.iso },
    `entry ${id}`,
    "invalid_entry",
  );
  const changes: Record<string, unknown> = {};
  for (const key of Object.keys(patch) as Array<keyof EntryPatch>) {
    if (contentHash(entry[key] ?? null) !== contentHash(next[key] ?? null))
      changes[key] = { from: entry[key] ?? null, to: next[key] };
  }
  if (Object.keys(changes).length === 0) return current;
  // A claim ends when the entry leaves in_progress.
  const claim =
    to === "in_progress"
      ? { claimed_by: current.claimed_by, lease_expires_ms: row.lease_expires_ms }
      : { claimed_by: null, lease_expires_ms: null };
  const written = await writeRow(ctx, q, row, next, claim);
  await recordHistory(ctx, q, {
    entryId: id,
    version: written.version,
    at: now,
    actor,
    action: patch.status !== undefined ? "status" : "update",
    from: entry.status,
    to,
    changes,
  });
  if (written.entry.status === "open") await q.notify(OPEN_CHANNEL, openPayload(written.entry.to, written.entry.kind));
  return written;
}
