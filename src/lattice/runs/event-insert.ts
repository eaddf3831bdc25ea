/**
 * Storing a flush's events (for RunOutputWriter): each once per run (the unique (run, timestamp, id) key drops a
 * re-read or a stdout copy), numbered in order, in as few statements as the store allows.
 */
import type { Queryable, SqlParam } from "../../store/index.js";
import { chunks } from "./batch-sql.js";

/** Event rows per INSERT on SQLite. */
const SQLITE_INSERT_ROWS = 64;
/** Parameters per event row on SQLite. */
const SQLITE_EVENT_COLUMNS = 10;
/** Rows per INSERT on PostgreSQL (sent as one JSON parameter). */
const PG_INSERT_ROWS = 5000;

/**
 * An event to store, parsed and validated by ingest. From the outbox, its texts are views of the
 * decoded batch's bytes (SQLite takes them as they are; see insertEvents), made only as they are
 * stored; from stdout, strings.
 */
export interface NewEvent {
  id: string | Buffer;
  type: string;
  source: "stdout" | "outbox";
  outbox_line: number | null;
  json: string | Buffer;
  /** The event's timestamp: with the id, its key in the run (see migration 130). */
  ts: string | Buffer;
}

export const text = (x: string | Buffer): string => (typeof x === "string" ? x : x.toString("utf8"));

/** The run the events go to, when they arrived, and the next seq (advanced as rows are numbered). */
export interface EventTarget {
  runId: string;
  attempt: number;
  now: number;
  seq: { next: number };
}

/** Store `candidates`; `stored` is called with each one stored for the first time and its seq. */
export async function insertEvents(
  q: Queryable,
  target: EventTarget,
  candidates: Iterable<NewEvent>,
  stored: (c: NewEvent, seq: number) => void,
): Promise<void> {
  // First seen on stdout: now the outbox tells where it belongs. (The casts: on SQLite an
  // outbox event's id and timestamp are bytes; see below.)
  const placeOnOutbox = (c: NewEvent) =>
    q.run(
      `UPDATE lattice_run_events SET outbox_line = ? WHERE run_id = ? AND event_ts = CAST(? AS TEXT) AND event_id = CAST(? AS TEXT) AND outbox_line IS NULL`,
      [c.outbox_line, target.runId, c.ts, c.id],
    );
  if (q.dialect === "sqlite") {
    // Many rows per statement: one call into SQLite binds a chunk. Statements are cached per
    // chunk size. An outbox event's texts are bound as the bytes they are and cast to TEXT by
    // SQLite (no string, no UTF-8 conversion). An event twice in a batch (its stdout and
    // outbox copies) is inserted once: when fewer rows than the chunk's were inserted, their
    // seqs say which.
    // The chunk is filled straight from the events (no chunk generator, no params built by
    // push): a flush of thousands of events makes no object per event beyond its own.
    const cols = SQLITE_EVENT_COLUMNS;
    let chunk: NewEvent[] = [];
    let params: SqlParam[] = new Array<SqlParam>(SQLITE_INSERT_ROWS * cols);
    const storeChunk = async () => {
      const n = chunk.length;
      const first = target.seq.next - n;
      const r = await q.run(sqliteEventInsert(n), n === SQLITE_INSERT_ROWS ? params : params.slice(0, n * cols));
      // Some were stored before (a re-read after a crash, or a stdout copy): ask which rows are this chunk's.
      const isNew =
        r.changes === n
          ? null
          : new Set(
              (
                await q.all<{ seq: number }>(
                  `SELECT seq FROM lattice_run_events WHERE run_id = ? AND seq >= ? AND seq < ?`,
                  [target.runId, first, target.seq.next],
                )
              ).map((x) => Number(x.seq)),
            );
      for (let i = 0; i < n; i++) {
        const c = chunk[i]!;
        if (isNew === null || isNew.has(first + i)) stored(c, first + i);
        else if (c.outbox_line !== null) await placeOnOutbox(c);
      }
    };
    const { runId, attempt, now } = target;
    for (const c of candidates) {
      let at = chunk.length * cols;
      chunk.push(c);
      params[at++] = runId;
      params[at++] = target.seq.next++;
      params[at++] = attempt;
      params[at++] = c.id;
      params[at++] = c.type;
      params[at++] = c.source;
      params[at++] = c.outbox_line;
      params[at++] = c.json;
      params[at++] = now;
      params[at] = c.ts;
      if (chunk.length === SQLITE_INSERT_ROWS) {
        await storeChunk();
        chunk = [];
        params = new Array<SqlParam>(SQLITE_INSERT_ROWS * cols);
      }
    }
    if (chunk.length > 0) await storeChunk();
    return;
  }
  // PostgreSQL: the rows go as one JSON array parameter, unpacked by the server, so a batch of
  // thousands costs one short statement instead of thousands of bound parameters. An event
  // twice in a batch goes once (RETURNING tells new rows by id).
  const seen = new Set<string>();
  const unique: Array<NewEvent & { id: string; json: string; ts: string }> = [];
  for (const c of candidates) {
    const id = text(c.id);
    if (!seen.has(id)) {
      seen.add(id);
      unique.push({ ...c, id, json: text(c.json), ts: text(c.ts) });
    }
  }
  for (const chunk of chunks(unique, PG_INSERT_ROWS)) {
    const seqs = new Map<string, number>();
    const rowsJson = chunk.map((c) => {
      const seq = target.seq.next++;
      seqs.set(c.id, seq);
      return { s: seq, i: c.id, t: c.type, o: c.source, l: c.outbox_line, j: c.json, ts: c.ts };
    });
    const inserted = await q.all<{ event_id: string }>(
      `INSERT INTO lattice_run_events (run_id, seq, attempt, event_id, event_type, source, outbox_line, event_json, received_ms, event_ts)
       SELECT ?, r.s, ?, r.i, r.t, r.o, r.l, r.j, ?, r.ts FROM json_to_recordset(?::json) AS r(s bigint, i text, t text, o text, l bigint, j text, ts text)
       ON CONFLICT (run_id, event_ts, event_id) DO NOTHING RETURNING event_id`,
      [target.runId, target.attempt, target.now, JSON.stringify(rowsJson)],
    );
    const isNew = new Set(inserted.map((r) => r.event_id));
    for (const c of chunk) {
      if (isNew.has(c.id)) stored(c, seqs.get(c.id)!);
      else if (c.outbox_line !== null) await placeOnOutbox(c);
    }
  }
}

const sqliteEventInserts = new Map<number, string>();

/**
 * The SQLite insert of `n` events, one string per `n` (the store finds its prepared statement by
 * the text: a new string of kilobytes each time would be hashed each time). The id, the JSON and
 * the timestamp may be bound as bytes (see insertEvents).
 */
function sqliteEventInsert(n: number): string {
  let sql = sqliteEventInserts.get(n);
  if (sql === undefined) {
    const values = new Array(n)
      .fill("(?, ?, ?, CAST(? AS TEXT), ?, ?, ?, CAST(? AS TEXT), ?, CAST(? AS TEXT))")
      .join(", ");
    sql = `INSERT INTO lattice_run_events (run_id, seq, attempt, event_id, event_type, source, outbox_line, event_json, received_ms, event_ts) VALUES ${values} ON CONFLICT (run_id, event_ts, event_id) DO NOTHING`;
    sqliteEventInserts.set(n, sql);
  }
  return sql;
}
