/**
 * Reading a run's outbox for the ingestor, in bounded batches, with large reads decoded on a
 * thread of their own. Decoding (JSON parse, schema check, identity hash) costs about as much as
 * storing; on its own thread it overlaps the previous batch's inserts, and while one batch is
 * stored the next is already being decoded (prefetch). Small reads (a live run's few new lines)
 * are decoded in place: a thread hop would only add latency. Both paths run `decodeBatch`, so a
 * line means the same whichever decodes it.
 */
import { statSync } from "node:fs";
import type { Worker } from "node:worker_threads";
import { Redactor, startThread, UnavailableError } from "../../core/index.js";
import { readOutbox, type OutboxEvent, type OutboxPosition, type OutboxRead, redactEvent, type ProtocolError, EVENT_TYPES, type EventType, IdentityWarnings, type EventIdentity } from "../protocol/index.js";

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
}

export interface OutboxReadOptions {
  maxLineBytes: number;
  maxBytes: number;
  /** The run's identity: an event claiming another gets a warning (with the batch's errors), once per value in a batch. */
  identity?: EventIdentity;
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

  constructor(batch: OutboxBatch) {
    this.bytes = batch.bytes;
    this.left = batch.n;
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
    this.lineNo = bytes.readDoubleLE(at + 8);
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
      for (const reason of this.identity.check(item.event)) this.errors.push({ kind: "protocol_error", line_no: item.line_no, reason: this.redactor.redact(reason), excerpt: "", severity: "warning" });
    }
    const { json, timestamp, id } = redactEvent(this.redactor, item.text, item.event.timestamp, item.id);
    // One write for the three (the id is hex): at most 3 UTF-8 bytes per UTF-16 unit.
    const all = json + timestamp + id;
    this.reserve(RECORD_HEADER + 3 * all.length);
    const at = this.used;
    const written = this.bytes.write(all, at + RECORD_HEADER);
    // As many bytes as units: all ASCII, so each part's length is its byte length.
    const ascii = written === all.length;
    this.bytes.writeUInt32LE(ascii ? json.length : Buffer.byteLength(json), at);
    this.bytes.writeUInt32LE(ascii ? timestamp.length : Buffer.byteLength(timestamp), at + 4);
    this.bytes.writeDoubleLE(item.line_no, at + 8);
    this.bytes[at + 16] = TYPE_INDEX.get(item.event.event_type)!;
    this.bytes[at + 17] = json === item.text ? 0 : 1;
    this.used += RECORD_HEADER + written;
    this.n++;
  };

  private reserve(n: number): void {
    if (this.used + n <= this.bytes.length) return;
    const bigger = Buffer.allocUnsafeSlow(Math.max(2 * this.bytes.length, this.used + n));
    this.bytes.copy(bigger, 0, 0, this.used);
    this.bytes = bigger;
  }

  finish(read: Omit<OutboxRead, "items">): OutboxBatch {
    return { n: this.n, bytes: this.bytes.subarray(0, this.used), errors: this.errors, next: read.next, torn: read.torn, more: read.more };
  }
}

/** A batch as it arrives from the decoder thread (a structured clone makes its Buffer a Uint8Array). */
function received(b: OutboxBatch): OutboxBatch {
  const u8 = b.bytes as Uint8Array;
  return { ...b, bytes: Buffer.from(u8.buffer, u8.byteOffset, u8.byteLength), fromThread: true };
}

/**
 * Read and pack a batch (on whichever thread calls it): the one way a batch is made. `waiting`:
 * the outbox's bytes past `from` when the read was asked for (sizes the batch's buffer).
 */
export function decodeBatch(path: string, from: OutboxPosition, options: OutboxReadOptions, redactor: Redactor, waiting: number, spares: ArrayBuffer[] = []): OutboxBatch {
  const packer = new BatchPacker(redactor, Math.max(0, Math.min(waiting, options.maxBytes)), spares.pop(), options.identity);
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
export function answerDecode(req: DecodeRequest, spares: ArrayBuffer[]): { response: DecodeResponse; transfer: ArrayBuffer[] } {
  for (const b of req.spares) if (spares.length < MAX_SPARES) spares.push(b);
  try {
    const batch = decodeBatch(req.path, req.from, req.options, redactorFor(req.secrets), req.waiting, spares);
    return { response: { id: req.id, ok: true, batch }, transfer: [batch.bytes.buffer as ArrayBuffer] };
  } catch (err) {
    return { response: { id: req.id, ok: false, message: (err as Error).message }, transfer: [] };
  }
}

/** A read the decoder thread did not answer because the thread stopped (the read itself may be fine). */
const THREAD_STOPPED = "outbox_decoder_stopped";

/**
 * The process's one decoder thread, started on first use and shared by every run's reader. It
 * does not keep the process alive while idle. If it dies, its pending reads fail with
 * THREAD_STOPPED (their readers decode them in place) and the next read starts a new thread.
 */
class DecoderThread {
  private static current: DecoderThread | undefined;
  private readonly worker: Worker;
  private readonly pending = new Map<number, { resolve: (b: OutboxBatch) => void; reject: (e: Error) => void }>();
  private nextId = 1;
  /** Released buffers, moved back with the next request. */
  private spares: ArrayBuffer[] = [];

  static get(): DecoderThread {
    DecoderThread.current ??= new DecoderThread();
    return DecoderThread.current;
  }

  private constructor() {
    this.worker = startThread("outbox-worker", import.meta.url, undefined, { youngGenerationMb: DECODER_YOUNG_GENERATION_MB });
    this.worker.on("message", (m: DecodeResponse) => {
      const p = this.pending.get(m.id);
      if (!p) return;
      this.pending.delete(m.id);
      if (this.pending.size === 0) this.worker.unref();
      if (m.ok) p.resolve(received(m.batch));
      else p.reject(new Error(m.message));
    });
    const fail = (err: Error) => {
      if (DecoderThread.current === this) DecoderThread.current = undefined;
      for (const p of this.pending.values()) p.reject(new UnavailableError(THREAD_STOPPED, `outbox decoder thread stopped: ${err.message}`));
      this.pending.clear();
    };
    this.worker.on("error", fail);
    this.worker.on("exit", (code) => fail(new Error(`exit code ${code}`)));
  }

  /** Stop the thread as if it had died (tests: the readers waiting on it must not lose their reads). */
  static async stop(): Promise<void> {
    await DecoderThread.current?.worker.terminate();
  }

  /** Hand a batch's buffer back (its views on this thread are detached when it is moved). */
  static release(buffer: ArrayBuffer): void {
    const t = DecoderThread.current;
    if (t && t.spares.length < MAX_SPARES) t.spares.push(buffer);
  }

  read(path: string, from: OutboxPosition, options: OutboxReadOptions, secrets: string[], waiting: number): Promise<OutboxBatch> {
    const id = this.nextId++;
    const spares = this.spares;
    this.spares = [];
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.ref();
      this.worker.postMessage({ id, path, from, options, secrets, waiting, spares } satisfies DecodeRequest, spares);
    });
  }
}

/** Batches decoded ahead of the one being stored: enough to keep the decoder thread busy through one store's commit. */
const PREFETCH_DEPTH = 3;

/** Reads one outbox for one ingestor; see the module comment. */
export class OutboxReader {
  /** Reads started ahead, in order, each from where the one before it stopped (`done` once decoded). */
  private ahead: Array<{ from: OutboxPosition; batch: Promise<OutboxBatch>; done?: OutboxBatch }> = [];

  constructor(
    private readonly path: string,
    private readonly options: OutboxReadOptions & { threadBytes?: number; redactor: Redactor },
  ) {}

  /** The batch from `from` (throws what `readOutbox` throws: a rewritten or unreadable outbox). */
  async read(from: OutboxPosition): Promise<OutboxBatch> {
    const first = this.ahead[0];
    let batch: Promise<OutboxBatch>;
    if (first && first.from.offset === from.offset && first.from.line_no === from.line_no) {
      this.ahead.shift();
      batch = first.batch;
    } else {
      this.ahead = [];
      batch = this.decode(from);
    }
    const got = await batch;
    if (this.ahead.length === 0 && got.more) this.prefetch(got.next);
    else this.topUp();
    return got;
  }

  /** More is written already: decode the next batches while the caller stores this one. */
  private prefetch(from: OutboxPosition): void {
    const item: (typeof this.ahead)[number] = { from, batch: this.decode(from) };
    this.ahead.push(item);
    item.batch.then(
      (b) => {
        item.done = b;
        // Still wanted (no read from elsewhere discarded it): go on from where it stopped.
        if (this.ahead.at(-1) === item) this.topUp();
      },
      () => undefined, // surfaces when awaited, if it is
    );
  }

  /**
   * The caller is done with `batch` (stored, and no view of its bytes kept): a decoder thread
   * batch's buffer goes back to the thread to be filled again. Any view of it left on this thread
   * becomes empty (it is moved, not shared), never another batch's bytes.
   */
  release(batch: OutboxBatch): void {
    if (batch.fromThread && batch.bytes.byteOffset === 0) DecoderThread.release(batch.bytes.buffer as ArrayBuffer);
  }

  /** One more read ahead when the last one has finished with more to read and there is room. */
  private topUp(): void {
    const last = this.ahead.at(-1)?.done;
    if (last?.more && this.ahead.length < PREFETCH_DEPTH) this.prefetch(last.next);
  }

  private decode(from: OutboxPosition): Promise<OutboxBatch> {
    const threadBytes = this.options.threadBytes ?? DEFAULT_THREAD_BYTES;
    const opts = { maxLineBytes: this.options.maxLineBytes, maxBytes: this.options.maxBytes, ...(this.options.identity ? { identity: this.options.identity } : {}) };
    let waiting = 0;
    try {
      waiting = statSync(this.path).size - from.offset;
    } catch {
      // Missing or unreadable: readOutbox says what that means.
    }
    const { redactor } = this.options;
    if (waiting < threadBytes) {
      try {
        return Promise.resolve(decodeBatch(this.path, from, opts, redactor, waiting));
      } catch (err) {
        return Promise.reject(err as Error);
      }
    }
    // A read lost with a stopped thread is still wanted: decode it here rather than give up the outbox.
    return DecoderThread.get()
      .read(this.path, from, opts, redactor.secretValues(), waiting)
      .catch((err: unknown) => {
        if (err instanceof UnavailableError && err.code === THREAD_STOPPED) return decodeBatch(this.path, from, opts, redactor, waiting);
        throw err;
      });
  }
}

/** Stop the decoder thread as if it had died (for tests); the next large read starts a new one. */
export function stopDecoderThread(): Promise<void> {
  return DecoderThread.stop();
}
