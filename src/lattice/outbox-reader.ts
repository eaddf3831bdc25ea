/**
 * Reading a run's outbox for the ingestor, in bounded batches, with large reads decoded on a
 * thread of their own. Decoding (JSON parse, schema check, identity hash) costs about as much as
 * storing; on its own thread it overlaps the previous batch's inserts, and while one batch is
 * stored the next is already being decoded (prefetch). Small reads (a live run's few new lines)
 * are decoded in place: a thread hop would only add latency. Both paths run `readOutbox`, so a
 * line means the same whichever decodes it.
 */
import { statSync } from "node:fs";
import type { Worker } from "node:worker_threads";
import { startThread, UnavailableError } from "../core/index.js";
import { readOutbox, type OutboxEvent, type OutboxPosition, type OutboxRead } from "./outbox.js";
import type { ProtocolError } from "./parser.js";

/** One event line of the outbox, as the ingestor stores it. */
export interface OutboxLine {
  line_no: number;
  /** Identity: sha256 of the event's canonical JSON. */
  id: string;
  event_type: string;
  timestamp: string;
  /** The line's JSON text, exactly as written. */
  text: string;
}

export interface OutboxBatch {
  events: OutboxLine[];
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

/** What crosses between threads: a batch as a few flat strings (one copy each) instead of an object per line. */
export interface PackedBatch {
  n: number;
  /** Texts, event types and timestamps joined by "\n" (none of them can hold a newline). */
  texts: string;
  types: string;
  timestamps: string;
  /** Identities concatenated (64 hex characters each). */
  ids: string;
  lines: Float64Array;
  errors: ProtocolError[];
  next: OutboxPosition;
  torn: OutboxRead["torn"];
  more: boolean;
}

const ID_CHARS = 64;

/** Packs lines as they are read, so the decoded events are garbage at once (not held for the whole batch). */
export class BatchPacker {
  private readonly texts: string[] = [];
  private readonly types: string[] = [];
  private readonly timestamps: string[] = [];
  private readonly ids: string[] = [];
  private readonly lines: number[] = [];
  private readonly errors: ProtocolError[] = [];

  readonly add = (item: OutboxEvent | ProtocolError): void => {
    if (item.kind === "protocol_error") {
      this.errors.push(item);
      return;
    }
    this.texts.push(item.text);
    this.types.push(item.event.event_type);
    this.timestamps.push(item.event.timestamp);
    this.ids.push(item.id);
    this.lines.push(item.line_no);
  };

  finish(read: Omit<OutboxRead, "items">): PackedBatch {
    const { texts, types, timestamps, ids, lines, errors } = this;
    return { n: texts.length, texts: texts.join("\n"), types: types.join("\n"), timestamps: timestamps.join("\n"), ids: ids.join(""), lines: Float64Array.from(lines), errors, next: read.next, torn: read.torn, more: read.more };
  }
}

export function unpackBatch(p: PackedBatch): OutboxBatch {
  const events: OutboxLine[] = new Array<OutboxLine>(p.n);
  if (p.n > 0) {
    const texts = p.texts.split("\n");
    const types = p.types.split("\n");
    const timestamps = p.timestamps.split("\n");
    for (let i = 0; i < p.n; i++) {
      events[i] = { line_no: p.lines[i]!, id: p.ids.slice(i * ID_CHARS, (i + 1) * ID_CHARS), event_type: types[i]!, timestamp: timestamps[i]!, text: texts[i]! };
    }
  }
  return { events, errors: p.errors, next: p.next, torn: p.torn, more: p.more };
}

/** The same read in this thread, through the same packing as the decoder thread's (one conversion, whichever path). */
function readInPlace(path: string, from: OutboxPosition, options: OutboxReadOptions): OutboxBatch {
  const packer = new BatchPacker();
  return unpackBatch(packer.finish(readOutbox(path, from, { ...options, onItem: packer.add })));
}

/** A request to the decoder thread and its answer. */
export interface DecodeRequest {
  id: number;
  path: string;
  from: OutboxPosition;
  options: OutboxReadOptions;
}
export type DecodeResponse = { id: number; ok: true; batch: PackedBatch } | { id: number; ok: false; message: string };

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
    this.worker = startThread("outbox-worker", import.meta.url);
    this.worker.on("message", (m: DecodeResponse) => {
      const p = this.pending.get(m.id);
      if (!p) return;
      this.pending.delete(m.id);
      if (this.pending.size === 0) this.worker.unref();
      if (m.ok) p.resolve(unpackBatch(m.batch));
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

  read(path: string, from: OutboxPosition, options: OutboxReadOptions): Promise<OutboxBatch> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.ref();
      this.worker.postMessage({ id, path, from, options } satisfies DecodeRequest);
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
    private readonly options: OutboxReadOptions & { threadBytes?: number },
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
    if (waiting < threadBytes) {
      try {
        return Promise.resolve(readInPlace(this.path, from, opts));
      } catch (err) {
        return Promise.reject(err as Error);
      }
    }
    // A read lost with a stopped thread is still wanted: decode it here rather than give up the outbox.
    return DecoderThread.get()
      .read(this.path, from, opts)
      .catch((err: unknown) => {
        if (err instanceof UnavailableError && err.code === THREAD_STOPPED) return readInPlace(this.path, from, opts);
        throw err;
      });
  }
}

/** Stop the decoder thread as if it had died (for tests); the next large read starts a new one. */
export function stopDecoderThread(): Promise<void> {
  return DecoderThread.stop();
}
