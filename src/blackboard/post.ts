import { RefusedError, UsageError, contentHash, parseWith } from "../core/index.js";
import type { Queryable } from "../store/index.js";
import type { BoardContext, Stamp } from "./context.js";
import { recordHistory } from "./history.js";
import { readRow, sameOrRefuse, storedJson } from "./rows.js";
import { newId, entryContent, type Status, type StoredEntry } from "./entry.js";
import { EntryInputSchema, EntrySchema, type Entry, type EntryInput } from "./schema.js";
import { OPEN_CHANNEL, openPayload } from "./wake.js";

/**
 * Post an entry as `actor`. Missing id/from/status/timestamps are filled in. Re-posting an id with
 * the same content is a no-op (`created: false`); with different content it is refused.
 */
export async function post(
  ctx: BoardContext,
  actor: string,
  input: EntryInput | unknown,
  source = "entry",
): Promise<{ stored: StoredEntry; created: boolean }> {
  const given = parseWith(EntryInputSchema, input, source, "invalid_entry");
  if (given.project_id !== undefined && given.project_id !== ctx.projectId) {
    throw new UsageError(
      "wrong_project",
      `${source}: project_id "${given.project_id}" is not this project's ("${ctx.projectId}")`,
    );
  }
  const from = given.from ?? actor;
  if (from !== actor && !ctx.humans.includes(actor)) {
    throw new RefusedError(
      "permission_refused",
      `${actor} may not post an entry written by ${from}: the writer of an entry is the actor posting it`,
      { actor, from },
    );
  }
  assertNotInProgress(given.status, given.id ?? "the entry", "posted");
  const now = ctx.now();
  const entry: Entry = parseWith(
    EntrySchema,
    {
      ...given,
      id: given.id ?? newId(ctx, given.kind),
      from,
      project_id: ctx.projectId,
      status: given.status ?? "open",
      payload: given.payload ?? {},
      target_docs: given.target_docs ?? [],
      created_at: given.created_at ?? now.iso,
      updated_at: given.updated_at ?? given.created_at ?? now.iso,
    },
    source,
    "invalid_entry",
  );
  if (ctx.store.dialect === "postgres" && (await insertPg(ctx, entry, actor, now))) {
    return { stored: { entry, version: 1, claimed_by: null, lease_expires_at: null }, created: true };
  }
  const result = await ctx.store.transaction(async (q) => {
    const existing = await readRow(ctx, q, entry.id, true);
    if (existing) return { stored: sameOrRefuse(existing, entry), created: false };
    await insertEntry(ctx, q, entry, { actor, action: "post", at: now });
    if (entry.status === "open") await q.notify(OPEN_CHANNEL, openPayload(entry.to, entry.kind));
    return { stored: { entry, version: 1, claimed_by: null, lease_expires_at: null }, created: true };
  });
  return result;
}

/** Insert a new entry at version 1 and its first history record, inside the caller's transaction. */
export async function insertEntry(
  ctx: BoardContext,
  q: Queryable,
  entry: Entry,
  by: { actor: string; action: string; at: Stamp },
): Promise<void> {
  const { actor, action, at } = by;
  await q.run(
    `INSERT INTO bb_entries (project_id, id, version, status, from_actor, to_actor, kind, created_ms, updated_ms, updated_at, entry_json, content_hash)
     VALUES (?, ?, 1, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [
      ctx.projectId,
      entry.id,
      entry.status,
      entry.from,
      entry.to,
      entry.kind,
      Date.parse(entry.created_at),
      Date.parse(entry.updated_at),
      entry.updated_at,
      storedJson(entry),
      contentHash(entryContent(entry)),
    ],
  );
  await recordHistory(ctx, q, {
    entryId: entry.id,
    version: 1,
    at,
    actor,
    action,
    from: null,
    to: entry.status,
    changes: { entry },
  });
}

/**
 * PostgreSQL: insert entry, history and wake-up in one statement (one round trip); false when the
 * id exists, and the caller compares contents.
 */
async function insertPg(ctx: BoardContext, entry: Entry, actor: string, now: Stamp): Promise<boolean> {
  const row = await ctx.store.get<{ id: string }>(
    // The body and the claim state are two tables (migration 420); the state row follows the body's.
    `WITH body AS (
       INSERT INTO bb_entry_body (project_id, id, from_actor, to_actor, kind, created_ms, entry_json, content_hash)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (project_id, id) DO NOTHING RETURNING project_id, id, to_actor, kind, created_ms
     ), ins AS (
       INSERT INTO bb_entry_state (project_id, id, to_actor, kind, created_ms, version, status, updated_ms, updated_at)
       SELECT project_id, id, to_actor, kind, created_ms, 1, ?, ?, ? FROM body RETURNING id, status, to_actor, kind
     ), hist AS (
       INSERT INTO bb_history (project_id, entry_id, version, at, at_ms, actor, action, from_status, to_status, changes_json)
       SELECT ?, id, 1, ?, ?, ?, 'post', NULL, status, ? FROM ins
     )
     SELECT id, CASE WHEN status = 'open' THEN pg_notify(?, to_actor || chr(10) || kind) END AS woke FROM ins`,
    [
      ctx.projectId,
      entry.id,
      entry.from,
      entry.to,
      entry.kind,
      Date.parse(entry.created_at),
      storedJson(entry),
      contentHash(entryContent(entry)),
      entry.status,
      Date.parse(entry.updated_at),
      entry.updated_at,
      ctx.projectId,
      now.iso,
      now.ms,
      actor,
      JSON.stringify({ entry }),
      ctx.store.channelName(OPEN_CHANNEL),
    ],
  );
  return row !== undefined;
}

/**
 * in_progress means a worker holds a claim (with a lease it renews); an entry that arrives in that
 * state has no claim, so no worker would ever pick it up or take it over.
 */
export function assertNotInProgress(status: Status | undefined, id: string, how: string): void {
  if (status !== "in_progress") return;
  throw new UsageError(
    "invalid_status",
    `${id} cannot be ${how} as in_progress: an entry becomes in_progress when a worker claims it; give it status open and it will be claimed`,
    { entry: id },
  );
}
