import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { appendFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eventId, OUTBOX_START } from "../../../src/lattice/index.js";
import { Redactor } from "../../../src/core/index.js";
import {
  BatchCursor,
  type OutboxBatch,
  OutboxReader,
  stopDecoderThread,
} from "../../../src/lattice/ingest/outbox-reader.js";
import { SPEC_EVENTS } from "../helpers.js";

let dir: string;
let path: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "pmagent-outbox-reader-"));
  path = join(dir, "outbox.jsonl");
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const events = Array.from({ length: 2000 }, (_, i) => ({
  ...SPEC_EVENTS.infoProgress,
  timestamp: new Date(Date.parse("2026-01-15T10:30:00Z") + i).toISOString(),
  payload: { message: `step ${i}`, pad: "x".repeat(500) },
}));
const options = { maxLineBytes: 1024 * 1024, maxBytes: 64 * 1024 * 1024, redactor: new Redactor() };
const ids = (b: OutboxBatch) => {
  const out: string[] = [];
  for (const c = new BatchCursor(b); c.next();) out.push(c.bytes.toString("utf8", c.id, c.idEnd));
  return out;
};
const lines = (b: OutboxBatch) => {
  const out: number[] = [];
  for (const c = new BatchCursor(b); c.next();) out.push(c.lineNo);
  return out;
};

describe("OutboxReader on the decoder thread", () => {
  it("decodes a read in place when the decoder thread stops before answering it, and the next read starts a new thread", async () => {
    appendFileSync(path, events.map((e) => `${JSON.stringify(e)}\n`).join(""));
    const reader = new OutboxReader(path, { ...options, threadBytes: 0 });
    // The request is posted synchronously; the thread is stopped before it can answer.
    const pending = reader.read(OUTBOX_START);
    await stopDecoderThread();
    const batch = await pending;
    expect(ids(batch)).toEqual(events.map(eventId));
    expect(lines(batch)).toEqual(events.map((_, i) => i + 1));
    expect(batch.errors).toEqual([]);
    expect(batch.more).toBe(false);

    appendFileSync(path, `${JSON.stringify(SPEC_EVENTS.info)}\n`);
    const next = await new OutboxReader(path, { ...options, threadBytes: 0 }).read(batch.next);
    expect(ids(next)).toEqual([eventId(SPEC_EVENTS.info)]);
  });

  it("still fails a read that fails on the thread itself, with its reason", async () => {
    // A directory where the outbox should be: the thread's read fails, it does not stop.
    await expect(new OutboxReader(dir, { ...options, threadBytes: 0 }).read(OUTBOX_START)).rejects.toThrow(
      /is a directory, not a regular file/,
    );
  });
});

describe("OutboxReader on a long backlog (reads split ahead, over several decoder threads)", () => {
  it.each([
    ["on the decoder threads", 0],
    ["in place", Number.POSITIVE_INFINITY],
  ])(
    "gives every event once, in order, with its line number, and each bad line's error at its line (%s)",
    async (_mode, threadBytes) => {
      const text = events.map((e, i) => (i === 1234 ? "{not json\n" : `${JSON.stringify(e)}\n`)).join("");
      appendFileSync(path, `${text}{"torn":`);
      // Batches of 64 kB: the 1.2 MB backlog is split into about twenty reads.
      const reader = new OutboxReader(path, { ...options, maxBytes: 64 * 1024, threadBytes });
      const got: string[] = [];
      const gotLines: number[] = [];
      const errors: number[] = [];
      let from = OUTBOX_START;
      let batches = 0;
      let torn: OutboxBatch["torn"];
      for (;;) {
        const b = await reader.read(from);
        batches++;
        got.push(...ids(b));
        gotLines.push(...lines(b));
        errors.push(...b.errors.map((e) => e.line_no));
        reader.release(b);
        from = b.next;
        torn = b.torn;
        if (!b.more) break;
      }
      const expected = events.filter((_, i) => i !== 1234);
      expect(batches).toBeGreaterThan(10);
      expect(got).toEqual(expected.map(eventId));
      expect(gotLines).toEqual(events.map((_, i) => i + 1).filter((n) => n !== 1235));
      expect(errors).toEqual([1235]);
      expect(from).toEqual({ offset: Buffer.byteLength(text), line_no: events.length + 1 });
      expect(torn).toEqual({ offset: Buffer.byteLength(text), line_no: events.length + 1, bytes: 8 });
    },
  );
});

describe("OutboxReader when the outbox grows while reads are ahead", () => {
  it.each([
    // The first reads on a decoder thread, the last (32 kB) decoded in place when it is started.
    ["after reads on the decoder threads", 48 * 1024],
    ["in place", Number.POSITIVE_INFINITY],
  ])(
    "gives the lines written after a read was started ahead: its end is not the outbox's (%s)",
    async (_mode, threadBytes) => {
      const first = events.slice(0, 250);
      const later = events.slice(250, 260);
      appendFileSync(path, first.map((e) => `${JSON.stringify(e)}\n`).join(""));
      // 160 kB in batches of 64 kB: the second read starts the third ahead, to the end as it is now.
      const reader = new OutboxReader(path, { ...options, maxBytes: 64 * 1024, threadBytes });
      const got: string[] = [];
      let b = await reader.read(OUTBOX_START);
      got.push(...ids(b));
      b = await reader.read(b.next);
      got.push(...ids(b));
      expect(b.more).toBe(true);
      // The sprite writes on (then exits): a drain reads until a batch says there is no more.
      appendFileSync(path, `${later.map((e) => JSON.stringify(e)).join("\n")}\n{"torn":`);
      while (b.more) {
        b = await reader.read(b.next);
        got.push(...ids(b));
      }
      expect(got).toEqual([...first, ...later].map(eventId));
      expect(b.torn).toMatchObject({ bytes: 8 });
    },
  );
});
