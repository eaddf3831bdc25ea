/**
 * Property-based fuzzing of a run's ingestion on both stores: whatever a sprite writes to stdout
 * and its outbox, storing it never fails (the run would be failed and the flush's events lost
 * while the outbox position moved on), and a valid event written after the bad input is stored.
 * Runs: PMAGENT_CHAOS_RUNS / 10 per store and decoding path (at least 5).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import fc from "fast-check";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redactor } from "../../src/core/index.js";
import { EVENT_PREFIX, eventId, OUTBOX_START, RunIngestor, RunStore } from "../../src/lattice/index.js";
import { availableStoreKinds, type TestStore } from "../helpers/stores.js";
import { SPEC_EVENTS } from "../lattice/helpers.js";
import { newRun } from "../helpers/runs.js";

const RUNS = Math.max(5, Math.floor(Number(process.env.PMAGENT_CHAOS_RUNS ?? 100) / 10));
const kinds = await availableStoreKinds();
const cases = kinds.flatMap((kind) =>
  [Number.POSITIVE_INFINITY, 0].map((threadBytes) => ({
    kind,
    threadBytes,
    name: kind.name,
    mode: threadBytes === 0 ? "decoder thread" : "in place",
  })),
);

const NASTY = ["\0", "\ud800", "\uFFFD", "\\", '"', "\r", "[", "{", "\\u0000", "\\ud800", EVENT_PREFIX];
const nastyString = fc
  .array(fc.oneof(fc.string({ unit: "binary", maxLength: 16 }), fc.constantFrom(...NASTY)), { maxLength: 10 })
  .map((p) => p.join(""));
/** One line of sprite output (no newline inside): raw bytes, nasty text, an event with a nasty message, deep JSON. */
const line = fc.oneof(
  fc.uint8Array({ maxLength: 120 }).map((b) => Buffer.from(b.filter((x) => x !== 0x0a))),
  nastyString.map((s) => Buffer.from(s.replaceAll("\n", ""))),
  nastyString.map((s) => Buffer.from(JSON.stringify({ ...SPEC_EVENTS.info, payload: { message: `m${s}` } }))),
  fc
    .integer({ min: 60, max: 400 })
    .map((d) =>
      Buffer.from(
        JSON.stringify({ ...SPEC_EVENTS.info, payload: { message: "m", metadata: { d: 0 } } }).replace(
          '"d":0',
          () => `"d":${"[".repeat(d)}${"]".repeat(d)}`,
        ),
      ),
    ),
);
const withPrefix = (b: Buffer, prefixed: boolean) => (prefixed ? Buffer.concat([Buffer.from(EVENT_PREFIX), b]) : b);

describe.each(cases)("chaos: ingesting hostile output on $name ($mode)", ({ kind, threadBytes }) => {
  let ts: TestStore;
  let root: string;
  let n = 0;
  beforeAll(async () => {
    ts = await kind.open();
    root = mkdtempSync(join(tmpdir(), "pmagent-chaos-ingest-"));
  });
  afterAll(async () => {
    await ts.cleanup();
    rmSync(root, { recursive: true, force: true });
  });

  it("never fails a flush, and stores the valid event written after the bad lines", async () => {
    const runs = new RunStore(ts.store, "demo");
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(line, fc.boolean()), { maxLength: 8 }),
        fc.array(line, { maxLength: 8 }),
        async (stdout, outbox) => {
          const id = `run_${++n}`;
          const dir = join(root, id);
          mkdirSync(join(dir, ".lattice"), { recursive: true });
          await runs.create(newRun(id, dir));
          // A distinct last event per run (its timestamp), written to both sources.
          const last = { ...SPEC_EVENTS.completed, timestamp: new Date(Date.UTC(2026, 0, 1) + n * 1000).toISOString() };
          const lastLine = JSON.stringify(last);
          writeFileSync(
            join(dir, ".lattice", "outbox.jsonl"),
            Buffer.concat([...outbox.flatMap((l) => [l, Buffer.from("\n")]), Buffer.from(`${lastLine}\n`)]),
          );
          const ing = new RunIngestor({
            store: ts.store,
            runId: id,
            attempt: 1,
            outboxPath: join(dir, ".lattice", "outbox.jsonl"),
            violationsPath: join(dir, "violations.log"),
            outbox: OUTBOX_START,
            stdoutOffset: 0,
            stderrOffset: 0,
            logBytes: 0,
            logTruncated: false,
            redactor: new Redactor(),
            threadBytes,
          });
          ing.pushStdout(
            Buffer.concat([
              ...stdout.flatMap(([l, p]) => [withPrefix(l, p), Buffer.from("\n")]),
              Buffer.from(`${EVENT_PREFIX}${lastLine}\n`),
            ]),
          );
          await ing.finish();
          const events = await runs.events(id);
          // Stored, from the outbox (the order is the outbox's, then what only stdout delivered).
          expect(events.find((e) => e.id === eventId(last))?.outbox_line).toBe(outbox.length + 1);
          const run = await runs.get(id);
          // The position moved past every outbox line, and nothing it passed was lost: each line is an event or a protocol error.
          expect(run.outbox.line_no).toBe(outbox.length + 2);
          const fromOutbox = events.filter((e) => e.outbox_line !== null).length;
          const outboxErrors = (await runs.protocolErrors(id)).filter((e) => e.source === "outbox").length;
          const blank = outbox.filter((l) => l.toString("utf8").replace(/\r$/, "").trim() === "").length;
          expect(fromOutbox + outboxErrors + blank).toBeGreaterThanOrEqual(
            outbox.length + 1 - duplicates(outbox, lastLine),
          );
        },
      ),
      { numRuns: RUNS },
    );
  });
});

/** Outbox lines that are the same event as another line (stored once, by identity). */
function duplicates(lines: Buffer[], last: string): number {
  const seen = new Set<string>([last]);
  let d = 0;
  for (const l of lines) {
    const t = l.toString("utf8");
    if (seen.has(t)) d++;
    seen.add(t);
  }
  return d;
}
