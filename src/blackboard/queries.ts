import { Keyset, Where, limitClause, type Page, type PageRequest } from "../store/index.js";
import type { BoardContext } from "./context.js";
import { COLS, readRow, requireRow, toStored, type Row } from "./rows.js";
import type { Status, StoredEntry } from "./schema.js";

export interface ListFilter {
  status?: Status | Status[];
  to?: string;
  from?: string;
  kind?: string;
  /** Only entries updated at or after / before these times (ms). */
  updatedSince?: number;
  updatedUntil?: number;
  /** Entries whose id starts with this (a cycle's root id). */
  idPrefix?: string;
  /** Only these entries (an empty list matches none). */
  ids?: readonly string[];
  limit?: number;
}

/** Ids per `IN (…)` list: far below SQLite's and PostgreSQL's parameter limits. */
export const ID_CHUNK = 500;

export function chunked<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** Entries in creation order, then by id: the order of every entry list and page (oldest first). */
export function byCreation(a: StoredEntry, b: StoredEntry): number {
  return (
    Date.parse(a.entry.created_at) - Date.parse(b.entry.created_at) ||
    (a.entry.id < b.entry.id ? -1 : a.entry.id > b.entry.id ? 1 : 0)
  );
}

export async function getEntry(ctx: BoardContext, id: string): Promise<StoredEntry> {
  return toStored(await requireRow(ctx, ctx.store, id));
}

export async function findEntry(ctx: BoardContext, id: string): Promise<StoredEntry | undefined> {
  const row = await readRow(ctx, ctx.store, id);
  return row ? toStored(row) : undefined;
}

export async function listEntries(ctx: BoardContext, filter: ListFilter = {}): Promise<StoredEntry[]> {
  if (filter.ids !== undefined && filter.ids.length > ID_CHUNK) {
    // Long id lists in chunks, merged back into the one order (creation, then id).
    const { ids, limit, ...rest } = filter;
    const parts = await Promise.all(chunked(ids, ID_CHUNK).map((chunk) => listEntries(ctx, { ...rest, ids: chunk })));
    const all = parts.flat().sort(byCreation);
    return limit === undefined ? all : all.slice(0, Math.max(0, Math.floor(limit)));
  }
  if (filter.ids !== undefined && filter.ids.length === 0) return [];
  const statuses = filter.status === undefined ? [] : Array.isArray(filter.status) ? filter.status : [filter.status];
  const where = new Where("project_id = ?", ctx.projectId)
    .in("status", statuses)
    .when("to_actor = ?", filter.to)
    .when("from_actor = ?", filter.from)
    .when("kind = ?", filter.kind)
    .when("updated_ms >= ?", filter.updatedSince)
    .when("updated_ms <= ?", filter.updatedUntil)
    .in("id", filter.ids ?? []);
  if (filter.idPrefix !== undefined) where.add("substr(id, 1, ?) = ?", filter.idPrefix.length, filter.idPrefix);
  const limit = limitClause(filter.limit);
  const rows = await ctx.store.all<Row>(
    `SELECT ${COLS} FROM bb_entries WHERE ${where} ORDER BY created_ms, id${limit}`,
    where.params,
  );
  return rows.map((r) => toStored(r));
}

/** Entries in creation order (`created_ms, id`), oldest first unless asked newest. */
export const ENTRY_KEYS = new Keyset(
  "entries",
  [
    { sql: "created_ms", type: "number" },
    { sql: "id", type: "string" },
  ],
  "oldest",
);

/** The filters a page of entries takes (each served by an index in the list's sort order). */
export type EntryPageFilter = Pick<ListFilter, "status" | "to" | "from" | "kind">;

/** One page of entries, by keyset on `created_ms, id` (see Keyset). */
export async function pageEntries(
  ctx: BoardContext,
  filter: EntryPageFilter,
  request: PageRequest,
): Promise<Page<StoredEntry>> {
  const statuses = filter.status === undefined ? [] : Array.isArray(filter.status) ? filter.status : [filter.status];
  const where = new Where("project_id = ?", ctx.projectId)
    .in("status", statuses)
    .when("to_actor = ?", filter.to)
    .when("from_actor = ?", filter.from)
    .when("kind = ?", filter.kind);
  const plan = ENTRY_KEYS.plan(where, request);
  const rows = await ctx.store.all<Row & { created_ms: number }>(
    `SELECT ${COLS}, created_ms FROM bb_entries WHERE ${where}${plan.sql}`,
    where.params,
  );
  return ENTRY_KEYS.page(
    rows,
    plan,
    (r) => [r.created_ms, r.id],
    (r) => toStored(r),
  );
}
