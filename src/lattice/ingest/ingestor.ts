/**
 * Storing one run's output: events from stdout and from the outbox (each once, by identity),
 * non-event output as the run's capped log, protocol errors, hard-rule violations.
 *
 * Durable order is outbox → database: the outbox position is saved in the same transaction as
 * the events read up to it, so a supervisor that crashes re-reads from there and the unique
 * (run, event id) key drops what was already stored. The outbox is the main source; a stdout
 * event line is paired with the outbox line it copies by comparing their bytes in order (a sprite
 * writes both in the same order), which costs neither a string nor a hash; a line the outbox does
 * not have (yet) triggers an outbox read, then is parsed and stored from stdout.
 */
import { RefusedError, storableText, type Redactor } from "../../core/index.js";
import type { Queryable, SqlParam, Store } from "../../store/index.js";
import { DEFAULT_MAX_LINE_BYTES, LineSplitter, type OutboxPosition, classifyStdoutLine, EXCERPT_CHARS, redactEvent, EVENT_PREFIX } from "../protocol/index.js";
import { BatchCursor, type OutboxBatch, OutboxReader } from "./outbox-reader.js";
import { readViolations } from "../sandbox/index.js";
import { marks, RUN_NOT_FENCED, type StoredEvent } from "../runs/index.js";

export const DEFAULT_LOG_CAP_BYTES = 1024 * 1024;
/** Outbox lines remembered to recognize their stdout copies; beyond this the oldest are forgotten (the slow path still dedupes). */
const RECENT_OUTBOX_LIMIT = 100_000;
/** How far ahead in the outbox a stdout line's copy is looked for when the two are out of step. */
const COPY_LOOKAHEAD = 64;
/** The tailer stops reading while this many lines wait to be stored. */
const HIGH_WATER_LINES = 20_000;
const INSERT_CHUNK = 100;
/** Events in one flush from which its transaction counts as large (see TransactionOptions.large). */
const LARGE_BATCH_EVENTS = 1000;
/** Event rows per INSERT on SQLite (10 parameters each). */
const SQLITE_INSERT_ROWS = 64;
/** Rows per INSERT on PostgreSQL (sent as one JSON parameter). */
const PG_INSERT_ROWS = 5000;
/**
 * Outbox bytes read per flush (~7,500 typical events): one transaction stores them, large enough
 * that a commit's cost is spread over many events, small enough that the decoder thread's first
 * batch arrives soon and the batches decoded ahead stay small (measured: 2 MB stores faster than 8).
 */
const OUTBOX_BATCH_BYTES = 2 * 1024 * 1024;

export interface IngestOptions {
  store: Store;
  runId: string;
  attempt: number;
  outboxPath: string;
  violationsPath: string;
  outbox: OutboxPosition;
  /** Bytes of the attempt's stdout/stderr files already stored (re-attach continues there). */
  stdoutOffset: number;
  stderrOffset: number;
  logBytes: number;
  logTruncated: boolean;
  redactor: Redactor;
  logCapBytes?: number;
  maxLineBytes?: number;
  clock?: () => number;
  /** Which newly stored events `onNewEvents` gets (default all); the rest are only stored. */
  keep?: (eventType: string) => boolean;
  /** Outbox bytes waiting at or above which a read is decoded on the decoder thread (default 1 MB; 0: always). */
  threadBytes?: number;
  /** Called after each commit with the events it stored for the first time. */
  onNewEvents?: (events: StoredEvent[]) => void | Promise<void>;
}

/**
 * An event to store. From the outbox, its texts are views of the decoded batch's bytes (SQLite
 * takes them as they are; see insertEvents), made only as they are stored (see candidatesOf);
 * from stdout, strings.
 */
interface Candidate {
  id: string | Buffer;
  type: string;
  source: "stdout" | "outbox";
  outbox_line: number | null;
  json: string | Buffer;
  /** The event's timestamp: with the id, its key in the run (see migration 130). */
  ts: string | Buffer;
}

/** A stdout event line: the line (without its line end) and, within it, the event's JSON. */
interface StdoutEvent {
  line: Buffer;
  line_no: number;
}

const PREFIX = Buffer.from(EVENT_PREFIX);
const text = (x: string | Buffer): string => (typeof x === "string" ? x : x.toString("utf8"));

interface PendingLog {
  stream: "stdout" | "stderr" | "supervisor";
  text: string;
}

interface PendingError {
  source: "stdout" | "outbox";
  line_no: number | null;
  reason: string;
  excerpt: string;
}

export class RunIngestor {
  private readonly o: Required<Omit<IngestOptions, "onNewEvents" | "keep" | "threadBytes">> & Pick<IngestOptions, "onNewEvents" | "keep">;
  private readonly outboxReader: OutboxReader;
  private readonly stdoutLines: LineSplitter;
  private readonly stderrLines: LineSplitter;
  private readonly copies = new CopyMatcher(RECENT_OUTBOX_LIMIT, COPY_LOOKAHEAD);
  /** Stored outbox batches whose lines (up to `end`, counted as CopyMatcher.added) may still be matched. */
  private readonly held: Array<{ batch: OutboxBatch; end: number }> = [];
  private logs: PendingLog[] = [];
  private errors: PendingError[] = [];
  private position: OutboxPosition;
  private logBytes: number;
  private logTruncated: boolean;
  private nextSeq = 0;
  private nextLogSeq = 0;
  private violationsSeen = -1;
  private outboxBroken = false;
  /** The last outbox read stopped at OUTBOX_BATCH_BYTES before the file's end. */
  private outboxMore = false;
  private tornReported: number | null = null;
  private chain: Promise<void> = Promise.resolve();
  private scheduled = false;
  /** Set by finish(): no flush may follow the final one (it would write this attempt's offsets over the next attempt's). */
  private finished = false;
  private stdoutRead: number;
  private stderrRead: number;
  private failure: unknown;
  /** Events stored by this ingestor for the first time. */
  private newCount = 0;

  get stored(): number {
    return this.newCount;
  }

  constructor(options: IngestOptions) {
    this.o = { ...options, logCapBytes: options.logCapBytes ?? DEFAULT_LOG_CAP_BYTES, maxLineBytes: options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES, clock: options.clock ?? Date.now };
    this.stdoutLines = new LineSplitter(this.o.maxLineBytes);
    this.stderrLines = new LineSplitter(this.o.maxLineBytes);
    this.outboxReader = new OutboxReader(options.outboxPath, {
      maxLineBytes: this.o.maxLineBytes,
      maxBytes: OUTBOX_BATCH_BYTES,
      redactor: options.redactor,
      ...(options.threadBytes !== undefined ? { threadBytes: options.threadBytes } : {}),
    });
    this.position = options.outbox;
    this.stdoutRead = options.stdoutOffset;
    this.stderrRead = options.stderrOffset;
    this.logBytes = options.logBytes;
    this.logTruncated = options.logTruncated;
  }

  /** True while enough lines wait to be stored that the tailer should stop reading. */
  get full(): boolean {
    return this.copies.waiting + this.logs.length > HIGH_WATER_LINES || this.outboxMore;
  }

  /** Bytes of stdout/stderr read so far (where the next read of each file starts). */
  get streamOffsets(): { stdout: number; stderr: number } {
    return { stdout: this.stdoutRead, stderr: this.stderrRead };
  }

  /** The next bytes of stdout; `chunk` is kept (its event lines are read from it), so it must not be reused. */
  pushStdout(chunk: Buffer): void {
    this.stdoutRead += chunk.length;
    for (const raw of this.stdoutLines.push(chunk, true)) this.stdoutLine(raw, chunk);
    this.schedule();
  }

  pushStderr(chunk: Buffer): void {
    this.stderrRead += chunk.length;
    for (const raw of this.stderrLines.push(chunk)) this.stderrLine(raw);
    this.schedule();
  }

  /** The streams closed: take their last unterminated lines. */
  endStreams(): void {
    for (const raw of this.stdoutLines.end()) this.stdoutLine(raw);
    for (const raw of this.stderrLines.end()) this.stderrLine(raw);
    this.schedule();
  }

  /** A line of stdout (`chunk`: the bytes pushed, which a line may be a view of). */
  private stdoutLine(raw: ReturnType<LineSplitter["push"]>[number], chunk?: Buffer): void {
    if (raw.kind === "line") {
      const line = raw.bytes;
      const end = line.length > 0 && line[line.length - 1] === 0x0d ? line.length - 1 : line.length;
      // An event line waits for its outbox copy, as where it lies in the chunk (a view kept for
      // each would be copied by every scavenge until it is matched); only a log line becomes a
      // string here.
      if (end >= PREFIX.length && PREFIX.compare(line, 0, PREFIX.length) === 0) {
        // A line split across chunks is a copy, which may share its pool with the chunk but lies outside it.
        const at = chunk ? line.byteOffset - chunk.byteOffset : -1;
        if (chunk && line.buffer === chunk.buffer && at >= 0 && at + line.length <= chunk.length) this.copies.addStdout(chunk, at, at + end, raw.line_no);
        else this.copies.addStdout(line, 0, end, raw.line_no);
      } else this.log("stdout", line.toString("utf8", 0, end));
      return;
    }
    const parsed = classifyStdoutLine(raw, this.o.maxLineBytes, (t) => this.o.redactor.redact(t));
    if (parsed.kind === "protocol_error") this.errors.push({ source: "stdout", line_no: parsed.line_no, reason: parsed.reason, excerpt: parsed.excerpt });
  }

  private stderrLine(raw: ReturnType<LineSplitter["push"]>[number]): void {
    if (raw.kind === "line") {
      const text = raw.bytes.toString("utf8");
      this.log("stderr", text.endsWith("\r") ? text.slice(0, -1) : text);
    } else {
      this.log("stderr", `${raw.head.toString("utf8")}… [line of ${raw.size} bytes cut]`);
    }
  }

  /** Queue a log line (redacted) unless the run's log is full; the first line over the cap leaves a marker. */
  log(stream: PendingLog["stream"], text: string): void {
    if (this.logTruncated) return;
    const size = Buffer.byteLength(text) + 1;
    if (this.logBytes + size > this.o.logCapBytes) {
      this.logTruncated = true;
      this.logs.push({ stream: "supervisor", text: `[pmagent] log truncated: the run's log reached its cap of ${this.o.logCapBytes} bytes; later output is not kept` });
      return;
    }
    this.logBytes += size;
    this.logs.push({ stream, text: storableText(this.o.redactor.redact(text)) });
  }

  protocolError(source: "stdout" | "outbox", lineNo: number | null, reason: string, excerpt = ""): void {
    this.errors.push({ source, line_no: lineNo, reason, excerpt: this.o.redactor.redact(excerpt.slice(0, EXCERPT_CHARS)) });
    this.schedule();
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      if (this.finished) return;
      void this.enqueue({ outbox: this.copies.waiting > 0 || this.outboxMore });
    });
  }

  private enqueue(opts: { outbox: boolean; final?: boolean }): Promise<void> {
    const next = this.chain.then(() => this.flush(opts));
    this.chain = next.catch((err) => {
      this.failure ??= err;
    });
    return this.chain;
  }

  /** Read the outbox now (a timer calls this while the sprite runs). */
  poll(): Promise<void> {
    return this.enqueue({ outbox: true });
  }

  /**
   * Drain everything: the last stdout lines, the outbox to its end (a torn last line is recorded
   * as a protocol error: its writer is gone), the violations log. Throws if a write failed.
   */
  async finish(): Promise<void> {
    this.endStreams();
    // The final flushes take everything; a flush scheduled before them would run after them, once
    // the run may have moved on (a resume resets the stream offsets), and store stale offsets.
    // More than one when the outbox holds more than one batch.
    this.finished = true;
    do await this.enqueue({ outbox: true, final: true });
    while (this.outboxMore && !this.failure && !this.outboxBroken);
    if (this.failure) throw this.failure;
  }

  /** Wait for the queued writes; rethrow a failed one. */
  async settle(): Promise<void> {
    await this.chain;
    if (this.failure) throw this.failure;
  }

  /** Read the next outbox batch into `batches` (its events are stored from there; see candidatesOf). */
  private async readOutboxInto(final: boolean, batches: OutboxBatch[]): Promise<void> {
    if (this.outboxBroken) return;
    let read;
    try {
      read = await this.outboxReader.read(this.position);
    } catch (err) {
      this.outboxBroken = true;
      this.errors.push({ source: "outbox", line_no: null, reason: `outbox unreadable, no longer read for this run: ${(err as Error).message}`, excerpt: "" });
      return;
    }
    for (const e of read.errors) this.errors.push({ source: "outbox", line_no: e.line_no, reason: e.reason, excerpt: this.o.redactor.redact(e.excerpt) });
    batches.push(read);
    // The line's own text (not redacted): its stdout copy is the same bytes after the prefix.
    for (const c = new BatchCursor(read); c.next(); ) if (!c.redacted) this.copies.addOutbox(c.bytes, c.json, c.jsonEnd);
    this.position = read.next;
    this.outboxMore = read.more;
    if (final && read.torn && this.tornReported !== read.torn.offset) {
      this.tornReported = read.torn.offset;
      this.errors.push({
        source: "outbox",
        line_no: read.torn.line_no,
        reason: `torn last line: ${read.torn.bytes} bytes at offset ${read.torn.offset} without a newline (the sprite stopped while writing it); not stored`,
        excerpt: "",
      });
    }
  }

  private async initSeq(q: Queryable): Promise<void> {
    if (this.nextSeq > 0) return;
    const e = await q.get<{ m: number | null }>("SELECT MAX(seq) AS m FROM lattice_run_events WHERE run_id = ?", [this.o.runId]);
    const l = await q.get<{ m: number | null }>("SELECT MAX(seq) AS m FROM lattice_run_logs WHERE run_id = ?", [this.o.runId]);
    const v = await q.get<{ m: number | null }>("SELECT MAX(line_no) AS m FROM lattice_violations WHERE run_id = ?", [this.o.runId]);
    this.nextSeq = Number(e?.m ?? 0) + 1;
    this.nextLogSeq = Number(l?.m ?? 0) + 1;
    this.violationsSeen = Number(v?.m ?? 0);
  }

  private async flush(opts: { outbox: boolean; final?: boolean }): Promise<void> {
    /** Outbox batches read by this flush: their events are stored, then their bytes released. */
    const batches: OutboxBatch[] = [];
    /** Events only stdout delivered. */
    const fromStdout: Candidate[] = [];
    const final = opts.final === true;
    if (opts.outbox || final || this.copies.waiting > 0) {
      await this.readOutboxInto(final, batches);
      // A bounded read may stop short of the stdout lines waiting here: read on until the outbox
      // has shown them all or ends, so none is parsed and stored from stdout needlessly.
      for (;;) {
        this.copies.match();
        if (this.copies.waiting === 0 || !this.outboxMore || this.outboxBroken) break;
        await this.readOutboxInto(final, batches);
      }
    }
    // stdout event lines the outbox did not deliver: parse them and store them from stdout.
    for (const e of this.copies.takeUnmatched()) {
      const parsed = classifyStdoutLine({ kind: "line", line_no: e.line_no, bytes: e.line }, this.o.maxLineBytes, (t) => this.o.redactor.redact(t));
      if (parsed.kind === "event") {
        const stored = redactEvent(this.o.redactor, e.line.toString("utf8", PREFIX.length), parsed.event.timestamp, parsed.id);
        fromStdout.push({ id: stored.id, type: parsed.event.event_type, source: "stdout", outbox_line: null, json: stored.json, ts: stored.timestamp });
      } else if (parsed.kind === "protocol_error") this.errors.push({ source: "stdout", line_no: parsed.line_no, reason: parsed.reason, excerpt: parsed.excerpt });
    }
    const violations = opts.outbox || opts.final ? readViolations(this.o.violationsPath) : [];
    const logs = this.logs;
    const errors = this.errors;
    this.logs = [];
    this.errors = [];
    // Only complete lines are stored: a restart re-reads a partial last line from here.
    const stdoutDone = this.stdoutRead - this.stdoutLines.bufferedBytes;
    const stderrDone = this.stderrRead - this.stderrLines.bufferedBytes;
    const fresh: StoredEvent[] = [];
    const now = this.o.clock();
    let count = fromStdout.length;
    for (const b of batches) count += b.n;
    await this.o.store.transaction(async (q) => {
      await this.initSeq(q);
      await this.insertEvents(q, candidatesOf(batches, fromStdout), now, fresh);
      for (const chunk of chunks(logs, INSERT_CHUNK)) {
        const params: SqlParam[] = [];
        for (const l of chunk) params.push(this.o.runId, this.nextLogSeq++, l.stream, l.text, now);
        await q.run(`INSERT INTO lattice_run_logs (run_id, seq, stream, text, at_ms) VALUES ${rows(chunk.length, 5)}`, params);
      }
      for (const e of errors) {
        await q.run(`INSERT INTO lattice_protocol_errors (run_id, source, line_no, reason, excerpt, at_ms) VALUES (?, ?, ?, ?, ?, ?)`, [this.o.runId, e.source, e.line_no, storableText(e.reason), storableText(e.excerpt), now]);
      }
      for (const v of violations) {
        if (v.line_no <= this.violationsSeen) continue;
        await q.run(`INSERT INTO lattice_violations (run_id, line_no, rule, detail, at_ms) VALUES (?, ?, ?, ?, ?) ON CONFLICT (run_id, line_no) DO NOTHING`, [
          this.o.runId,
          v.line_no,
          storableText(v.rule),
          storableText(this.o.redactor.redact(v.detail)),
          now,
        ]);
        this.violationsSeen = v.line_no;
      }
      // A fenced run's late output is refused (the whole flush rolls back): two sprites never both write one entry.
      const saved = await q.run(
        `UPDATE lattice_runs SET outbox_offset = ?, outbox_line = ?, stdout_offset = ?, stderr_offset = ?, log_bytes = ?, log_truncated = ?, updated_ms = ? WHERE id = ? AND ${RUN_NOT_FENCED}`,
        [this.position.offset, this.position.line_no, stdoutDone, stderrDone, this.logBytes, this.logTruncated ? 1 : 0, now, this.o.runId],
      );
      if (saved.changes !== 1 && (await q.get("SELECT 1 AS one FROM lattice_runs WHERE id = ?", [this.o.runId])) !== undefined) {
        throw new RefusedError("run_fenced", `run ${this.o.runId}: its entry was taken over by another worker; the run's late output is refused`, { run: this.o.runId });
      }
    }, { large: count >= LARGE_BATCH_EVENTS });
    // More of the outbox waits: catch up without waiting for the next poll.
    if (this.outboxMore && !this.outboxBroken) this.schedule();
    if (fresh.length > 0 && this.o.onNewEvents) await this.o.onNewEvents(fresh);
    // Stored, and the new events handed on as strings: a batch's bytes are now used only by its
    // outbox lines still waiting for their stdout copies. Batches with none are released.
    for (const b of batches) this.held.push({ batch: b, end: this.copies.added });
    while (this.held.length > 0 && this.held[0]!.end <= this.copies.passed) this.outboxReader.release(this.held.shift()!.batch);
  }

  private stored_(c: Candidate, seq: number, now: number): StoredEvent | null {
    if (this.o.keep && !this.o.keep(c.type)) return null;
    return {
      run_id: this.o.runId,
      seq,
      id: text(c.id),
      event_type: c.type,
      source: c.source,
      outbox_line: c.outbox_line,
      event: JSON.parse(text(c.json)) as Record<string, unknown>,
      received_at: new Date(now).toISOString(),
      dispatched_at: null,
      dispatch: null,
    };
  }

  private async insertEvents(q: Queryable, candidates: Iterable<Candidate>, now: number, fresh: StoredEvent[]): Promise<void> {
    const stored = (c: Candidate, seq: number) => {
      this.newCount++;
      const s = this.stored_(c, seq, now);
      if (s) fresh.push(s);
    };
    // First seen on stdout: now the outbox tells where it belongs. (The casts: on SQLite an
    // outbox event's id and timestamp are bytes; see below.)
    const placeOnOutbox = (c: Candidate) =>
      q.run(`UPDATE lattice_run_events SET outbox_line = ? WHERE run_id = ? AND event_ts = CAST(? AS TEXT) AND event_id = CAST(? AS TEXT) AND outbox_line IS NULL`, [
        c.outbox_line,
        this.o.runId,
        c.ts,
        c.id,
      ]);
    if (q.dialect === "sqlite") {
      // Many rows per statement: one call into SQLite binds a chunk. Statements are cached per
      // chunk size. An outbox event's texts are bound as the bytes they are and cast to TEXT by
      // SQLite (no string, no UTF-8 conversion). An event twice in a batch (its stdout and
      // outbox copies) is inserted once: when fewer rows than the chunk's were inserted, their
      // seqs say which.
      for (const chunk of chunks(candidates, SQLITE_INSERT_ROWS)) {
        const params: SqlParam[] = [];
        const first = this.nextSeq;
        for (const c of chunk) params.push(this.o.runId, this.nextSeq++, this.o.attempt, c.id, c.type, c.source, c.outbox_line, c.json, now, c.ts);
        const r = await q.run(sqliteEventInsert(chunk.length), params);
        // Some were stored before (a re-read after a crash, or a stdout copy): ask which rows are this chunk's.
        const isNew = r.changes === chunk.length ? null : new Set((await q.all<{ seq: number }>(`SELECT seq FROM lattice_run_events WHERE run_id = ? AND seq >= ? AND seq < ?`, [this.o.runId, first, this.nextSeq])).map((x) => Number(x.seq)));
        for (let i = 0; i < chunk.length; i++) {
          const c = chunk[i]!;
          if (isNew === null || isNew.has(first + i)) stored(c, first + i);
          else if (c.outbox_line !== null) await placeOnOutbox(c);
        }
      }
      return;
    }
    // PostgreSQL: the rows go as one JSON array parameter, unpacked by the server, so a batch of
    // thousands costs one short statement instead of thousands of bound parameters. An event
    // twice in a batch goes once (RETURNING tells new rows by id).
    const seen = new Set<string>();
    const unique: Array<Candidate & { id: string; json: string; ts: string }> = [];
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
        const seq = this.nextSeq++;
        seqs.set(c.id, seq);
        return { s: seq, i: c.id, t: c.type, o: c.source, l: c.outbox_line, j: c.json, ts: c.ts };
      });
      const inserted = await q.all<{ event_id: string }>(
        `INSERT INTO lattice_run_events (run_id, seq, attempt, event_id, event_type, source, outbox_line, event_json, received_ms, event_ts)
         SELECT ?, r.s, ?, r.i, r.t, r.o, r.l, r.j, ?, r.ts FROM json_to_recordset(?::json) AS r(s bigint, i text, t text, o text, l bigint, j text, ts text)
         ON CONFLICT (run_id, event_ts, event_id) DO NOTHING RETURNING event_id`,
        [this.o.runId, this.o.attempt, now, JSON.stringify(rowsJson)],
      );
      const isNew = new Set(inserted.map((r) => r.event_id));
      for (const c of chunk) {
        if (isNew.has(c.id)) stored(c, seqs.get(c.id)!);
        else if (c.outbox_line !== null) await placeOnOutbox(c);
      }
    }
  }
}

/**
 * Pairs stdout event lines with the outbox lines they copy, by their bytes, in order. A sprite
 * writes each event to the outbox, then to stdout, so the heads of the two queues are normally
 * the same event. When they are not, the stdout line's copy is looked for a few lines ahead (the
 * outbox lines skipped have no stdout copy here); a line not found there, or still waiting when
 * the outbox has nothing more, is unmatched: parsed and stored from stdout, where the unique key
 * drops it if the outbox had it after all.
 *
 * Lines are kept as where they lie (the buffer, a start and an end, in parallel arrays), not as a
 * view each: thousands wait at a time, and every scavenge would copy each view until matched.
 */
class CopyMatcher {
  /** Outbox lines: the batch bytes each lies in, where its JSON starts and ends. */
  private outBytes: Buffer[] = [];
  private outStart: number[] = [];
  private outEnd: number[] = [];
  private outHead = 0;
  /** Outbox lines removed from the front of the outbox arrays (by compaction). */
  private dropped = 0;
  /** stdout event lines: the buffer each lies in, where the JSON after the prefix starts and ends, its line number. */
  private stdBytes: Buffer[] = [];
  private stdStart: number[] = [];
  private stdEnd: number[] = [];
  private stdLine: number[] = [];
  private stdHead = 0;
  private unmatched: StdoutEvent[] = [];

  constructor(
    private readonly limit: number,
    private readonly lookahead: number,
  ) {}

  /** stdout event lines not yet matched or given up. */
  get waiting(): number {
    return this.stdBytes.length - this.stdHead + this.unmatched.length;
  }

  /** An outbox event's line text (as written, not redacted): `bytes` from `start` to `end`. */
  addOutbox(bytes: Buffer, start: number, end: number): void {
    this.outBytes.push(bytes);
    this.outStart.push(start);
    this.outEnd.push(end);
    // Lines whose copies never came (a sprite writing only its outbox): forget the oldest half.
    if (this.outBytes.length - this.outHead > this.limit) this.outHead = this.outBytes.length - this.limit / 2;
  }

  /** A stdout event line: `bytes` from `start` (where the prefix starts) to `end` (without its line end). */
  addStdout(bytes: Buffer, start: number, end: number, lineNo: number): void {
    this.stdBytes.push(bytes);
    this.stdStart.push(start + PREFIX.length);
    this.stdEnd.push(end);
    this.stdLine.push(lineNo);
  }

  /** Outbox lines added so far. */
  get added(): number {
    return this.dropped + this.outBytes.length;
  }

  /** Outbox lines matched or given up so far (the first `passed` added are no longer looked at). */
  get passed(): number {
    return this.dropped + this.outHead;
  }

  /** Pair what can be paired now. */
  match(): void {
    const outs = this.outBytes.length;
    while (this.stdHead < this.stdBytes.length && this.outHead < outs) {
      const i = this.stdHead;
      const end = Math.min(outs, this.outHead + this.lookahead);
      let j = this.outHead;
      while (j < end && !this.same(i, j)) j++;
      if (j < end) this.outHead = j + 1;
      else if (end - this.outHead < this.lookahead) break; // its copy may be in the next batch
      else this.unmatched.push(this.stdoutEvent(i));
      this.stdHead++;
    }
    if (this.stdHead > 1024 && this.stdHead * 2 > this.stdBytes.length) {
      const h = this.stdHead;
      this.stdBytes = this.stdBytes.slice(h);
      this.stdStart = this.stdStart.slice(h);
      this.stdEnd = this.stdEnd.slice(h);
      this.stdLine = this.stdLine.slice(h);
      this.stdHead = 0;
    }
    if (this.outHead > 1024 && this.outHead * 2 > this.outBytes.length) {
      const h = this.outHead;
      this.outBytes = this.outBytes.slice(h);
      this.outStart = this.outStart.slice(h);
      this.outEnd = this.outEnd.slice(h);
      this.dropped += h;
      this.outHead = 0;
    }
  }

  /** Lines without an outbox copy so far, the ones still waiting included (the outbox has nothing more now). */
  takeUnmatched(): StdoutEvent[] {
    const out = this.unmatched;
    for (let i = this.stdHead; i < this.stdBytes.length; i++) out.push(this.stdoutEvent(i));
    this.unmatched = [];
    this.stdBytes = [];
    this.stdStart = [];
    this.stdEnd = [];
    this.stdLine = [];
    this.stdHead = 0;
    return out;
  }

  private stdoutEvent(i: number): StdoutEvent {
    return { line: this.stdBytes[i]!.subarray(this.stdStart[i]! - PREFIX.length, this.stdEnd[i]!), line_no: this.stdLine[i]! };
  }

  /**
   * stdout line `i` after its prefix is exactly outbox line `j`. Never true of a line of a released
   * batch: its buffer was moved back to the decoder thread, which leaves it empty here.
   */
  private same(i: number, j: number): boolean {
    const out = this.outBytes[j]!;
    const start = this.outStart[j]!;
    const end = this.outEnd[j]!;
    const from = this.stdStart[i]!;
    const to = this.stdEnd[i]!;
    return end > start && out.length >= end && to - from === end - start && this.stdBytes[i]!.compare(out, start, end, from, to) === 0;
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
    const values = new Array(n).fill("(?, ?, ?, CAST(? AS TEXT), ?, ?, ?, CAST(? AS TEXT), ?, CAST(? AS TEXT))").join(", ");
    sql = `INSERT INTO lattice_run_events (run_id, seq, attempt, event_id, event_type, source, outbox_line, event_json, received_ms, event_ts) VALUES ${values} ON CONFLICT (run_id, event_ts, event_id) DO NOTHING`;
    sqliteEventInserts.set(n, sql);
  }
  return sql;
}

function rows(n: number, cols: number): string {
  const one = `(${marks(cols)})`;
  return new Array(n).fill(one).join(", ");
}

function* chunks<T>(items: Iterable<T>, size: number): Generator<T[]> {
  let chunk: T[] = [];
  for (const item of items) {
    chunk.push(item);
    if (chunk.length === size) {
      yield chunk;
      chunk = [];
    }
  }
  if (chunk.length > 0) yield chunk;
}

/**
 * A flush's events in the order they are stored: its outbox batches' events, then those only
 * stdout delivered. An outbox event's views are made as it is reached, so they are garbage once
 * its chunk is stored instead of living (and being copied by every scavenge) for the whole flush.
 */
function candidatesOf(batches: readonly OutboxBatch[], fromStdout: readonly Candidate[]): Iterable<Candidate> {
  // Each iteration starts over: a transaction that ran its body again would store every event.
  return {
    *[Symbol.iterator]() {
      for (const b of batches) {
        for (const c = new BatchCursor(b); c.next(); ) {
          const bytes = c.bytes;
          yield { id: bytes.subarray(c.id, c.idEnd), type: c.type, source: "outbox", outbox_line: c.lineNo, json: bytes.subarray(c.json, c.jsonEnd), ts: bytes.subarray(c.ts, c.tsEnd) };
        }
      }
      yield* fromStdout;
    },
  };
}

