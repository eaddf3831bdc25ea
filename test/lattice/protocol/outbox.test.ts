import { afterEach, beforeEach, describe, expect, it } from "vitest";
import fc from "fast-check";
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, truncateSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { appendOutbox, eventId, OUTBOX_START, outboxPath, readOutbox } from "../../../src/lattice/index.js";
import { SPEC_EVENTS } from "../fixtures/spec-examples.js";

let ws: string;
beforeEach(() => {
  ws = mkdtempSync(join(tmpdir(), "lattice-outbox-"));
});
afterEach(() => rmSync(ws, { recursive: true, force: true }));

const specEvent = (i: number) => JSON.parse(SPEC_EVENTS[i]!.text) as Record<string, unknown>;

describe("outbox", () => {
  it("appends one line per event, creating .lattice/, and reads them back with ids", () => {
    const path = outboxPath(ws);
    expect(path).toBe(join(ws, ".lattice", "outbox.jsonl"));
    appendOutbox(path, specEvent(0));
    appendOutbox(path, specEvent(1));
    expect(readFileSync(path, "utf8")).toBe(`${JSON.stringify(specEvent(0))}\n${JSON.stringify(specEvent(1))}\n`);
    const r = readOutbox(path);
    expect(r.items.map((i) => i.kind)).toEqual(["event", "event"]);
    expect(r.items[0]).toMatchObject({ line_no: 1, id: eventId(specEvent(0)) });
    expect(r.next).toEqual({ offset: Buffer.byteLength(readFileSync(path)), line_no: 3 });
    expect(r.torn).toBeNull();
  });

  it("reads only what was appended after the offset", () => {
    const path = outboxPath(ws);
    appendOutbox(path, specEvent(0));
    const first = readOutbox(path);
    appendOutbox(path, specEvent(2));
    const second = readOutbox(path, first.next);
    expect(second.items).toHaveLength(1);
    expect(second.items[0]).toMatchObject({ line_no: 2, event: { event_type: "PHASE_FINISHED" } });
    expect(readOutbox(path, second.next)).toEqual({ items: [], next: second.next, torn: null, more: false });
  });

  it("reads in bounded steps with maxBytes: each step ends on a line, together they are one whole read, a torn line only at the end", () => {
    const path = outboxPath(ws);
    for (let i = 0; i < 9; i++) appendOutbox(path, specEvent(i % 3));
    // Every kind of line: garbage, CRLF, blank, multi-byte text, one over the limit, then a torn one.
    const unicode = { ...specEvent(0), payload: { message: "ünïcödé — ✓ 日本語" } };
    appendFileSync(
      path,
      `not json\n${JSON.stringify(specEvent(1))}\r\n\n${JSON.stringify(unicode)}\n${"x".repeat(900)}\n`,
    );
    appendOutbox(path, specEvent(2));
    appendFileSync(path, JSON.stringify(specEvent(7)).slice(0, 30));
    const maxLineBytes = 800;
    const whole = readOutbox(path, OUTBOX_START, { maxLineBytes });
    expect(whole.items.map((i) => i.kind)).toEqual([
      ...Array(9).fill("event"),
      "protocol_error",
      "event",
      "event",
      "protocol_error",
      "event",
    ]);
    expect(whole.items[12]).toMatchObject({
      line_no: 14,
      reason: "line of 900 bytes exceeds the limit of 800 bytes; discarded",
    });
    expect(whole.items[11]).toMatchObject({ line_no: 13, event: { payload: { message: "ünïcödé — ✓ 日本語" } } });
    for (const maxBytes of [1, 7, 100, 333, 700, 5000]) {
      const steps = [];
      let from = OUTBOX_START;
      for (;;) {
        const step = readOutbox(path, from, { maxBytes, maxLineBytes });
        steps.push(step);
        if (!step.more) break;
        // Each step consumes at least one line (a blank one has no item).
        expect(step.next.line_no).toBeGreaterThan(from.line_no);
        expect(step.torn).toBeNull();
        from = step.next;
      }
      expect(steps.flatMap((s) => s.items)).toEqual(whole.items);
      expect(steps.at(-1)).toMatchObject({ next: whole.next, torn: whole.torn, more: false });
      if (maxBytes === 1) expect(steps.slice(0, -1).every((s) => s.items.length <= 1)).toBe(true);
    }
  });

  it("reports a torn last line as torn, not as an error, until it is completed", () => {
    const path = outboxPath(ws);
    appendOutbox(path, specEvent(0));
    const line = JSON.stringify(specEvent(7));
    appendFileSync(path, line.slice(0, 40));
    const torn = readOutbox(path);
    expect(torn.items).toHaveLength(1);
    const afterFirst = Buffer.byteLength(`${JSON.stringify(specEvent(0))}\n`);
    expect(torn.torn).toEqual({ offset: afterFirst, line_no: 2, bytes: 40 });
    expect(torn.next).toEqual({ offset: afterFirst, line_no: 2 });
    // Read again from the same place: still torn, still no error.
    expect(readOutbox(path, torn.next)).toMatchObject({ items: [], torn: { bytes: 40 } });
    appendFileSync(path, `${line.slice(40)}\n`);
    const done = readOutbox(path, torn.next);
    expect(done.torn).toBeNull();
    expect(done.items).toEqual([expect.objectContaining({ kind: "event", line_no: 2, id: eventId(specEvent(7)) })]);
  });

  it("records garbage and schema violations as protocol errors and keeps reading; skips blank lines; handles CRLF", () => {
    const path = outboxPath(ws);
    appendOutbox(path, specEvent(0));
    appendFileSync(path, `garbage{\n\n{"protocol_version":"v1"}\r\n${JSON.stringify(specEvent(8))}\r\n`);
    const r = readOutbox(path);
    expect(r.items.map((i) => [i.kind, i.line_no])).toEqual([
      ["event", 1],
      ["protocol_error", 2],
      ["protocol_error", 4],
      ["event", 5],
    ]);
    expect(r.items[1]).toMatchObject({ excerpt: "garbage{" });
    expect((r.items[1] as { reason: string }).reason).toMatch(/^invalid JSON: /);
    expect((r.items[2] as { reason: string }).reason).toContain(
      "schema violation: $.event_type: Invalid discriminator value",
    );
    expect(r.next.line_no).toBe(6);
  });

  it("discards a line over the limit and reads the next one", () => {
    const path = outboxPath(ws);
    appendOutbox(path, { big: "y".repeat(5000) });
    appendOutbox(path, specEvent(0));
    const r = readOutbox(path, OUTBOX_START, { maxLineBytes: 1000 });
    expect(r.items[0]).toMatchObject({
      kind: "protocol_error",
      line_no: 1,
      reason: "line of 5010 bytes exceeds the limit of 1000 bytes; discarded",
    });
    expect(r.items[1]).toMatchObject({ kind: "event", line_no: 2 });
  });

  it("redacts excerpts and reasons when given a redactor", () => {
    const path = outboxPath(ws);
    mkdirSync(join(ws, ".lattice"));
    appendFileSync(path, '{"token": hunter2-secret}\n{"event_type":"INFO","hunter2-secret":1}\n');
    const r = readOutbox(path, OUTBOX_START, { redact: (t) => t.replaceAll("hunter2-secret", "[REDACTED]") });
    expect(JSON.stringify(r.items)).not.toContain("hunter2");
    expect(r.items[0]).toMatchObject({ excerpt: '{"token": [REDACTED]}' });
  });

  it("reads every event exactly once however the appends are torn between reads", () => {
    const content = Buffer.from(SPEC_EVENTS.map((e) => `${JSON.stringify(JSON.parse(e.text))}\n`).join(""));
    const ids = SPEC_EVENTS.map((e) => eventId(JSON.parse(e.text)));
    fc.assert(
      fc.property(fc.uniqueArray(fc.integer({ min: 1, max: content.length - 1 }), { maxLength: 30 }), (cuts) => {
        const path = join(ws, `outbox-${Math.random()}.jsonl`);
        writeFileSync(path, "");
        const seen: string[] = [];
        let pos = OUTBOX_START;
        let prev = 0;
        for (const cut of [...cuts.sort((a, b) => a - b), content.length]) {
          appendFileSync(path, content.subarray(prev, cut));
          prev = cut;
          const r = readOutbox(path, pos);
          for (const item of r.items) {
            expect(item.kind).toBe("event");
            seen.push((item as { id: string }).id);
          }
          expect(r.torn === null).toBe(content[cut - 1] === 0x0a);
          pos = r.next;
        }
        expect(seen).toEqual(ids);
        rmSync(path);
      }),
      { numRuns: 100 },
    );
  });

  it("reads a missing outbox as empty", () => {
    expect(readOutbox(join(ws, "nope.jsonl"))).toEqual({ items: [], next: OUTBOX_START, torn: null, more: false });
  });

  it("refuses an outbox that shrank below the offset already read", () => {
    const path = outboxPath(ws);
    appendOutbox(path, specEvent(0));
    const r = readOutbox(path);
    truncateSync(path, 10);
    expect(() => readOutbox(path, r.next)).toThrow(
      `${path} shrank to 10 bytes but ${r.next.offset} were already read: the outbox is append-only and must not be rewritten`,
    );
  });

  it("reads a large outbox across its internal read chunks", () => {
    const path = outboxPath(ws);
    const lines: string[] = [];
    for (let i = 0; i < 12_000; i++)
      lines.push(JSON.stringify({ ...specEvent(0), payload: { message: `progress ${i} ${"z".repeat(100)}` } }));
    mkdirSync(join(ws, ".lattice"));
    writeFileSync(path, `${lines.join("\n")}\n`);
    const r = readOutbox(path);
    expect(r.items).toHaveLength(12_000);
    expect(r.items.every((i) => i.kind === "event")).toBe(true);
    expect(new Set(r.items.map((i) => (i as { id: string }).id)).size).toBe(12_000);
  });
});
