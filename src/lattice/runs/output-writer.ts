/**
 * Storing a run's output as ingest hands it over, parsed and batched: its new events, log lines,
 * protocol errors and hard-rule violations, with how far the output is read (the run's row), in
 * the caller's transaction. The only writer of those tables besides RunStore: ingest parses,
 * pairs and batches; this module owns the rows.
 */
import { RefusedError, storableText } from "../../core/index.js";
import type { Queryable, SqlParam } from "../../store/index.js";
import type { OutboxPosition } from "../protocol/index.js";
import { chunks, rows } from "./batch-sql.js";
import { insertEvents, text, type NewEvent } from "./event-insert.js";
import { RUN_NOT_FENCED } from "./fencing.js";
import { notifyRunProgress } from "./progress.js";
import type { StoredEvent } from "./records.js";
import { UsageTally } from "./usage-tally.js";

export type { NewEvent } from "./event-insert.js";

/** Log lines per INSERT (5 parameters each). */
const LOG_INSERT_ROWS = 100;

export interface NewLogLine {
  stream: "stdout" | "stderr" | "supervisor";
  text: string;
}

export interface NewProtocolError {
  source: "stdout" | "outbox";
  line_no: number | null;
  reason: string;
  excerpt: string;
  severity?: "warning";
}

/** A line of the sandbox's violations log (its detail already redacted). */
export interface NewViolation {
  line_no: number;
  rule: string;
  detail: string;
}

/** How far a run's output is stored, as its row says: what each write saves with what it stores. */
export interface OutputPosition {
  outbox: OutboxPosition;
  stdout: number;
  stderr: number;
  logBytes: number;
  logTruncated: boolean;
}

export const samePosition = (a: OutputPosition, b: OutputPosition): boolean =>
  a.outbox.offset === b.outbox.offset &&
  a.outbox.line_no === b.outbox.line_no &&
  a.stdout === b.stdout &&
  a.stderr === b.stderr &&
  a.logBytes === b.logBytes &&
  a.logTruncated === b.logTruncated;

/** Where a run's numbering goes on: its next event and log seq, the last violations line stored. */
export interface OutputCounters {
  seq: number;
  logSeq: number;
  violationsSeen: number;
}

/** One write's worth of a run's output, in the order it is stored. */
export interface RunOutput {
  /** Iterated once per write (a transaction tried again iterates it again). */
  events: Iterable<NewEvent>;
  logs: readonly NewLogLine[];
  errors: readonly NewProtocolError[];
  violations: readonly NewViolation[];
  /** What the run's row says once this write commits. */
  position: OutputPosition;
  now: number;
}

/** What a write did: the counters after it, its new events (those kept), how many were new, whether a usage report was among them. */
export interface OutputWritten {
  counters: OutputCounters;
  fresh: StoredEvent[];
  added: number;
  usage: boolean;
}

/** Writes one run's output (one attempt's); `keep` picks which new events come back as StoredEvents. */
export class RunOutputWriter {
  constructor(
    private readonly runId: string,
    private readonly attempt: number,
    private readonly keep?: (eventType: string) => boolean,
  ) {}

  /** Where numbering goes on, as stored. */
  async counters(q: Queryable): Promise<OutputCounters> {
    const e = await q.get<{ m: number | null }>("SELECT MAX(seq) AS m FROM lattice_run_events WHERE run_id = ?", [
      this.runId,
    ]);
    const l = await q.get<{ m: number | null }>("SELECT MAX(seq) AS m FROM lattice_run_logs WHERE run_id = ?", [
      this.runId,
    ]);
    const v = await q.get<{ m: number | null }>("SELECT MAX(line_no) AS m FROM lattice_violations WHERE run_id = ?", [
      this.runId,
    ]);
    return { seq: Number(e?.m ?? 0) + 1, logSeq: Number(l?.m ?? 0) + 1, violationsSeen: Number(v?.m ?? 0) };
  }

  /** How far the run's row says its output is stored (undefined: no such run). */
  async position(q: Queryable): Promise<OutputPosition | undefined> {
    const row = await q.get<{
      outbox_offset: number;
      outbox_line: number;
      stdout_offset: number;
      stderr_offset: number;
      log_bytes: number;
      log_truncated: number;
    }>(
      "SELECT outbox_offset, outbox_line, stdout_offset, stderr_offset, log_bytes, log_truncated FROM lattice_runs WHERE id = ?",
      [this.runId],
    );
    if (!row) return undefined;
    return {
      outbox: { offset: Number(row.outbox_offset), line_no: Number(row.outbox_line) },
      stdout: Number(row.stdout_offset),
      stderr: Number(row.stderr_offset),
      logBytes: Number(row.log_bytes),
      logTruncated: Number(row.log_truncated) === 1,
    };
  }

  /**
   * Store `out` numbered from `from` (in the caller's transaction), and save its position on the
   * run's row. A fenced run's output is refused (run_fenced: the caller rolls the whole write back),
   * so two sprites never both write one entry.
   */
  async append(q: Queryable, out: RunOutput, from: OutputCounters): Promise<OutputWritten> {
    const fresh: StoredEvent[] = [];
    let added = 0;
    const seq = { next: from.seq };
    const usage = new UsageTally();
    const receivedAt = new Date(out.now).toISOString();
    await insertEvents(q, { runId: this.runId, attempt: this.attempt, now: out.now, seq }, out.events, (c, s) => {
      added++;
      usage.add(c);
      if (!this.keep || this.keep(c.type)) fresh.push(this.storedEvent(c, s, receivedAt));
    });
    // Counted with the events: a report is in the totals exactly when it is stored.
    if (usage.any) await usage.store(q, this.runId);
    let logSeq = from.logSeq;
    for (const chunk of chunks(out.logs, LOG_INSERT_ROWS)) {
      const params: SqlParam[] = [];
      for (const l of chunk) params.push(this.runId, logSeq++, l.stream, l.text, out.now);
      await q.run(
        `INSERT INTO lattice_run_logs (run_id, seq, stream, text, at_ms) VALUES ${rows(chunk.length, 5)}`,
        params,
      );
    }
    for (const e of out.errors) {
      await q.run(
        `INSERT INTO lattice_protocol_errors (run_id, source, line_no, reason, excerpt, at_ms, severity) VALUES (?, ?, ?, ?, ?, ?, ?)`,
        [
          this.runId,
          e.source,
          e.line_no,
          storableText(e.reason),
          storableText(e.excerpt),
          out.now,
          e.severity ?? "error",
        ],
      );
    }
    let seen = from.violationsSeen;
    for (const v of out.violations) {
      if (v.line_no <= seen) continue;
      await q.run(
        `INSERT INTO lattice_violations (run_id, line_no, rule, detail, at_ms) VALUES (?, ?, ?, ?, ?) ON CONFLICT (run_id, line_no) DO NOTHING`,
        [this.runId, v.line_no, storableText(v.rule), storableText(v.detail), out.now],
      );
      seen = v.line_no;
    }
    const t = out.position;
    const saved = await q.run(
      `UPDATE lattice_runs SET outbox_offset = ?, outbox_line = ?, stdout_offset = ?, stderr_offset = ?, log_bytes = ?, log_truncated = ?, updated_ms = ? WHERE id = ? AND ${RUN_NOT_FENCED}`,
      [t.outbox.offset, t.outbox.line_no, t.stdout, t.stderr, t.logBytes, t.logTruncated ? 1 : 0, out.now, this.runId],
    );
    if (
      saved.changes !== 1 &&
      (await q.get("SELECT 1 AS one FROM lattice_runs WHERE id = ?", [this.runId])) !== undefined
    ) {
      throw new RefusedError(
        "run_fenced",
        `run ${this.runId}: its entry was taken over by another worker; the run's late output is refused`,
        { run: this.runId },
      );
    }
    // Followers (`runs logs --follow`, the live streams) read what this write stored once it commits.
    if (added > 0 || out.logs.length > 0) await notifyRunProgress(q, this.runId);
    return { counters: { seq: seq.next, logSeq, violationsSeen: seen }, fresh, added, usage: usage.any };
  }

  private storedEvent(c: NewEvent, seq: number, receivedAt: string): StoredEvent {
    return {
      run_id: this.runId,
      seq,
      id: text(c.id),
      event_type: c.type,
      source: c.source,
      outbox_line: c.outbox_line,
      event: JSON.parse(text(c.json)) as Record<string, unknown>,
      received_at: receivedAt,
      dispatched_at: null,
      dispatch: null,
    };
  }
}
