import { ConflictError, NotFoundError, contentHash } from "../core/index.js";
import type { Queryable, SqlParam } from "../store/index.js";
import type { BoardContext } from "./context.js";
import { entryContent, extraFields, type Status, type StoredEntry } from "./entry.js";
import type { Entry } from "./schema.js";

/** A stored entry's row in `bb_entries`, as read through COLS. */
export interface Row {
  id: string;
  version: number;
  status: Status;
  updated_at: string;
  /** The entry without `status` and `updated_at` (they have their own columns). */
  entry_json: string;
  claimed_by: string | null;
  lease_expires_ms: number | null;
}

/** The columns a stored entry is read from. */
export const COLS = "id, version, status, updated_at, entry_json, claimed_by, lease_expires_ms";

/**
 * A PostgreSQL write as CTEs, and the SELECT of the history record it makes (for HISTORY_INSERT;
 * typed parameters, since two of them may be joined by UNION ALL, which would take them for text).
 */
export interface PgWrite {
  sql: string;
  params: SqlParam[];
  history: { sql: string; params: SqlParam[] };
}

/** What `entry_json` holds: the entry less the fields kept in columns. */
export function storedJson(e: Entry): string {
  const { status: _status, updated_at: _updated, ...rest } = e;
  return JSON.stringify(rest);
}

const FIELD_ORDER = [
  "id",
  "from",
  "to",
  "project_id",
  "kind",
  "status",
  "payload",
  "target_docs",
  "created_at",
  "updated_at",
  "source_issue",
  "source_comment_id",
  "source_run_id",
  "note",
] as const;

/** The entry's fields in the spec's order (status and updated_at come from their columns). */
function specOrder(e: Entry): Entry {
  const out: Record<string, unknown> = {};
  for (const k of FIELD_ORDER) if (e[k] !== undefined) out[k] = e[k];
  // Fields beyond the spec's follow, as they came.
  return { ...out, ...extraFields(e) } as Entry;
}

export function toStored(row: Row): StoredEntry {
  return {
    entry: specOrder({
      ...(JSON.parse(row.entry_json) as Record<string, unknown>),
      status: row.status,
      updated_at: row.updated_at,
    } as Entry),
    version: Number(row.version),
    claimed_by: row.claimed_by,
    lease_expires_at:
      row.lease_expires_ms === null || row.lease_expires_ms === undefined
        ? null
        : new Date(Number(row.lease_expires_ms)).toISOString(),
  };
}

/**
 * PostgreSQL, locked: from the entry's two tables (migration 420), since FOR UPDATE cannot lock
 * the claim state through the view, where it is the nullable side of an outer join.
 */
const LOCKED_PG = `SELECT b.id, s.version, s.status, s.updated_at, b.entry_json, s.claimed_by, s.lease_expires_ms
  FROM bb_entry_body b JOIN bb_entry_state s ON s.project_id = b.project_id AND s.id = b.id
  WHERE b.project_id = ? AND b.id = ? FOR UPDATE`;

export async function readRow(
  ctx: BoardContext,
  q: Queryable,
  id: string,
  forUpdate = false,
): Promise<Row | undefined> {
  const sql =
    forUpdate && q.dialect === "postgres"
      ? LOCKED_PG
      : `SELECT ${COLS} FROM bb_entries WHERE project_id = ? AND id = ?`;
  return q.get<Row>(sql, [ctx.projectId, id]);
}

export async function requireRow(ctx: BoardContext, q: Queryable, id: string, forUpdate = false): Promise<Row> {
  const row = await readRow(ctx, q, id, forUpdate);
  if (!row)
    throw new NotFoundError("entry_not_found", `entry ${id} does not exist in project ${ctx.projectId}`, { entry: id });
  return row;
}

/** Write a changed entry if its version is still `version`; returns the stored result. */
export async function writeRow(
  ctx: BoardContext,
  q: Queryable,
  before: Row,
  next: Entry,
  claim: { claimed_by: string | null; lease_expires_ms: number | null },
): Promise<StoredEntry> {
  const version = Number(before.version) + 1;
  const r = await q.run(
    `UPDATE bb_entries SET version = ?, status = ?, to_actor = ?, kind = ?, updated_ms = ?, updated_at = ?, entry_json = ?, content_hash = ?, claimed_by = ?, lease_expires_ms = ?
     WHERE project_id = ? AND id = ? AND version = ?`,
    [
      version,
      next.status,
      next.to,
      next.kind,
      Date.parse(next.updated_at),
      next.updated_at,
      storedJson(next),
      contentHash(entryContent(next)),
      claim.claimed_by,
      claim.lease_expires_ms,
      ctx.projectId,
      next.id,
      Number(before.version),
    ],
  );
  if (r.changes !== 1) throw staleWrite(next.id, Number(before.version));
  return {
    entry: next,
    version,
    claimed_by: claim.claimed_by,
    lease_expires_at: claim.lease_expires_ms === null ? null : new Date(claim.lease_expires_ms).toISOString(),
  };
}

function staleWrite(id: string, had: number, current?: number): ConflictError {
  return new ConflictError(
    "stale_write",
    `entry ${id} was changed by someone else (you had version ${had}${current === undefined ? "" : `, it is now at ${current}`}): read it again and retry`,
    { entry: id, expected_version: had, current_version: current },
  );
}

export function checkVersion(row: Row, expected: number | undefined): void {
  if (expected !== undefined && Number(row.version) !== expected)
    throw staleWrite(row.id, expected, Number(row.version));
}

/** The stored entry when `entry` has its content; refused when the id holds other content. */
export function sameOrRefuse(existing: Row, entry: Entry): StoredEntry {
  const stored = toStored(existing);
  const a = entryContent(stored.entry);
  const b = entryContent(entry);
  if (contentHash(a) === contentHash(b)) return stored;
  const differing = Object.keys(a).filter((k) => contentHash(a[k] ?? null) !== contentHash(b[k] ?? null));
  throw new ConflictError(
    "entry_exists",
    `entry ${entry.id} already exists with different content (${differing.join(", ")} differ): ids are unique, post it under a new id`,
    {
      entry: entry.id,
      differing,
    },
  );
}
