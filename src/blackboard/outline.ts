import { Where, limitClause } from "../store/index.js";
import type { BoardContext } from "./context.js";
import { ID_CHUNK, chunked } from "./queries.js";
import type { Status } from "./schema.js";

/** Where an entry stands, without its content: what `Blackboard.outline` returns. */
export interface EntryOutline {
  id: string;
  from: string;
  to: string;
  kind: string;
  /** The status at the outline's time. */
  status: Status;
  created_ms: number;
  /** The last change at or before the outline's time. */
  updated_ms: number;
  /**
   * Where status and last change come from: the stored row (not changed since), the entry's last
   * history record up to then, or its creation (imported later: then it stood as first posted, open).
   */
  basis: "stored" | "history" | "posted";
}

export interface OutlineFilter {
  /** The time (ms) to see the board at: entries created later are left out. Default: as stored now. */
  at?: number;
  /** Only entries written by one of these actors (read from an index alone, without the entries). */
  from?: readonly string[];
  /**
   * Only entries whose stored last change is in [updatedSince, updatedBefore): the time as stored,
   * so with `at` in the past this is a superset of the entries changed then as of `at`.
   */
  updatedSince?: number;
  updatedBefore?: number;
  /** Only entries to one of these actors with one of its kinds (a lane's roles and the kinds each picks). */
  addressed?: ReadonlyArray<{ to: string; kinds: readonly string[] }>;
  /** Only these entries (an empty list matches none). */
  ids?: readonly string[];
  /**
   * Only entries before this point in creation order: created earlier, or at the same time with a
   * smaller id (`id: ""` — no id sorts lower: created strictly earlier).
   */
  before?: { created_ms: number; id: string };
  /** Newest first (creation, then id, descending) instead of oldest first. */
  newestFirst?: boolean;
  limit?: number;
}

/**
 * Entries as they stood at `filter.at`, without their content: id, writer, addressee, kind, and
 * the status and last change they had then. Cheap where `list` is not: no entry JSON is read
 * (with `from`, on SQLite the rows come from an index alone; on PostgreSQL the status and time
 * come from each entry's claim state by key, migration 420), and only entries changed after `at`
 * cost a look into their history. Oldest first (creation, then id), or newest first.
 */
export async function outline(ctx: BoardContext, filter: OutlineFilter = {}): Promise<EntryOutline[]> {
  if (filter.ids !== undefined && filter.ids.length > ID_CHUNK) {
    const { ids, limit, ...rest } = filter;
    const parts = (
      await Promise.all(chunked(ids, ID_CHUNK).map((chunk) => outline(ctx, { ...rest, ids: chunk })))
    ).flat();
    const sign = filter.newestFirst === true ? -1 : 1;
    parts.sort((a, b) => sign * (a.created_ms - b.created_ms || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)));
    return limit === undefined ? parts : parts.slice(0, Math.max(0, Math.floor(limit)));
  }
  const where = outlineWhere(ctx, filter);
  if (where === null) return [];
  const order = filter.newestFirst === true ? "created_ms DESC, id DESC" : "created_ms, id";
  // By ids: a column outside the outline index keeps SQLite on the primary key. Without table
  // statistics it takes `project_id = ?` for selective and would scan the whole covering index.
  const extra = filter.ids !== undefined ? ", version" : "";
  const rows = await ctx.store.all<{
    id: string;
    from_actor: string;
    to_actor: string;
    kind: string;
    status: Status;
    created_ms: number;
    updated_ms: number;
  }>(
    `SELECT id, from_actor, to_actor, kind, status, created_ms, updated_ms${extra} FROM bb_entries WHERE ${where} ORDER BY ${order}${limitClause(filter.limit)}`,
    where.params,
  );
  const out: EntryOutline[] = rows.map((r) => ({
    id: r.id,
    from: r.from_actor,
    to: r.to_actor,
    kind: r.kind,
    status: r.status,
    created_ms: Number(r.created_ms),
    updated_ms: Number(r.updated_ms),
    basis: "stored",
  }));
  const at = filter.at;
  if (at === undefined) return out;
  const later = out.filter((e) => e.updated_ms > at);
  if (later.length === 0) return out;
  // Changed after `at`: the last history record up to `at` tells how it stood, else it stood as first posted.
  const last = new Map<string, { to_status: Status; at_ms: number }>();
  for (const chunk of chunked(
    later.map((e) => e.id),
    ID_CHUNK,
  )) {
    // `+at_ms`: no index on the time, so SQLite looks up each entry's history (bb_history_entry)
    // instead of scanning every record up to `at` (bb_history_time). Plain arithmetic in PostgreSQL.
    const h = new Where("project_id = ?", ctx.projectId).in("entry_id", chunk).add("+at_ms <= ?", at);
    const records = await ctx.store.all<{ entry_id: string; to_status: Status; at_ms: number }>(
      `SELECT entry_id, to_status, at_ms FROM bb_history WHERE ${h} ORDER BY seq`,
      h.params,
    );
    for (const r of records) last.set(r.entry_id, r);
  }
  for (const e of later) {
    const record = last.get(e.id);
    if (record) Object.assign(e, { status: record.to_status, updated_ms: Number(record.at_ms), basis: "history" });
    else Object.assign(e, { status: "open", updated_ms: e.created_ms, basis: "posted" });
  }
  return out;
}

/**
 * How many entries `outline(filter)` would give, counted in SQL (with `from`, from an index
 * alone). Every filter but `ids` and `limit` counts; the order does not matter.
 */
export async function outlineCount(
  ctx: BoardContext,
  filter: Omit<OutlineFilter, "ids" | "limit" | "newestFirst"> = {},
): Promise<number> {
  const where = outlineWhere(ctx, filter);
  if (where === null) return 0;
  const row = await ctx.store.get<{ n: number | string }>(
    `SELECT COUNT(*) AS n FROM bb_entries WHERE ${where}`,
    where.params,
  );
  return Number(row?.n ?? 0);
}

/** The WHERE clause of `outline` and `outlineCount`, or null when the filter matches nothing. */
function outlineWhere(ctx: BoardContext, filter: OutlineFilter): Where | null {
  if (filter.from !== undefined && filter.from.length === 0) return null;
  if (filter.ids !== undefined && filter.ids.length === 0) return null;
  const where = new Where("project_id = ?", ctx.projectId)
    .in("from_actor", filter.from ?? [])
    .when("created_ms <= ?", filter.at)
    .when("updated_ms >= ?", filter.updatedSince)
    .when("updated_ms < ?", filter.updatedBefore)
    .in("id", filter.ids ?? []);
  if (filter.addressed !== undefined) {
    const pairs = filter.addressed.filter((a) => a.kinds.length > 0);
    if (pairs.length === 0) return null;
    const params = pairs.flatMap((a) => [a.to, ...a.kinds]);
    where.add(
      `(${pairs.map((a) => `(to_actor = ? AND kind IN (${a.kinds.map(() => "?").join(", ")}))`).join(" OR ")})`,
      ...params,
    );
  }
  if (filter.before !== undefined) {
    // The first term bounds the index range; the second breaks ties at the same time by id.
    where
      .add("created_ms <= ?", filter.before.created_ms)
      .add("(created_ms < ? OR id < ?)", filter.before.created_ms, filter.before.id);
  }
  return where;
}
