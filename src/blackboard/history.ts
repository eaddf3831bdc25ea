import { Keyset, Where, limitClause, type Page, type PageRequest, type Queryable } from "../store/index.js";
import type { BoardContext, Stamp } from "./context.js";
import { chunked, getEntry, ID_CHUNK } from "./queries.js";
import type { HistoryRecord, Status } from "./schema.js";

/** The head of every history insert; PostgreSQL writes complete it with a SELECT (see PgWrite). */
export const HISTORY_INSERT =
  "INSERT INTO bb_history (project_id, entry_id, version, at, at_ms, actor, action, from_status, to_status, changes_json)";

/** One history record as a write appends it. */
export interface HistoryWrite {
  entryId: string;
  /** The entry's version this write made. */
  version: number;
  at: Stamp;
  actor: string;
  action: string;
  /** The status before (null for a new entry) and after. */
  from: Status | null;
  to: Status;
  changes: Record<string, unknown>;
}

/** Append one record to the history, inside the caller's write. */
export async function recordHistory(ctx: BoardContext, q: Queryable, record: HistoryWrite): Promise<void> {
  const { entryId, version, at, actor, action, from, to, changes } = record;
  await q.run(
    `INSERT INTO bb_history (project_id, entry_id, version, at, at_ms, actor, action, from_status, to_status, changes_json) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [ctx.projectId, entryId, version, at.iso, at.ms, actor, action, from, to, JSON.stringify(changes)],
  );
}

/** The append-only history, oldest first: of one entry, or of the whole project. */
export async function readHistory(
  ctx: BoardContext,
  id?: string,
  options: { sinceMs?: number; untilMs?: number; limit?: number } = {},
): Promise<HistoryRecord[]> {
  if (id !== undefined) await getEntry(ctx, id);
  const where = new Where("project_id = ?", ctx.projectId)
    .when("entry_id = ?", id)
    .when("at_ms >= ?", options.sinceMs)
    .when("at_ms <= ?", options.untilMs);
  const limit = limitClause(options.limit);
  const rows = await ctx.store.all<HistoryRow>(
    `SELECT ${HISTORY_COLS} FROM bb_history WHERE ${where} ORDER BY seq${limit}`,
    where.params,
  );
  return rows.map(toRecord);
}

/** History in the order it was written (`seq`), oldest first unless asked newest. */
export const HISTORY_KEYS = new Keyset("history", [{ sql: "seq", type: "number" }], "oldest");

/** One page of the history of one entry (or of the whole project), by keyset on `seq`. */
export async function pageHistory(
  ctx: BoardContext,
  id: string | undefined,
  request: PageRequest,
): Promise<Page<HistoryRecord>> {
  if (id !== undefined) await getEntry(ctx, id);
  const where = new Where("project_id = ?", ctx.projectId).when("entry_id = ?", id);
  const plan = HISTORY_KEYS.plan(where, request);
  const rows = await ctx.store.all<HistoryRow>(
    `SELECT ${HISTORY_COLS} FROM bb_history WHERE ${where}${plan.sql}`,
    where.params,
  );
  return HISTORY_KEYS.page(rows, plan, (r) => [r.seq], toRecord);
}

const HISTORY_COLS = "seq, entry_id, version, at, actor, action, from_status, to_status, changes_json";

interface HistoryRow extends Omit<HistoryRecord, "changes"> {
  changes_json: string;
}

function toRecord(r: HistoryRow): HistoryRecord {
  return {
    seq: Number(r.seq),
    entry_id: r.entry_id,
    version: Number(r.version),
    at: r.at,
    actor: r.actor,
    action: r.action,
    from_status: r.from_status,
    to_status: r.to_status,
    changes: JSON.parse(r.changes_json) as Record<string, unknown>,
  };
}

/** A record's place in the store's history: which entry of which project it moved to which version. */
export interface HistoryMark {
  seq: number;
  project_id: string;
  entry_id: string;
  version: number;
}

const MARK_COLS = "seq, project_id, entry_id, version";
const toMark = (r: HistoryMark): HistoryMark => ({
  seq: Number(r.seq),
  project_id: r.project_id,
  entry_id: r.entry_id,
  version: Number(r.version),
});

/** The last `seq` of the store's history, every project's (0 when empty): one seek in its key. */
export async function historyHead(q: Queryable): Promise<number> {
  const row = await q.get<{ seq: number | null }>("SELECT MAX(seq) AS seq FROM bb_history");
  return Number(row?.seq ?? 0);
}

/**
 * The marks of every project's records after `afterSeq`, in seq order, at most `limit`, by the
 * history's key: what a reader of changes needs, at a cost that follows the changes, not the board.
 */
export async function historyMarksAfter(q: Queryable, afterSeq: number, limit: number): Promise<HistoryMark[]> {
  const rows = await q.all<HistoryMark>(
    `SELECT ${MARK_COLS} FROM bb_history WHERE seq > ? ORDER BY seq${limitClause(limit)}`,
    [afterSeq],
  );
  return rows.map(toMark);
}

/** The marks of these records (those that exist). */
export async function historyMarksAt(q: Queryable, seqs: readonly number[]): Promise<HistoryMark[]> {
  const out: HistoryMark[] = [];
  for (const chunk of chunked(seqs, ID_CHUNK)) {
    const where = new Where().in("seq", chunk);
    out.push(
      ...(await q.all<HistoryMark>(`SELECT ${MARK_COLS} FROM bb_history WHERE ${where}`, where.params)).map(toMark),
    );
  }
  return out;
}
