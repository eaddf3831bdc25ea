/**
 * Reading a run's outbox for the ingestor, in bounded batches, with large reads decoded on a
 * thread of their own. Decoding (JSON parse, schema check, identity hash) costs about as much as
 * storing; on its own thread it overlaps the previous batch's inserts, and while one batch is
 * stored the next is already being decoded (prefetch). Small reads (a live run's few new lines)
 * are decoded in place: a thread hop would only add latency. Both paths run `decodeBatch`, so a
 * line means the same whichever decodes it.
 */
import { closeSync, readSync, statSync } from "node:fs";
import { availableParallelism } from "node:os";
import type { Worker } from "node:worker_threads";
import { hasCode, Redactor, startThread, UnavailableError } from "../../core/index.js";
import {
  openRegularFile,
  readOutbox,
  type OutboxEvent,
  type OutboxPosition,
  type OutboxRead,
  redactEvent,
  type ProtocolError,
  EVENT_TYPES,
  type EventType,
  IdentityWarnings,
  type EventIdentity,
} from "../protocol/index.js";

/**
 * A decoded batch of outbox events, as the ingestor stores them: one buffer of bytes holding, per
 * event, a record with its stored JSON text, timestamp and identity (views of it are bound to
 * SQLite as they are, and compared with stdout lines byte for byte), so that no string is made per
 * event on the ingesting thread and the batch crosses from the decoder thread without a copy. A
 * batch from the thread is handed back with `OutboxReader.release` once stored, so its buffer is
 * reused instead of a new one being allocated (and faulted in, page by page) for every batch.
 */
export interface OutboxBatch {
  n: number;
  /** The events' records (see RECORD_HEADER), one after the other. */
  bytes: Buffer;
  errors: ProtocolError[];
  next: OutboxPosition;
  torn: OutboxRead["torn"];
  more: boolean;
  /** Made on the decoder thread (its buffer goes back there once released). */
  fromThread?: boolean;
  /** Added to the line numbers of the batch's records (a read split off ahead numbers its lines from 1; see OutboxReader). */
  lineBase?: number;
}

export interface OutboxReadOptions {
  maxLineBytes: number;
  maxBytes: number;
  /** The run's identity: an event claiming another gets a warning (with the batch's errors), once per value in a batch. */
  identity?: EventIdentity;
  /** Read exactly up to this offset (see readOutbox). */
  to?: number;
}

/** Outbox bytes waiting to be read at or above which a read is decoded on the decoder thread. */
export const DEFAULT_THREAD_BYTES = 1024 * 1024;

const ID_CHARS = 64;
/**
 * An event's record: its text's byte length (u32), its timestamp's (u32), its line number (f64),
 * its index in EVENT_TYPES (u8), whether its text is redacted (u8); then the text, the timestamp
 * and the identity (64 hex characters).
 */
const RECORD_HEADER = 18;

/**
 * Walks a batch's events in order: after each `next()` that returns true, the fields say where the
 * event's parts lie in `bytes` (start inclusive, end exclusive). Nothing is allocated per event,
 * so a caller that keeps only offsets keeps nothing for the garbage collector to copy.
 */
export class BatchCursor {
  readonly bytes: Buffer;
  json = 0;
  jsonEnd = 0;
  ts = 0;
  tsEnd = 0;
  id = 0;
  idEnd = 0;
  type: EventType = "INFO";
  lineNo = 0;
  /** The stored text is redacted (it differs from the line the sprite wrote). */
  redacted = false;
  private at = 0;
  private left: number;
  private readonly lineBase: number;

  constructor(batch: OutboxBatch) {
    this.bytes = batch.bytes;
    this.left = batch.n;
    this.lineBase = batch.lineBase ?? 0;
  }

  next(): boolean {
    if (this.left === 0) return false;
    this.left--;
    const bytes = this.bytes;
    const at = this.at;
    this.json = at + RECORD_HEADER;
    this.jsonEnd = this.json + bytes.readUInt32LE(at);
    this.ts = this.jsonEnd;
    this.tsEnd = this.ts + bytes.readUInt32LE(at + 4);
    this.id = this.tsEnd;
    this.idEnd = this.id + ID_CHARS;
    this.lineNo = bytes.readDoubleLE(at + 8) + this.lineBase;
    this.type = EVENT_TYPES[bytes[at + 16]!]!;
    this.redacted = bytes[at + 17] === 1;
    this.at = this.idEnd;
    return true;
  }
}

const TYPE_INDEX = new Map<string, number>(EVENT_TYPES.map((t, i) => [t, i]));

/**
 * Packs events as they are read, redacted, so that what is decoded is garbage at once (not held
 * for the whole batch) and what is kept is one buffer.
 */
export class BatchPacker {
  private bytes: Buffer;
  private used = 0;
  private n = 0;
  private readonly errors: ProtocolError[] = [];
  private readonly identity: IdentityWarnings | null;

  /**
   * `expectedBytes`: about how many bytes of lines the batch will read (the buffer grows past it
   * if need be); `spare`: a released buffer to fill if it is large enough.
   */
  constructor(
    private readonly redactor: Redactor,
    expectedBytes: number,
    spare?: ArrayBuffer,
    identity?: EventIdentity,
  ) {
    this.identity = identity ? new IdentityWarnings(identity) : null;
    // Each event adds its timestamp, identity and header to its text: half as much again covers lines of ~200 bytes.
    const size = Math.ceil(expectedBytes * 1.5) + 4096;
    this.bytes = spare && spare.byteLength >= size ? Buffer.from(spare) : Buffer.allocUnsafeSlow(size);
  }

  readonly add = (item: OutboxEvent | ProtocolError): void => {
    if (item.kind === "protocol_error") {
      this.errors.push(item);
      return;
    }
    if (this.identity) {
      for (const reason of this.identity.check(item.event))
        this.errors.push({
          kind: "protocol_error",
          line_no: item.line_no,
          reason: this.redactor.redact(reason),
          excerpt: "",
          severity: "warning",
        });
    }
    const { json, timestamp, id } = redactEvent(this.redactor, item.text, item.event.timestamp, item.id);
    if (json === item.text && item.bytes) {
      // Stored as written: the line's bytes are copied as they are (no encoding), then the
      // timestamp and the id, ASCII both (an ISO date-time, hex).
      const { buffer, start, end } = item.bytes;
      const len = end - start;
      const tail = timestamp + id;
      this.reserve(RECORD_HEADER + len + tail.length);
      const at = this.used;
      this.bytes.set(buffer.subarray(start, end), at + RECORD_HEADER);
      this.bytes.write(tail, at + RECORD_HEADER + len, "latin1");
      this.header(at, len, timestamp.length, item, false);
      this.used += RECORD_HEADER + len + tail.length;
      this.n++;
      return;
    }
    // One write for the three (the id is hex): at most 3 UTF-8 bytes per UTF-16 unit.
    const all = json + timestamp + id;
    this.reserve(RECORD_HEADER + 3 * all.length);
    const at = this.used;
    const written = this.bytes.write(all, at + RECORD_HEADER);
    // As many bytes as units: all ASCII, so each part's length is its byte length.
    const ascii = written === all.length;
    this.header(
      at,
      ascii ? json.length : Buffer.byteLength(json),
      ascii ? timestamp.length : Buffer.byteLength(timestamp),
      item,
      json !== item.text,
    );
    this.used += RECORD_HEADER + written;
    this.n++;
  };

  private header(at: number, jsonBytes: number, tsBytes: number, item: OutboxEvent, redacted: boolean): void {
    this.bytes.writeUInt32LE(jsonBytes, at);
    this.bytes.writeUInt32LE(tsBytes, at + 4);
    this.bytes.writeDoubleLE(item.line_no, at + 8);
    this.bytes[at + 16] = TYPE_INDEX.get(item.event.event_type)!;
    this.bytes[at + 17] = redacted ? 1 : 0;
  }

  private reserve(n: number): void {
    if (this.used + n <= this.bytes.length) return;
    const bigger = Buffer.allocUnsafeSlow(Math.max(2 * this.bytes.length, this.used + n));
    this.bytes.copy(bigger, 0, 0, this.used);
    this.bytes = bigger;
  }

  finish(read: Omit<OutboxRead, "items">): OutboxBatch {
    return {
      n: this.n,
      bytes: this.bytes.subarray(0, this.used),
      errors: this.errors,
      next: read.next,
      torn: read.torn,
      more: read.more,
    };
  }
}

/** A batch as it arrives from the decoder thread (a structured clone makes its Buffer a Uint8Array). */
function received(b: OutboxBatch): OutboxBatch {
  const u8 = b.bytes as Uint8Array;
  return { ...b, bytes: Buffer.from(u8.buffer, u8.byteOffset, u8.byteLength), fromThread: true };
}

/** One batch to decode: the outbox, where to start, the read's limits and the run's redactor. */
export interface BatchJob {
  path: string;
  from: OutboxPosition;
  options: OutboxReadOptions;
  redactor: Redactor;
  waiting: number;
}

/**
 * Read and pack a batch (on whichever thread calls it): the one way a batch is made. `waiting`:
 * the outbox's bytes past `from` when the read was asked for (sizes the batch's buffer).
 */
export function decodeBatch(job: BatchJob, spares: ArrayBuffer[] = []): OutboxBatch {
  const { path, from, options, redactor, waiting } = job;
  const packer = new BatchPacker(
    redactor,
    Math.max(0, Math.min(waiting, options.maxBytes)),
    spares.pop(),
    options.identity,
  );
  return packer.finish(readOutbox(path, from, { ...options, onItem: packer.add }));
}

/**
 * The decoder thread's young generation: each event it decodes leaves a parsed object, its checked
 * copy and its canonical JSON behind, all garbage within a batch. In V8's default for a thread
 * they are scavenged many times a batch, and the survivors copied each time.
 */
const DECODER_YOUNG_GENERATION_MB = 192;

/** A request to the decoder thread and its answer. */
export interface DecodeRequest {
  id: number;
  path: string;
  from: OutboxPosition;
  options: OutboxReadOptions;
  /** The run's secret values, for the thread's redactor (they stay in this process). */
  secrets: string[];
  /** The outbox's bytes past `from` when the read was asked for. */
  waiting: number;
  /** Buffers of released batches, moved back to be filled again. */
  spares: ArrayBuffer[];
}
export type DecodeResponse = { id: number; ok: true; batch: OutboxBatch } | { id: number; ok: false; message: string };

/** The decoder thread's redactor, kept while a run's secrets stay the same (its patterns are compiled once). */
let threadRedactor: { key: string; redactor: Redactor } | undefined;

function redactorFor(secrets: string[]): Redactor {
  const key = secrets.join("\0");
  if (threadRedactor?.key !== key) threadRedactor = { key, redactor: new Redactor(secrets) };
  return threadRedactor.redactor;
}

/** Released buffers the decoder thread keeps to fill again; more than the batches in flight is waste. */
const MAX_SPARES = 6;

/**
 * Answer a decode request on the decoder thread (`spares`: the thread's released buffers): the
 * batch's buffer is moved to the asking thread, not copied.
 */
export function answerDecode(
  req: DecodeRequest,
  spares: ArrayBuffer[],
): { response: DecodeResponse; transfer: ArrayBuffer[] } {
  for (const b of req.spares) if (spares.length < MAX_SPARES) spares.push(b);
  try {
    const batch = decodeBatch(
      {
        path: req.path,
        from: req.from,
        options: req.options,
        redactor: redactorFor(req.secrets),
        waiting: req.waiting,
      },
      spares,
    );
    return { response: { id: req.id, ok: true, batch }, transfer: [batch.bytes.buffer as ArrayBuffer] };
  } catch (err) {
    return { response: { id: req.id, ok: false, message: (err as Error).message }, transfer: [] };
  }
}

/** A read the decoder thread did not answer because the thread stopped (the read itself may be fine). */
const THREAD_STOPPED = "outbox_decoder_stopped";

/**
 * How many decoder threads a long backlog is spread over: one per core beside the storing thread,
 * at least one, at most four. On two cores one is enough (the storing thread costs more per event
 * than decoding) and a second cost more than it gave: its own JIT compilation and heap, and the
 * cores shared three ways (bench/ingest, 3 alternating rounds: 3.5 µs less CPU per event, +20-28%
 * events/s with one).
 */
export const DECODER_THREADS = Math.max(1, Math.min(4, availableParallelism() - 1));

/**
 * The process's decoder threads, started on first use and shared by every run's reader. They do
 * not keep the process alive while idle. If one dies, its pending reads fail with THREAD_STOPPED
 * (their readers decode them in place) and a new one takes its place at the next read.
 */
class DecoderThread {
  private static readonly threads: DecoderThread[] = [];
  /** Released buffers, moved back with the next requests (to whichever thread). */
  private static spares: ArrayBuffer[] = [];
  private readonly worker: Worker;
  private readonly pending = new Map<number, { resolve: (b: OutboxBatch) => void; reject: (e: Error) => void }>();
  private nextId = 1;

  /** The thread with the fewest reads pending (a new one while there are fewer than DECODER_THREADS and all are busy). */
  static get(): DecoderThread {
    const all = DecoderThread.threads;
    let best: DecoderThread | undefined;
    for (const t of all) if (!best || t.pending.size < best.pending.size) best = t;
    if (!best || (best.pending.size > 0 && all.length < DECODER_THREADS)) {
      best = new DecoderThread();
      all.push(best);
    }
    return best;
  }

  private constructor() {
    this.worker = startThread("outbox-worker", import.meta.url, undefined, {
      youngGenerationMb: DECODER_YOUNG_GENERATION_MB,
    });
    this.worker.on("message", (m: DecodeResponse) => {
      const p = this.pending.get(m.id);
      if (!p) return;
      this.pending.delete(m.id);
      if (this.pending.size === 0) this.worker.unref();
      if (m.ok) p.resolve(received(m.batch));
      else p.reject(new Error(m.message));
    });
    const fail = (err: Error) => {
      const at = DecoderThread.threads.indexOf(this);
      if (at !== -1) DecoderThread.threads.splice(at, 1);
      for (const p of this.pending.values())
        p.reject(new UnavailableError(THREAD_STOPPED, `outbox decoder thread stopped: ${err.message}`));
      this.pending.clear();
    };
    this.worker.on("error", fail);
    this.worker.on("exit", (code) => fail(new Error(`exit code ${code}`)));
  }

  /** Stop the threads as if they had died (tests: the readers waiting on them must not lose their reads). */
  static async stop(): Promise<void> {
    await Promise.all(DecoderThread.threads.map((t) => t.worker.terminate()));
  }

  /** Hand a batch's buffer back (its views on this thread are detached when it is moved). */
  static release(buffer: ArrayBuffer): void {
    if (DecoderThread.threads.length > 0 && DecoderThread.spares.length < MAX_SPARES) DecoderThread.spares.push(buffer);
  }

  read(
    path: string,
    from: OutboxPosition,
    options: OutboxReadOptions,
    secrets: string[],
    waiting: number,
  ): Promise<OutboxBatch> {
    const id = this.nextId++;
    // Two buffers a request: enough for its batch, and the rest left for the other threads' requests.
    const spares = DecoderThread.spares.splice(0, 2);
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.ref();
      this.worker.postMessage({ id, path, from, options, secrets, waiting, spares } satisfies DecodeRequest, spares);
    });
  }
}

/** Batches decoded ahead of the one being stored: enough to keep the decoder threads busy through one store's commit. */
const PREFETCH_DEPTH = 4;
/** How far back from a split point a line end is looked for; a longer line leaves the read unsplit. */
const SPLIT_WINDOW = 64 * 1024;

/** A read started ahead: from `offset`; `line` its first line's number, null when not known yet (then its lines are numbered from 1 and rebased once known); `to` where it ends, when split off. */
interface Ahead {
  offset: number;
  line: number | null;
  to: number | undefined;
  batch: Promise<OutboxBatch>;
  done?: OutboxBatch;
}

/**
 * Reads one outbox for one ingestor; see the module comment. A long backlog is split into reads
 * that end at a line end found near every `maxBytes` (a small read on this thread, no decoding),
 * so that the reads after the next do not wait for it to be decoded to know where they start: they
 * go to several decoder threads at once. Their lines are numbered when the read before them is
 * known (`lineBase`); the batches come back in file order, whichever finishes first.
 */
export class OutboxReader {
  private ahead: Ahead[] = [];

  constructor(
    private readonly path: string,
    private readonly options: OutboxReadOptions & { threadBytes?: number; redactor: Redactor },
  ) {}

  /** The batch from `from` (throws what `readOutbox` throws: a rewritten or unreadable outbox). */
  async read(from: OutboxPosition): Promise<OutboxBatch> {
    const first = this.ahead[0];
    let entry: Ahead;
    if (first && first.offset === from.offset && (first.line === null || first.line === from.line_no)) {
      this.ahead.shift();
      entry = first;
    } else {
      this.ahead = [];
      entry = this.start(from.offset, from.line_no);
    }
    // The reads after it start now where they can (it was split off: where it ends is known).
    if (this.ahead.length === 0 && entry.to !== undefined) this.ahead.push(this.start(entry.to, null));
    this.fill();
    let got = await entry.batch;
    if (entry.line === null) got = rebase(got, from.line_no - 1);
    // A read started ahead saw the outbox as it was then: what the sprite wrote since is more to
    // read, not the end (a drain that took its end for the outbox's lost the sprite's last events).
    if (entry === first && !got.more && this.size() > (got.torn ? got.torn.offset + got.torn.bytes : got.next.offset))
      got = { ...got, more: true, torn: null };
    if (this.ahead.length === 0 && got.more) this.ahead.push(this.start(got.next.offset, got.next.line_no));
    this.fill();
    return got;
  }

  /** Start reads ahead while there is room: from where the last one ends if it was split off (known now), else once it is decoded. */
  private fill(): void {
    while (this.ahead.length > 0 && this.ahead.length < PREFETCH_DEPTH) {
      const last = this.ahead.at(-1)!;
      if (last.to !== undefined) this.ahead.push(this.start(last.to, null));
      else if (last.done?.more && last.line !== null)
        this.ahead.push(this.start(last.done.next.offset, last.done.next.line_no));
      else return;
    }
  }

  /** Start the read from `offset` (split off at the line end near `offset + maxBytes` when more than twice that waits). */
  private start(offset: number, line: number | null): Ahead {
    const waiting = this.size() - offset;
    const to =
      waiting >= 2 * this.options.maxBytes ? this.lineEndBefore(offset, offset + this.options.maxBytes) : undefined;
    const entry: Ahead = { offset, line, to, batch: this.decode({ offset, line_no: line ?? 1 }, to, waiting) };
    entry.batch.then(
      (b) => {
        entry.done = b;
        if (this.ahead.at(-1) === entry) this.fill();
      },
      () => undefined, // surfaces when awaited, if it is
    );
    return entry;
  }

  /** The outbox's size now; 0 when missing or unreadable (readOutbox says what that means). */
  private size(): number {
    try {
      return statSync(this.path).size;
    } catch {
      return 0;
    }
  }

  /** The offset just after the last newline in (`from`, `at`], or undefined (none within SPLIT_WINDOW, or the file unreadable). */
  private lineEndBefore(from: number, at: number): number | undefined {
    let fd: number | null = null;
    try {
      fd = openRegularFile(this.path, "the outbox", { parent: true });
      if (fd === null) return undefined;
      const start = Math.max(from, at - SPLIT_WINDOW);
      const window = Buffer.allocUnsafe(at - start);
      const n = readSync(fd, window, 0, window.length, start);
      const nl = window.lastIndexOf(0x0a, n - 1);
      return nl === -1 ? undefined : start + nl + 1;
    } catch {
      return undefined; // the read itself will say what is wrong
    } finally {
      if (fd !== null) closeSync(fd);
    }
  }

  /**
   * The caller is done with `batch` (stored, and no view of its bytes kept): a decoder thread
   * batch's buffer goes back to the threads to be filled again. Any view of it left on this thread
   * becomes empty (it is moved, not shared), never another batch's bytes.
   */
  release(batch: OutboxBatch): void {
    if (batch.fromThread && batch.bytes.byteOffset === 0) DecoderThread.release(batch.bytes.buffer as ArrayBuffer);
  }

  private decode(from: OutboxPosition, to: number | undefined, waiting: number): Promise<OutboxBatch> {
    const threadBytes = this.options.threadBytes ?? DEFAULT_THREAD_BYTES;
    const opts: OutboxReadOptions = {
      maxLineBytes: this.options.maxLineBytes,
      maxBytes: this.options.maxBytes,
      ...(this.options.identity ? { identity: this.options.identity } : {}),
      ...(to !== undefined ? { to } : {}),
    };
    const { redactor } = this.options;
    if (waiting < threadBytes) {
      try {
        return Promise.resolve(decodeBatch({ path: this.path, from, options: opts, redactor, waiting }));
      } catch (err) {
        return Promise.reject(err as Error);
      }
    }
    // A read lost with a stopped thread is still wanted: decode it here rather than give up the outbox.
    return DecoderThread.get()
      .read(this.path, from, opts, redactor.secretValues(), waiting)
      .catch((err: unknown) => {
        if (hasCode(err, THREAD_STOPPED))
          return decodeBatch({ path: this.path, from, options: opts, redactor, waiting });
        throw err;
      });
  }
}

/** A batch read with its lines numbered from 1, renumbered from `base + 1` (its first line's number, now known). */
function rebase(b: OutboxBatch, base: number): OutboxBatch {
  if (base === 0) return b;
  return {
    ...b,
    lineBase: (b.lineBase ?? 0) + base,
    errors: b.errors.map((e) => ({ ...e, line_no: e.line_no + base })),
    next: { offset: b.next.offset, line_no: b.next.line_no + base },
    torn: b.torn ? { ...b.torn, line_no: b.torn.line_no + base } : null,
  };
}

/** Stop the decoder threads as if they had died (for tests); the next large read starts a new one. */
export function stopDecoderThread(): Promise<void> {
  return DecoderThread.stop();
}
