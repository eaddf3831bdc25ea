/**
 * Turning a sprite's output into events. Each complete line (split by lines.ts, so chunks of any
 * size) becomes an event (a valid `LATTICE_EVENT ` line), a plain log line, or a protocol error
 * (bad JSON, a schema violation with its JSON path, a line over the size limit). A bad line never
 * stops the stream.
 */
import { isUtf8 } from "node:buffer";
import {
  contentHash,
  contentHashOfJson,
  formatZodIssues,
  jsonTooDeep,
  nulMessage,
  nulPath,
  storableText,
  tooDeepMessage,
  type Redactor,
} from "../../core/index.js";
import type { RawLine } from "./lines.js";
import { EVENT_PREFIX, envelopeValid } from "../wire/index.js";
import { LatticeEventSchema, type LatticeEvent } from "./events.js";

/** How much of a bad line a protocol error shows. */
export const EXCERPT_CHARS = 200;

export interface ParsedEvent {
  kind: "event";
  line_no: number;
  /** Identity of the event: sha256 of its canonical JSON (the same from stdout and outbox); see redactEvent for the stored one. */
  id: string;
  /** The event as validated (defaults applied). */
  event: LatticeEvent;
  /** The event exactly as the sprite sent it; `id` is computed from this. */
  raw: Record<string, unknown>;
}

export interface LogLine {
  kind: "log";
  line_no: number;
  text: string;
}

export interface ProtocolError {
  kind: "protocol_error";
  line_no: number;
  reason: string;
  excerpt: string;
  /** "warning": the line's event was stored anyway (see identity.ts); default an error. */
  severity?: "warning";
}

export type ParsedLine = ParsedEvent | LogLine | ProtocolError;

/** Identity of an event: the hash of its canonical JSON (key order and whitespace do not matter). */
export function eventId(event: unknown): string {
  return contentHash(event);
}

export function excerpt(text: string, redact: (t: string) => string): string {
  const cut = text.length > EXCERPT_CHARS ? `${text.slice(0, EXCERPT_CHARS)}…` : text;
  return storableText(redact(cut));
}

export const identity = (t: string) => t;

/**
 * JSON.parse's message without the excerpt of the input V8 puts in it (`…"{"token": ghp_…" is not
 * valid JSON`): the input may hold a secret, and the caller shows a redacted excerpt of its own.
 */
export function jsonErrorMessage(err: unknown): string {
  return (err as Error).message.replace(/,\s*(?:\.\.\.)?".*"(?:\.\.\.)? is not valid JSON$/s, "");
}

/**
 * Validate one event's JSON text (no prefix). Returns the event or the reason it is not one.
 * Used for stdout lines after the prefix and for outbox lines. `bytes`: the same text as UTF-8
 * bytes, when the caller has them (the identity is hashed from them).
 */
export function parseEventJson(
  json: string,
  bytes?: LineBytes,
): { ok: true; id: string; event: LatticeEvent; raw: Record<string, unknown> } | { ok: false; reason: string } {
  // Before parsing: everything after (identity, redaction, the schema) recurses over the value.
  if (jsonTooDeep(json)) return { ok: false, reason: `invalid JSON: the event ${tooDeepMessage()}` };
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (err) {
    // V8 names the offending character, which may be a NUL.
    return { ok: false, reason: storableText(`invalid JSON: ${jsonErrorMessage(err)}`) };
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    return { ok: false, reason: "schema violation: $: expected a JSON object (the event envelope)" };
  }
  // The compiled check first; zod only for what it leaves open (and for every refusal's reason).
  let event: LatticeEvent;
  if (envelopeValid(value as Record<string, unknown>)) event = value as LatticeEvent;
  else {
    const result = LatticeEventSchema.safeParse(value);
    if (!result.success)
      return { ok: false, reason: storableText(`schema violation: ${formatZodIssues(result.error).join("; ")}`) };
    event = result.data;
  }
  // U+0000 can only come from a `\u0000` escape (a raw NUL is not valid JSON); refused on both
  // stores alike, since PostgreSQL text cannot hold it wherever the event's strings go.
  const nul = json.includes("\\u0000") ? nulPath(value) : null;
  if (nul) return { ok: false, reason: `schema violation: ${storableText(nulMessage(nul))}` };
  return { ok: true, id: eventIdOf(value, bytes), event, raw: value as Record<string, unknown> };
}

/** A line's UTF-8 bytes: `buffer` from `start` to `end` (already found to be UTF-8). */
export interface LineBytes {
  buffer: Uint8Array;
  start: number;
  end: number;
}

/**
 * eventId of a parsed event line, hashed from the line's bytes where it can be (see
 * contentHashOfJson: the canonical form is the bytes themselves, or their members reordered),
 * from the value otherwise. The same id either way.
 */
export function eventIdOf(value: unknown, bytes?: LineBytes): string {
  return (bytes && contentHashOfJson(bytes.buffer, bytes.start, bytes.end)) ?? eventId(value);
}

/**
 * The reason an event line's bytes are not UTF-8, or null. Decoding replaces such bytes with
 * U+FFFD, so only a line whose text holds U+FFFD is checked: the usual line costs one scan.
 */
export function notUtf8(text: string, bytes: Buffer | (() => Buffer)): string | null {
  if (!text.includes("\uFFFD")) return null;
  const b = typeof bytes === "function" ? bytes() : bytes;
  if (isUtf8(b)) return null;
  return "invalid UTF-8: the line holds bytes that are not UTF-8 text; an event is UTF-8 JSON (escape other bytes, e.g. as base64)";
}

/**
 * An event as stored: its text, timestamp and identity, redacted. Redaction works on the parsed
 * values (so a secret written with JSON escapes is caught) and only when the text may hold
 * something to redact (`Redactor.suspect`); otherwise the text is stored as the sprite wrote it.
 * A redacted event's identity is the hash of its redacted form, never of what the sprite wrote:
 * an id must not let anyone confirm a guessed secret. Its stdout and outbox copies are redacted
 * alike, so they still share one id.
 */
export function redactEvent(
  redactor: Redactor,
  json: string,
  timestamp: string,
  id: string,
): { json: string; timestamp: string; id: string } {
  const redacted = redactor.redactJson(json);
  if (redacted === null) return { json, timestamp, id };
  return { json: redacted.json, timestamp: redactor.redact(timestamp), id: eventId(redacted.value) };
}

function decode(bytes: Buffer): string {
  const s = bytes.toString("utf8");
  return s.endsWith("\r") ? s.slice(0, -1) : s;
}

/** Classify a stdout line: an event line starts with `LATTICE_EVENT `, anything else is a log line. */
export function classifyStdoutLine(
  raw: RawLine,
  maxLineBytes: number,
  redact: (t: string) => string = identity,
): ParsedLine {
  if (raw.kind === "overlong") {
    return {
      kind: "protocol_error",
      line_no: raw.line_no,
      reason: `line of ${raw.size} bytes exceeds the limit of ${maxLineBytes} bytes; discarded`,
      excerpt: excerpt(raw.head.toString("utf8"), redact),
    };
  }
  const line = decode(raw.bytes);
  if (!line.startsWith(EVENT_PREFIX)) return { kind: "log", line_no: raw.line_no, text: storableText(redact(line)) };
  const badBytes = notUtf8(line, raw.bytes);
  if (badBytes)
    return { kind: "protocol_error", line_no: raw.line_no, reason: badBytes, excerpt: excerpt(line, redact) };
  const end = raw.bytes.length - (raw.bytes[raw.bytes.length - 1] === 0x0d ? 1 : 0);
  const parsed = parseEventJson(line.slice(EVENT_PREFIX.length), {
    buffer: raw.bytes,
    start: EVENT_PREFIX.length,
    end,
  });
  if (!parsed.ok)
    return {
      kind: "protocol_error",
      line_no: raw.line_no,
      reason: redact(parsed.reason),
      excerpt: excerpt(line, redact),
    };
  return { kind: "event", line_no: raw.line_no, id: parsed.id, event: parsed.event, raw: parsed.raw };
}
