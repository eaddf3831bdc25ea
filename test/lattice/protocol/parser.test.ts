import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { eventId, type ParsedLine } from "../../../src/lattice/index.js";
import { stdoutLines } from "../../helpers/stdout-lines.js";
import { SPEC_EVENTS, SPEC_STDOUT_LINE } from "../fixtures/spec-examples.js";

const compact = (text: string) => JSON.stringify(JSON.parse(text));

function parseAll(input: Buffer, chunkSizes: number[] | "whole", maxLineBytes?: number): ParsedLine[] {
  const parser = stdoutLines({ maxLineBytes });
  const out: ParsedLine[] = [];
  if (chunkSizes === "whole") out.push(...parser.push(input));
  else {
    let pos = 0;
    let i = 0;
    while (pos < input.length) {
      const size = Math.max(1, chunkSizes[i++ % chunkSizes.length] ?? 1);
      out.push(...parser.push(input.subarray(pos, pos + size)));
      pos += size;
    }
  }
  out.push(...parser.end());
  return out;
}

/** A stream with every kind of line: spec events, logs (with multi-byte text), garbage, schema violations, CRLF. */
const STREAM = Buffer.from(
  [
    SPEC_STDOUT_LINE,
    "npm test: running 42 tests",
    ...SPEC_EVENTS.map((e) => `LATTICE_EVENT ${compact(e.text)}`),
    "ünïcödé log line — ✓ 日本語",
    'LATTICE_EVENT {"protocol_version":"v1",',
    "LATTICE_EVENT not json at all",
    'LATTICE_EVENT {"protocol_version":"v1","event_type":"COMPLETED","sprite_id":"s","work_item_id":"w","timestamp":"2026-01-15T11:00:00Z","payload":{"status":"done"}}',
    `LATTICE_EVENT ${compact(SPEC_EVENTS[0]!.text)}\r`,
    "",
    "LATTICE_EVENTS are not events without the space",
    "last line without newline",
  ].join("\n"),
);

describe("reading stdout (LineSplitter, classifyStdoutLine)", () => {
  it("classifies events, log lines and protocol errors with line numbers and reasons", () => {
    const out = parseAll(STREAM, "whole");
    const kinds = out.map((l) => l.kind);
    expect(kinds.filter((k) => k === "event")).toHaveLength(12);
    expect(out[0]).toMatchObject({
      kind: "event",
      line_no: 1,
      event: { event_type: "INFO", payload: { message: "Starting implementation" } },
    });
    expect(out[1]).toEqual({ kind: "log", line_no: 2, text: "npm test: running 42 tests" });
    expect(out[12]).toEqual({ kind: "log", line_no: 13, text: "ünïcödé log line — ✓ 日本語" });
    expect(out[13]).toMatchObject({
      kind: "protocol_error",
      line_no: 14,
      excerpt: 'LATTICE_EVENT {"protocol_version":"v1",',
    });
    expect((out[13] as { reason: string }).reason).toMatch(/^invalid JSON: /);
    expect(out[14]).toMatchObject({ kind: "protocol_error", line_no: 15 });
    expect(out[15]).toMatchObject({
      kind: "protocol_error",
      line_no: 16,
      reason: 'schema violation: $.payload.status: Invalid option: expected one of "success"|"failure"',
    });
    // CRLF: the \r is not part of the JSON, and the event is the same as without it.
    expect(out[16]).toMatchObject({ kind: "event", line_no: 17, id: eventId(JSON.parse(SPEC_EVENTS[0]!.text)) });
    expect(out[17]).toEqual({ kind: "log", line_no: 18, text: "" });
    expect(out[18]).toEqual({ kind: "log", line_no: 19, text: "LATTICE_EVENTS are not events without the space" });
    // end(): the final line without a newline is still delivered.
    expect(out[19]).toEqual({ kind: "log", line_no: 20, text: "last line without newline" });
    expect(out).toHaveLength(20);
  });

  it("gives the same result for any split of the stream into chunks", () => {
    const whole = parseAll(STREAM, "whole");
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 300 }), { minLength: 1, maxLength: 40 }), (sizes) => {
        expect(parseAll(STREAM, sizes)).toEqual(whole);
      }),
      { numRuns: 300 },
    );
  });

  it("gives the same result one byte at a time (multi-byte characters split across reads)", () => {
    expect(parseAll(STREAM, [1])).toEqual(parseAll(STREAM, "whole"));
  });

  it("identifies an event by its canonical JSON, whatever the key order or spacing", () => {
    const spec = JSON.parse(SPEC_EVENTS[6]!.text) as Record<string, unknown>;
    const reordered = Object.fromEntries(Object.entries(spec).reverse());
    const parser = stdoutLines();
    const [a, b] = parser.push(
      `LATTICE_EVENT ${JSON.stringify(spec)}\nLATTICE_EVENT ${JSON.stringify(reordered, null, 0)}\n`,
    );
    expect(a!.kind).toBe("event");
    expect(a).toMatchObject({ id: eventId(spec) });
    expect((b as { id: string }).id).toBe((a as { id: string }).id);
    expect(eventId({ ...spec, timestamp: "2026-01-15T10:48:01Z" })).not.toBe(eventId(spec));
  });

  it("discards a line over the limit without buffering it, then carries on", () => {
    const limit = 64 * 1024;
    const parser = stdoutLines({ maxLineBytes: limit });
    const out: ParsedLine[] = [];
    out.push(...parser.push('before\nLATTICE_EVENT {"payload":"'));
    const block = Buffer.alloc(16 * 1024, "x");
    for (let i = 0; i < 640; i++) {
      out.push(...parser.push(block)); // 10 MiB of one line
      expect(parser.bufferedBytes).toBeLessThanOrEqual(limit);
    }
    out.push(...parser.push(`"}\n${SPEC_STDOUT_LINE}\n`));
    out.push(...parser.end());
    expect(out.map((l) => l.kind)).toEqual(["log", "protocol_error", "event"]);
    const err = out[1] as { reason: string; excerpt: string; line_no: number };
    expect(err.line_no).toBe(2);
    expect(err.reason).toBe(`line of ${26 + 640 * 16 * 1024 + 2} bytes exceeds the limit of ${limit} bytes; discarded`);
    expect(err.excerpt.startsWith('LATTICE_EVENT {"payload":"xxx')).toBe(true);
    expect(err.excerpt.length).toBeLessThanOrEqual(201);
    expect(out[2]).toMatchObject({ line_no: 3 });
  });

  it("accepts a line of exactly the limit and refuses one byte more", () => {
    const line = `LATTICE_EVENT ${compact(SPEC_EVENTS[0]!.text)}`;
    const size = Buffer.byteLength(line);
    expect(parseAll(Buffer.from(`${line}\n`), [7], size)[0]!.kind).toBe("event");
    expect(parseAll(Buffer.from(`${line}\n`), [7], size - 1)[0]).toMatchObject({
      kind: "protocol_error",
      reason: `line of ${size} bytes exceeds the limit of ${size - 1} bytes; discarded`,
    });
    // An over-long final line without a newline is reported at end().
    expect(parseAll(Buffer.from(line), [5], 10)).toMatchObject([{ kind: "protocol_error", line_no: 1 }]);
  });

  it("redacts log text and excerpts when given a redactor", () => {
    const parser = stdoutLines({ redact: (t) => t.replaceAll("hunter2-secret", "[REDACTED]") });
    const out = parser.push("token is hunter2-secret\nLATTICE_EVENT {bad hunter2-secret\n");
    expect(out[0]).toMatchObject({ text: "token is [REDACTED]" });
    expect(out[1]).toMatchObject({ excerpt: "LATTICE_EVENT {bad [REDACTED]" });
  });

  it("never copies the bad text into the reason (V8's JSON errors quote the input)", () => {
    const secret = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";
    const [err] = stdoutLines({ redact: (t) => t.replaceAll(secret, "[REDACTED]") }).push(
      `LATTICE_EVENT {"token": ${secret}}\n`,
    );
    expect(err).toMatchObject({ kind: "protocol_error", excerpt: 'LATTICE_EVENT {"token": [REDACTED]}' });
    expect((err as { reason: string }).reason).toBe("invalid JSON: Unexpected token 'g'");
  });

  it("refuses a non-positive limit", () => {
    expect(() => stdoutLines({ maxLineBytes: 0 })).toThrow("maxLineBytes must be a positive integer, got 0");
  });
});
