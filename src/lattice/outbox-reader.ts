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
import { Redactor, startThread, UnavailableError } from "../core/index.js";
import { readOutbox, type OutboxEvent, type OutboxPosition, type OutboxRead } from "./outbox.js";
import { redactEvent, type ProtocolError } from "./parser.js";
import { EVENT_TYPES, type EventType } from "./protocol.js";

/**
 * A decoded batch of outbox events, as the ingestor stores them: the events' texts, timestamps
 * and identities as bytes in one buffer (views of it are bound to SQLite as they are, and
 * compared with stdout lines byte for byte), so that no string is made per event on the
 * ingesting thread and the batch crosses from the decoder thread without a copy.
 */
export interface OutboxBatch {
  n: number;
  /** Per event, in order: its stored JSON text, its timestamp, its identity (64 hex characters). */
  bytes: Buffer;
  /** Per event, three numbers: where its text starts in `bytes`, the text's length, the timestamp's length. */
  at: Int32Array;
  /** Per event: its index in EVENT_TYPES. */
  types: Uint8Array;
  lines: Float64Array;
  /** Per event: 1 where the stored text is the line redacted (so it differs from the line, and from its stdout copy). */
  redacted: Uint8Array;
  errors: ProtocolError[];
  next: OutboxPosition;
  torn: OutboxRead["torn"];
  more: boolean;
}

export interface OutboxReadOptions {
  maxLineBytes: number;
  maxBytes: number;
}

/** Outbox bytes waiting to be read at or above which a read is decoded on the decoder thread. */
export const DEFAULT_THREAD_BYTES = 1024 * 1024;

const ID_CHARS = 64;

/** Event `i`'s stored JSON text. */
export function batchText(b: OutboxBatch, i: number): Buffer {
  return b.bytes.subarray(b.at[3 * i]!, b.at[3 * i]! + b.at[3 * i + 1]!);
}

/** Event `i`'s timestamp (redacted like its text). */
export function batchTimestamp(b: OutboxBatch, i: number): Buffer {
  const from = b.at[3 * i]! + b.at[3 * i + 1]!;
  return b.bytes.subarray(from, from + b.at[3 * i + 2]!);
}

/** Event `i`'s identity, as hex digits. */
export function batchId(b: OutboxBatch, i: number): Buffer {
  const from = b.at[3 * i]! + b.at[3 * i + 1]! + b.at[3 * i + 2]!;
  return b.bytes.subarray(from, from + ID_CHARS);
}

export function batchType(b: OutboxBatch, i: number): EventType {
  return EVENT_TYPES[b.types[i]!]!;
}

const TYPE_INDEX = new Map<string, number>(EVENT_TYPES.map((t, i) => [t, i]));

/**
 * Packs events as they are read, redacted, so that what is decoded is garbage at once (not held
 * for the whole batch) and what is kept is one buffer and a few typed arrays.
 */
export class BatchPacker {
  private bytes: Buffer;
  private used = 0;
  private readonly at: number[] = [];
  private readonly types: number[] = [];
  private readonly lines: number[] = [];
  private readonly redacted: number[] = [];
  private readonly errors: ProtocolError[] = [];

  /** `expectedBytes`: about how many bytes of lines the batch will read (the buffer grows past it if need be). */
  constructor(
    private readonly redactor: Redactor,
    expectedBytes: number,
  ) {
    // Each event adds its timestamp and identity to its text: half as much again covers lines of ~200 bytes.
    this.bytes = Buffer.allocUnsafeSlow(Math.ceil(expectedBytes * 1.5) + 4096);
  }

  readonly add = (item: OutboxEvent | ProtocolError): void => {
    if (item.kind === "protocol_error") {
      this.errors.push(item);
      return;
    }
    const { json, timestamp } = redactEvent(this.redactor, item.text, item.event.timestamp);
    // One write for the three (the id is hex): at most 3 UTF-8 bytes per UTF-16 unit.
    const all = json + timestamp + item.id;
    this.reserve(3 * all.length);
    const start = this.used;
    const written = this.bytes.write(all, start);
    this.used += written;
    // As many bytes as units: all ASCII, so each part's length is its byte length.
    const ascii = written === all.length;
    this.at.push(start, ascii ? json.length : Buffer.byteLength(json), ascii ? timestamp.length : Buffer.byteLength(timestamp));
    this.types.push(TYPE_INDEX.get(item.event.event_type)!);
    this.lines.push(item.line_no);
    this.redacted.push(json === item.text ? 0 : 1);
  };

  private reserve(n: number): void {
    if (this.used + n <= this.bytes.length) return;
    const bigger = Buffer.allocUnsafeSlow(Math.max(2 * this.bytes.length, this.used + n));
    this.bytes.copy(bigger, 0, 0, this.used);
    this.bytes = bigger;
  }

  finish(read: Omit<OutboxRead, "items">): OutboxBatch {
    return {
      n: this.lines.length,
      bytes: this.bytes.subarray(0, this.used),
      at: Int32Array.from(this.at),
      types: Uint8Array.from(this.types),
      lines: Float64Array.from(this.lines),
      redacted: Uint8Array.from(this.redacted),
      errors: this.errors,
      next: read.next,
      torn: read.torn,
      more: read.more,
    };
  }
}

/** The buffers a batch can hand to another thread instead of copying them. */
function transferable(b: OutboxBatch): ArrayBuffer[] {
  return [b.bytes.buffer, b.at.buffer, b.types.buffer, b.lines.buffer, b.redacted.buffer] as ArrayBuffer[];
}

/** A batch as it arrives from the decoder thread (a structured clone makes its Buffer a Uint8Array). */
function received(b: OutboxBatch): OutboxBatch {
  const u8 = b.bytes as Uint8Array;
  return { ...b, bytes: Buffer.from(u8.buffer, u8.byteOffset, u8.byteLength) };
}

/** Read and pack a batch (on whichever thread calls it): the one way a batch is made. */
export function decodeBatch(path: string, from: OutboxPosition, options: OutboxReadOptions, redactor: Redactor): OutboxBatch {
  let waiting = 0;
  try {
    waiting = statSync(path).size - from.offset;
  } catch {
    // Missing or unreadable: readOutbox says what that means.
  }
  const packer = new BatchPacker(redactor, Math.max(0, Math.min(waiting, options.maxBytes)));
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
}
export type DecodeResponse = { id: number; ok: true; batch: OutboxBatch } | { id: number; ok: false; message: string };

/** Answer a decode request on the decoder thread: the batch's buffers are moved to the asking thread, not copied. */
export function answerDecode(req: DecodeRequest): { response: DecodeResponse; transfer: ArrayBuffer[] } {
  try {
    const batch = decodeBatch(req.path, req.from, req.options, new Redactor(req.secrets));
    return { response: { id: req.id, ok: true, batch }, transfer: transferable(batch) };
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

  read(path: string, from: OutboxPosition, options: OutboxReadOptions, secrets: string[]): Promise<OutboxBatch> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.ref();
      this.worker.postMessage({ id, path, from, options, secrets } satisfies DecodeRequest);
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

  /** One more read ahead when the last one has finished with more to read and there is room. */
  private topUp(): void {
    const last = this.ahead.at(-1)?.done;
    if (last?.more && this.ahead.length < PREFETCH_DEPTH) this.prefetch(last.next);
  }

  private decode(from: OutboxPosition): Promise<OutboxBatch> {
    const threadBytes = this.options.threadBytes ?? DEFAULT_THREAD_BYTES;
    const opts = { maxLineBytes: this.options.maxLineBytes, maxBytes: this.options.maxBytes };
    let waiting = 0;
    try {
      waiting = statSync(this.path).size - from.offset;
    } catch {
      // Missing or unreadable: readOutbox says what that means.
    }
    const { redactor } = this.options;
    if (waiting < threadBytes) {
      try {
        return Promise.resolve(decodeBatch(this.path, from, opts, redactor));
      } catch (err) {
        return Promise.reject(err as Error);
      }
    }
    // A read lost with a stopped thread is still wanted: decode it here rather than give up the outbox.
    return DecoderThread.get()
      .read(this.path, from, opts, redactor.secretValues())
      .catch((err: unknown) => {
        if (err instanceof UnavailableError && err.code === THREAD_STOPPED) return decodeBatch(this.path, from, opts, redactor);
        throw err;
      });
  }
}

/** Stop the decoder thread as if it had died (for tests); the next large read starts a new one. */
export function stopDecoderThread(): Promise<void> {
  return DecoderThread.stop();
}
