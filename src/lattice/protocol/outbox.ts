/**
 * The outbox: `$LATTICE_WORKSPACE/.lattice/outbox.jsonl`, one raw event JSON per line, append-only.
 * The sprite appends (fsync'd) every event it prints; the supervisor reads it from a byte offset to
 * recover events the stdout stream lost. A last line without its newline is a write in progress
 * (or torn by a crash): it is reported as torn and not consumed, so the next read sees it whole.
 */
import { closeSync, fstatSync, readSync } from "node:fs";
import { ConflictError } from "../../core/index.js";
import { DEFAULT_MAX_LINE_BYTES, EXCERPT_BYTES, LineSplitter, type RawLine } from "./lines.js";
import { openRegularFile } from "../wire/index.js";
import {
  excerpt,
  identity,
  type LineBytes,
  notUtf8,
  parseEventJson,
  type ParsedEvent,
  type ProtocolError,
} from "./parser.js";

/** Where the next read starts: a byte offset just after a newline, and that line's number. */
export interface OutboxPosition {
  offset: number;
  line_no: number;
}

export const OUTBOX_START: OutboxPosition = { offset: 0, line_no: 1 };

/** An outbox event with its line's JSON text (what its stdout copy shows after the prefix). */
export type OutboxEvent = ParsedEvent & {
  text: string;
  /** The line's bytes (the text as UTF-8), valid only while the item is handed over (`onItem`): the read's buffer is reused. */
  bytes?: LineBytes;
};

export interface OutboxRead {
  items: Array<OutboxEvent | ProtocolError>;
  next: OutboxPosition;
  /** An incomplete last line (no newline yet): where it starts and how many bytes it has so far. */
  torn: { offset: number; line_no: number; bytes: number } | null;
  /** True when the read stopped at `maxBytes` before the end of the file: read again from `next`. */
  more: boolean;
}

const READ_CHUNK = 1024 * 1024;

/**
 * The read buffer, kept between reads (one per thread): a fresh megabyte per read is a page fault
 * per 4 KiB the first time it is written, which costs more than decoding the lines in it. Null
 * while a read holds it (a read started inside `onItem` gets a buffer of its own).
 */
let readBuffer: Buffer | null = null;

function classify(
  raw: RawLine,
  maxLineBytes: number,
  redact: (t: string) => string,
): OutboxEvent | ProtocolError | null {
  if (raw.kind === "overlong") {
    return {
      kind: "protocol_error",
      line_no: raw.line_no,
      reason: `line of ${raw.size} bytes exceeds the limit of ${maxLineBytes} bytes; discarded`,
      excerpt: excerpt(raw.head.toString("utf8"), redact),
    };
  }
  return classifyText(raw.bytes.toString("utf8"), raw.line_no, redact, {
    buffer: raw.bytes,
    start: 0,
    end: raw.bytes.length,
  });
}

/** `line`: where the line's bytes are (its identity is hashed from them). */
function classifyText(
  text: string,
  lineNo: number,
  redact: (t: string) => string,
  line: { buffer: Buffer; start: number; end: number },
): OutboxEvent | ProtocolError | null {
  const { buffer, start } = line;
  let { end } = line;
  if (text.endsWith("\r")) {
    text = text.slice(0, -1);
    end--;
  }
  if (text.trim() === "") return null;
  const badBytes = notUtf8(text, () => buffer.subarray(start, end));
  if (badBytes) return { kind: "protocol_error", line_no: lineNo, reason: badBytes, excerpt: excerpt(text, redact) };
  const bytes = { buffer, start, end };
  const parsed = parseEventJson(text, bytes);
  if (!parsed.ok) {
    return { kind: "protocol_error", line_no: lineNo, reason: redact(parsed.reason), excerpt: excerpt(text, redact) };
  }
  return { kind: "event", line_no: lineNo, id: parsed.id, event: parsed.event, raw: parsed.raw, text, bytes };
}

/**
 * Read the outbox from `from` to its current end (`redact` as in the stdout parser). A missing file reads as empty (the sprite has
 * not written yet). A file shorter than `from.offset` was rewritten, which the protocol forbids.
 * `maxBytes` bounds one read (it stops at the first line end past it, with `more` set), so a
 * caller storing what it reads in one transaction keeps its batches bounded. With `onItem`, each
 * line is handed over as it is read and `items` stays empty (nothing decoded is held). `to` (an
 * offset just after a newline) ends the read there, with `more` set if the file goes on: a caller
 * that splits a long outbox into reads of its own.
 */
export function readOutbox(
  path: string,
  from: OutboxPosition = OUTBOX_START,
  options: {
    maxLineBytes?: number;
    redact?: (text: string) => string;
    maxBytes?: number;
    onItem?: (item: OutboxEvent | ProtocolError) => void;
    to?: number;
  } = {},
): OutboxRead {
  const maxLineBytes = options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
  const redact = options.redact ?? identity;
  // A sprite can put anything at its outbox path: only a regular file in a real `.lattice` is read.
  const fd = openRegularFile(path, "the outbox", { parent: true });
  if (fd === null) return { items: [], next: from, torn: null, more: false };
  let held: Buffer | null = null;
  try {
    const real = fstatSync(fd).size;
    // `to`: read exactly up to there (a line's start), the rest being another read's.
    const size = options.to !== undefined ? Math.min(real, options.to) : real;
    if (real < from.offset) {
      throw new ConflictError(
        "outbox_truncated",
        `${path} shrank to ${real} bytes but ${from.offset} were already read: the outbox is append-only and must not be rewritten`,
      );
    }
    const splitter = new LineSplitter(maxLineBytes, from.line_no);
    const items: Array<OutboxEvent | ProtocolError> = [];
    // Kept items lose their bytes: a view of the read's buffer, which the next chunk overwrites.
    const onItem =
      options.onItem ??
      ((item: OutboxEvent | ProtocolError) => items.push(item.kind === "event" ? { ...item, bytes: undefined } : item));
    const maxBytes = Math.max(1, options.maxBytes ?? Infinity);
    const want = Math.min(READ_CHUNK, maxBytes, Math.max(size - from.offset, 1));
    held = readBuffer ?? Buffer.allocUnsafeSlow(READ_CHUNK);
    readBuffer = null;
    const buf = held.subarray(0, want);
    const stopAt = Math.min(size, from.offset + maxBytes);
    let pos = from.offset;
    let consumedTo = from.offset;
    let lineNo = from.line_no;
    while (pos < size) {
      const n = readSync(fd, buf, 0, Math.min(buf.length, size - pos), pos);
      if (n === 0) break;
      const chunk = buf.subarray(0, n);
      const lastNl = chunk.lastIndexOf(0x0a);
      if (lastNl !== -1) consumedTo = pos + lastNl + 1;
      const take = (item: OutboxEvent | ProtocolError | null) => {
        if (item) onItem(item);
      };
      // A line begun in the previous chunk goes through the splitter up to its end; the whole
      // lines after it are decoded straight from the chunk (no copy per line); the unfinished
      // rest waits in the splitter.
      let start = 0;
      if (splitter.pending) {
        const nl = chunk.indexOf(0x0a);
        start = nl === -1 ? n : nl + 1;
        for (const raw of splitter.push(chunk.subarray(0, start))) take(classify(raw, maxLineBytes, redact));
      }
      for (let nl = chunk.indexOf(0x0a, start); nl !== -1; nl = chunk.indexOf(0x0a, start)) {
        const line = splitter.countLine();
        const bytes = nl - start;
        if (bytes > maxLineBytes)
          take(
            classify(
              {
                kind: "overlong",
                line_no: line,
                size: bytes,
                head: Buffer.from(chunk.subarray(start, start + EXCERPT_BYTES)),
              },
              maxLineBytes,
              redact,
            ),
          );
        else take(classifyText(chunk.toString("utf8", start, nl), line, redact, { buffer: chunk, start, end: nl }));
        start = nl + 1;
      }
      if (start < n) splitter.push(chunk.subarray(start));
      lineNo = splitter.nextLineNo;
      pos += n;
      // Past the bound with at least one whole line read: the rest waits for the next read.
      if (pos >= stopAt && pos < size && consumedTo > from.offset) break;
    }
    const more = pos < size || size < real;
    const torn = !more && consumedTo < size ? { offset: consumedTo, line_no: lineNo, bytes: size - consumedTo } : null;
    return { items, next: { offset: consumedTo, line_no: lineNo }, torn, more };
  } finally {
    closeSync(fd);
    if (held) readBuffer = held;
  }
}
