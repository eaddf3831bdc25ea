/**
 * Storing one run's output: events from stdout and from the outbox (each once, by identity),
 * non-event output as the run's capped log, protocol errors, hard-rule violations.
 *
 * Durable order is outbox → database: the outbox position is saved in the same transaction as
 * the events read up to it, so a supervisor that crashes re-reads from there and the unique
 * (run, event id) key drops what was already stored. The position moves only with that commit: a
 * flush whose transaction fails on a store fault (disk full, connection lost) is tried again as it
 * is, from the last committed state; if the fault outlasts the tries, the ingestor stops with the
 * saved position where it was (no later flush may pass it), failing with INGEST_STORE_FAULT, and
 * `pmagent runs reconcile` reads on from there.
 *
 * The outbox is the main source; a stdout event line is paired with the outbox line it copies by
 * comparing their bytes in order (a sprite writes both in the same order), which costs neither a
 * string nor a hash; a line the outbox does not have (yet) triggers an outbox read, then is parsed
 * and stored from stdout.
 *
 * Here: the per-run loop (streams in, flushes queued one after another, each one transaction).
 * The pairing is copy-matcher.ts; the rows are written by the runs module (RunOutputWriter).
 */
import { storableText, UnavailableError, type Redactor } from "../../core/index.js";
import {
  describeStoreFault,
  type FaultRetryOptions,
  type Queryable,
  retryStoreFaults,
  type Store,
  storeFault,
} from "../../store/index.js";
import {
  DEFAULT_MAX_LINE_BYTES,
  EXCERPT_BYTES,
  LineSplitter,
  type OutboxPosition,
  classifyStdoutLine,
  EXCERPT_CHARS,
  redactEvent,
  identityWarnings,
  type EventIdentity,
} from "../protocol/index.js";
import { BatchCursor, type OutboxBatch, OutboxReader } from "./outbox-reader.js";
import { readViolations } from "../sandbox/index.js";
import {
  RunOutputWriter,
  samePosition,
  type NewEvent,
  type NewLogLine,
  type NewProtocolError,
  type NewViolation,
  type OutputCounters,
  type OutputPosition,
  type OutputWritten,
  type StoredEvent,
} from "../runs/index.js";
import { CopyMatcher, PREFIX } from "./copy-matcher.js";
import { candidatesOf } from "./flush-events.js";

export const DEFAULT_LOG_CAP_BYTES = 1024 * 1024;
/** Outbox lines remembered to recognize their stdout copies; beyond this the oldest are forgotten (the slow path still dedupes). */
const RECENT_OUTBOX_LIMIT = 100_000;
/** How far ahead in the outbox a stdout line's copy is looked for when the two are out of step. */
const COPY_LOOKAHEAD = 64;
/** The tailer stops reading while this many lines wait to be stored. */
const HIGH_WATER_LINES = 20_000;
/** stdout read buffers kept for reuse (see stdoutBuffer): about the HIGH_WATER_LINES a tailer reads ahead, in 1 MB reads. */
const STDOUT_POOL_BUFFERS = 8;
/** Events in one flush from which its transaction counts as large (see TransactionOptions.large). */
const LARGE_BATCH_EVENTS = 1000;
/**
 * Outbox bytes read per flush (~7,500 typical events): one transaction stores them, large enough
 * that a commit's cost is spread over many events, small enough that the decoder thread's first
 * batch arrives soon and the batches decoded ahead stay small (measured: 2 MB stores faster than 8).
 */
const OUTBOX_BATCH_BYTES = 2 * 1024 * 1024;

/** The code of the error a store fault stops an ingestor with (its run is left for `pmagent runs reconcile`). */
export const INGEST_STORE_FAULT = "ingest_store_fault";

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
  /** Called after each commit that stored a usage report (the run's usage rows moved with it). */
  onUsage?: () => void | Promise<void>;
  /** The run's sprite_id and work_item_id: an event claiming others is stored with a protocol warning naming both values. */
  identity?: EventIdentity;
  /**
   * Called after each commit that leaves room in the queue (not `full`): a tailer that stopped
   * reading reads on at once, so stdout keeps in step with the outbox batches being stored (their
   * copies are paired while the batch is at hand, and the batch's buffer is then reused).
   */
  onRoom?: () => void;
  /**
   * How a flush that failed on a store fault is tried again (default: 6 tries over about 3 s;
   * `keepTrying`: on, every few seconds, while the sprite still runs); `onRetry` hears of each failed try.
   */
  retries?: FaultRetryOptions;
}

/** A flush as read, to store in one transaction (as often as it takes). */
interface FlushWrite {
  batches: OutboxBatch[];
  fromStdout: NewEvent[];
  logs: NewLogLine[];
  errors: NewProtocolError[];
  violations: NewViolation[];
  target: OutputPosition;
  now: number;
  large: boolean;
}

/** `bytes` holds the event prefix at `at` (a loop: a call into native code costs more for 14 bytes). */
function hasPrefix(bytes: Buffer, at: number): boolean {
  for (let i = 0; i < PREFIX.length; i++) if (bytes[at + i] !== PREFIX[i]) return false;
  return true;
}

export class RunIngestor {
  private readonly o: Required<
    Omit<IngestOptions, "onNewEvents" | "onUsage" | "keep" | "threadBytes" | "identity" | "onRoom" | "retries">
  > &
    Pick<IngestOptions, "onNewEvents" | "onUsage" | "keep" | "identity" | "onRoom" | "retries">;
  private readonly outboxReader: OutboxReader;
  private readonly writer: RunOutputWriter;
  private readonly stdoutLines: LineSplitter;
  private readonly stderrLines: LineSplitter;
  private readonly copies = new CopyMatcher(RECENT_OUTBOX_LIMIT, COPY_LOOKAHEAD);
  /** Stored outbox batches whose lines (up to `end`, counted as CopyMatcher.added) may still be matched. */
  private readonly held: Array<{ batch: OutboxBatch; end: number }> = [];
  /** Buffers handed out by `stdoutBuffer` (only those go back to the pool). */
  private readonly issued = new WeakSet<ArrayBufferLike>();
  /** Issued buffers pushed as stdout since the last flush took its unmatched lines: their lines may still be held. */
  private stdoutChunks: ArrayBufferLike[] = [];
  /** Issued buffers whose lines are all done with, to read stdout into again. */
  private readonly stdoutPool: ArrayBufferLike[] = [];
  private logs: NewLogLine[] = [];
  private errors: NewProtocolError[] = [];
  /** Identity warnings recorded by this ingestor (each once, whichever stream or batch shows it). */
  private readonly identityWarned = new Set<string>();
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
  /** What the store holds: the state the last commit saved (or the one this ingestor started from). */
  private committed: OutputPosition;
  /** Set when a flush could not be stored: no flush runs after it (it would save a position past what was lost). */
  private stopped: unknown;
  /** A poll queued behind the flush under way and not started yet: a poll meanwhile is the same poll. */
  private queuedPoll: Promise<void> | null = null;
  /** Events stored by this ingestor for the first time. */
  private newCount = 0;

  get stored(): number {
    return this.newCount;
  }

  constructor(options: IngestOptions) {
    this.o = {
      ...options,
      logCapBytes: options.logCapBytes ?? DEFAULT_LOG_CAP_BYTES,
      maxLineBytes: options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES,
      clock: options.clock ?? Date.now,
    };
    this.writer = new RunOutputWriter(options.runId, options.attempt, options.keep);
    this.stdoutLines = new LineSplitter(this.o.maxLineBytes);
    this.stderrLines = new LineSplitter(this.o.maxLineBytes);
    this.outboxReader = new OutboxReader(options.outboxPath, {
      maxLineBytes: this.o.maxLineBytes,
      maxBytes: OUTBOX_BATCH_BYTES,
      redactor: options.redactor,
      ...(options.threadBytes !== undefined ? { threadBytes: options.threadBytes } : {}),
      ...(options.identity ? { identity: options.identity } : {}),
    });
    this.position = options.outbox;
    this.stdoutRead = options.stdoutOffset;
    this.stderrRead = options.stderrOffset;
    this.logBytes = options.logBytes;
    this.logTruncated = options.logTruncated;
    this.committed = {
      outbox: options.outbox,
      stdout: options.stdoutOffset,
      stderr: options.stderrOffset,
      logBytes: options.logBytes,
      logTruncated: options.logTruncated,
    };
  }

  /** True while enough lines wait to be stored that the tailer should stop reading. */
  get full(): boolean {
    return this.copies.waiting + this.logs.length > HIGH_WATER_LINES;
  }

  /** Bytes of stdout/stderr read so far (where the next read of each file starts). */
  get streamOffsets(): { stdout: number; stderr: number } {
    return { stdout: this.stdoutRead, stderr: this.stderrRead };
  }

  /**
   * A buffer of at least `size` bytes to read stdout into and push (`pushStdout`): one the
   * ingestor is done with when it has one, so a long stdout is read into the same few megabytes
   * rather than into fresh memory (a page fault per 4 KiB) per read.
   */
  stdoutBuffer(size: number): Buffer {
    const pooled = this.stdoutPool.pop();
    const buffer = pooled && pooled.byteLength >= size ? Buffer.from(pooled, 0, size) : Buffer.allocUnsafeSlow(size);
    this.issued.add(buffer.buffer);
    return buffer;
  }

  /**
   * The next bytes of stdout; `chunk` is kept (its event lines are read from it), so it must not
   * be reused, unless it came from `stdoutBuffer`: the ingestor reuses those itself.
   */
  pushStdout(chunk: Buffer): void {
    if (this.issued.has(chunk.buffer) && this.stdoutChunks.at(-1) !== chunk.buffer)
      this.stdoutChunks.push(chunk.buffer);
    this.stdoutRead += chunk.length;
    const lines = this.stdoutLines;
    // A line begun in an earlier chunk goes through the splitter up to its end (a copy); the whole
    // lines after it are taken straight from the chunk, as where they lie (no object or view per
    // line); the unfinished rest waits in the splitter.
    let start = 0;
    if (lines.pending) {
      const nl = chunk.indexOf(0x0a);
      start = nl === -1 ? chunk.length : nl + 1;
      for (const raw of lines.push(chunk.subarray(0, start))) this.stdoutLine(raw);
    }
    const max = this.o.maxLineBytes;
    for (let nl = chunk.indexOf(0x0a, start); nl !== -1; nl = chunk.indexOf(0x0a, start)) {
      const lineNo = lines.countLine();
      if (nl - start > max)
        this.stdoutLine({
          kind: "overlong",
          line_no: lineNo,
          size: nl - start,
          head: Buffer.from(chunk.subarray(start, start + EXCERPT_BYTES)),
        });
      else this.stdoutBytes(chunk, start, nl > start && chunk[nl - 1] === 0x0d ? nl - 1 : nl, lineNo);
      start = nl + 1;
    }
    if (start < chunk.length) lines.push(chunk.subarray(start));
    this.schedule();
  }

  /**
   * A whole stdout line, `chunk` from `start` to `end` (without its line end). An event line waits
   * for its outbox copy, as where it lies in the chunk (a view kept for each would be copied by
   * every scavenge until it is matched); only a log line becomes a string here.
   */
  private stdoutBytes(chunk: Buffer, start: number, end: number, lineNo: number): void {
    if (end - start >= PREFIX.length && hasPrefix(chunk, start)) this.copies.addStdout(chunk, start, end, lineNo);
    else this.log("stdout", chunk.toString("utf8", start, end));
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

  /** A line of stdout from the splitter (a copy of its bytes, or an over-long line's head). */
  private stdoutLine(raw: ReturnType<LineSplitter["push"]>[number]): void {
    if (raw.kind === "line") {
      const line = raw.bytes;
      this.stdoutBytes(
        line,
        0,
        line.length > 0 && line[line.length - 1] === 0x0d ? line.length - 1 : line.length,
        raw.line_no,
      );
      return;
    }
    const parsed = classifyStdoutLine(raw, this.o.maxLineBytes, (t) => this.o.redactor.redact(t));
    if (parsed.kind === "protocol_error")
      this.errors.push({ source: "stdout", line_no: parsed.line_no, reason: parsed.reason, excerpt: parsed.excerpt });
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
  log(stream: NewLogLine["stream"], text: string): void {
    if (this.logTruncated) return;
    const size = Buffer.byteLength(text) + 1;
    if (this.logBytes + size > this.o.logCapBytes) {
      this.logTruncated = true;
      this.logs.push({
        stream: "supervisor",
        text: `[pmagent] log truncated: the run's log reached its cap of ${this.o.logCapBytes} bytes; later output is not kept`,
      });
      return;
    }
    this.logBytes += size;
    this.logs.push({ stream, text: storableText(this.o.redactor.redact(text)) });
  }

  protocolError(source: "stdout" | "outbox", lineNo: number | null, reason: string, excerpt = ""): void {
    this.errors.push({
      source,
      line_no: lineNo,
      reason,
      excerpt: this.o.redactor.redact(excerpt.slice(0, EXCERPT_CHARS)),
    });
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

  private enqueue(opts: { outbox: boolean; final?: boolean }, started?: () => void): Promise<void> {
    const next = this.chain.then(() => {
      started?.();
      return this.stopped === undefined ? this.flush(opts) : undefined;
    });
    this.chain = next.catch((err) => {
      this.failure ??= err;
    });
    return this.chain;
  }

  /**
   * Read the outbox now (a timer calls this while the sprite runs). While a flush is tried again
   * and again (a store fault), the timer's polls wait as one, not one each.
   */
  poll(): Promise<void> {
    this.queuedPoll ??= this.enqueue({ outbox: true }, () => (this.queuedPoll = null));
    return this.queuedPoll;
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
      this.errors.push({
        source: "outbox",
        line_no: null,
        reason: `outbox unreadable, no longer read for this run: ${(err as Error).message}`,
        excerpt: "",
      });
      return;
    }
    for (const e of read.errors) {
      if (e.severity === "warning" && !this.firstWarning(e.reason)) continue;
      this.errors.push({
        source: "outbox",
        line_no: e.line_no,
        reason: e.reason,
        excerpt: this.o.redactor.redact(e.excerpt),
        ...(e.severity ? { severity: e.severity } : {}),
      });
    }
    batches.push(read);
    // The line's own text (not redacted): its stdout copy is the same bytes after the prefix.
    for (const c = new BatchCursor(read); c.next();) if (!c.redacted) this.copies.addOutbox(c.bytes, c.json, c.jsonEnd);
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

  /** True the first time this ingestor sees this warning. */
  private firstWarning(reason: string): boolean {
    if (this.identityWarned.has(reason)) return false;
    this.identityWarned.add(reason);
    return true;
  }

  /**
   * Read what waits and store it in one transaction, then hand the new events on. Once anything
   * is read, a failure to store it stops the ingestor (see commit).
   */
  private async flush(opts: { outbox: boolean; final?: boolean }): Promise<void> {
    let stored: { fresh: StoredEvent[]; batches: OutboxBatch[]; usage: boolean };
    try {
      stored = await this.readAndStore(opts);
    } catch (err) {
      this.stop(this.faultError(err, "storing events"));
      throw this.stopped;
    }
    const { fresh, batches, usage } = stored;
    if (!this.full) this.o.onRoom?.();
    // More of the outbox waits: catch up without waiting for the next poll.
    if (this.outboxMore && !this.outboxBroken) this.schedule();
    if (fresh.length > 0 && this.o.onNewEvents) {
      try {
        await this.o.onNewEvents(fresh);
      } catch (err) {
        // Stored, but not acted on: a store fault leaves the run to reconcile (which hands on what
        // is still to be handed on); any other failure is the run's, once its output is stored.
        const failed = this.faultError(err, "handing on stored events");
        if (failed !== err) this.stop(failed);
        throw failed;
      }
    }
    if (usage && this.o.onUsage) {
      try {
        await this.o.onUsage();
      } catch (err) {
        const failed = this.faultError(err, "checking the run's usage");
        if (failed !== err) this.stop(failed);
        throw failed;
      }
    }
    // Stored, and the new events handed on as strings: a batch's bytes are now used only by its
    // outbox lines still waiting for their stdout copies. Batches with none are released.
    for (const b of batches) this.held.push({ batch: b, end: this.copies.added });
    while (this.held.length > 0 && this.held[0]!.end <= this.copies.passed)
      this.outboxReader.release(this.held.shift()!.batch);
  }

  /** Read the outbox and take the streams' waiting lines, and store them: the new events, and the batches read. */
  private async readAndStore(opts: {
    outbox: boolean;
    final?: boolean;
  }): Promise<{ fresh: StoredEvent[]; batches: OutboxBatch[]; usage: boolean }> {
    /** Outbox batches read by this flush: their events are stored, then their bytes released. */
    const batches: OutboxBatch[] = [];
    /** Events only stdout delivered. */
    const fromStdout: NewEvent[] = [];
    const final = opts.final === true;
    if (opts.outbox || final || this.copies.waiting > 0) {
      await this.readOutboxInto(final, batches);
      // A bounded read may stop short of the stdout lines waiting here: read on until the outbox
      // has shown them all or ends, so none is parsed and stored from stdout needlessly. An end
      // seen by a read decoded ahead (started before these stdout lines were read) may be long
      // past: the sprite writes each event to the outbox before stdout, so one more read, started
      // now, holds every waiting line's copy (bench/ingest: without it, a warm decoder thread's
      // reads ran ahead of the writer and two thirds of the events were parsed again from stdout).
      let looked = false;
      for (;;) {
        this.copies.match();
        if (this.copies.waiting === 0 || this.outboxBroken) break;
        if (!this.outboxMore) {
          if (looked) break;
          looked = true;
        }
        await this.readOutboxInto(final, batches);
      }
    }
    // stdout event lines the outbox did not deliver: parse them and store them from stdout.
    // Every stdout line pushed so far is now paired or taken here: once taken (below, before any
    // await), the buffers they were read into hold nothing still needed.
    const spent = this.stdoutChunks;
    this.stdoutChunks = [];
    for (const e of this.copies.takeUnmatched()) {
      const parsed = classifyStdoutLine({ kind: "line", line_no: e.line_no, bytes: e.line }, this.o.maxLineBytes, (t) =>
        this.o.redactor.redact(t),
      );
      if (parsed.kind === "event") {
        if (this.o.identity) {
          for (const w of identityWarnings(parsed.event, this.o.identity)) {
            const reason = this.o.redactor.redact(w.reason);
            if (this.firstWarning(reason))
              this.errors.push({ source: "stdout", line_no: e.line_no, reason, excerpt: "", severity: "warning" });
          }
        }
        const stored = redactEvent(
          this.o.redactor,
          e.line.toString("utf8", PREFIX.length),
          parsed.event.timestamp,
          parsed.id,
        );
        fromStdout.push({
          id: stored.id,
          type: parsed.event.event_type,
          source: "stdout",
          outbox_line: null,
          json: stored.json,
          ts: stored.timestamp,
        });
      } else if (parsed.kind === "protocol_error")
        this.errors.push({ source: "stdout", line_no: parsed.line_no, reason: parsed.reason, excerpt: parsed.excerpt });
    }
    for (const b of spent) if (this.stdoutPool.length < STDOUT_POOL_BUFFERS) this.stdoutPool.push(b);
    const violations = (opts.outbox || opts.final ? readViolations(this.o.violationsPath) : []).map((v) => ({
      ...v,
      detail: this.o.redactor.redact(v.detail),
    }));
    const logs = this.logs;
    const errors = this.errors;
    this.logs = [];
    this.errors = [];
    // What the run's row will say once this flush commits. Only complete lines are stored: a
    // restart re-reads a partial last line from here. The log's size is the one of the lines taken
    // now (later lines are counted by the flush that stores them).
    const target: OutputPosition = {
      outbox: this.position,
      stdout: this.stdoutRead - this.stdoutLines.bufferedBytes,
      stderr: this.stderrRead - this.stderrLines.bufferedBytes,
      logBytes: this.logBytes,
      logTruncated: this.logTruncated,
    };
    let count = fromStdout.length;
    for (const b of batches) count += b.n;
    const { fresh, usage } = await this.commit({
      batches,
      fromStdout,
      logs,
      errors,
      violations,
      target,
      now: this.o.clock(),
      large: count >= LARGE_BATCH_EVENTS,
    });
    return { fresh, batches, usage };
  }

  /**
   * Store a flush in one transaction; on a store fault, try the same flush again (from the last
   * committed state: the failed transaction left nothing). The run's saved state moves only here,
   * with the commit. If the fault outlasts the tries, or the flush fails otherwise, the ingestor
   * stops: a later flush would save a position past this one's events.
   */
  private async commit(w: FlushWrite): Promise<Pick<OutputWritten, "fresh" | "usage">> {
    const moved = !samePosition(w.target, this.committed);
    /** The last try whose statements all ran: if its COMMIT's answer was lost, the row tells whether it took. */
    let ran: OutputWritten | undefined;
    const done = await retryStoreFaults((attempt) => {
      const tryOnce = async (q: Queryable): Promise<OutputWritten> => {
        if (attempt > 1 && ran && moved && (await this.savedIs(q, w.target))) return ran;
        ran = undefined;
        ran = await this.write(q, w, attempt > 1);
        return ran;
      };
      return this.o.store.transaction(tryOnce, { large: w.large });
    }, this.o.retries);
    this.committed = w.target;
    this.nextSeq = done.counters.seq;
    this.nextLogSeq = done.counters.logSeq;
    this.violationsSeen = done.counters.violationsSeen;
    this.newCount += done.added;
    return done;
  }

  /** The run's row holds `saved` (a try whose COMMIT's answer was lost did commit). */
  private async savedIs(q: Queryable, saved: OutputPosition): Promise<boolean> {
    const stored = await this.writer.position(q);
    return stored !== undefined && samePosition(stored, saved);
  }

  /** One try at a flush's statements (`again`: numbering is read from the store, not taken from the last commit). */
  private async write(q: Queryable, w: FlushWrite, again: boolean): Promise<OutputWritten> {
    const from: OutputCounters =
      again || this.nextSeq === 0
        ? await this.writer.counters(q)
        : { seq: this.nextSeq, logSeq: this.nextLogSeq, violationsSeen: this.violationsSeen };
    return this.writer.append(
      q,
      {
        events: candidatesOf(w.batches, w.fromStdout),
        logs: w.logs,
        errors: w.errors,
        violations: w.violations,
        position: w.target,
        now: w.now,
      },
      from,
    );
  }

  /** No flush runs after this one. */
  private stop(err: unknown): void {
    this.stopped ??= err;
  }

  /** A store fault as the error the run is left with (what happened, and what brings the rest in); any other error as it is. */
  private faultError(err: unknown, doing: string): unknown {
    const fault = storeFault(err);
    if (fault === null) return err;
    const line = this.committed.outbox.line_no;
    const stored =
      line > 1 ? `the events before outbox line ${line} are stored` : "none of the outbox's events is stored yet";
    return new UnavailableError(
      INGEST_STORE_FAULT,
      `${describeStoreFault(fault)} while ${doing}: ${(err as Error).message}; ${stored}: once the fault clears, \`pmagent runs reconcile\` stores the rest`,
      {
        cause: err,
        details: { run: this.o.runId, fault },
      },
    );
  }
}
