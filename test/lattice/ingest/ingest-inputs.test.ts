/**
 * Hostile bytes in a sprite's output, on both stores and both outbox decoding paths: each bad
 * line is stored faithfully or refused as a protocol error naming why, the run's ingestion never
 * fails on it, and a good event after it is stored (the outbox position never passes a lost one).
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MAX_JSON_DEPTH, Redactor } from "../../../src/core/index.js";
import { OUTBOX_START, RunIngestor, RunStore } from "../../../src/lattice/index.js";
import { availableStoreKinds, type TestStore } from "../../helpers/stores.js";
import { SPEC_EVENTS } from "../helpers.js";
import { newRun } from "../../helpers/runs.js";

const kinds = await availableStoreKinds();
const decoding = [
  { mode: "decoded in place", threadBytes: Number.POSITIVE_INFINITY },
  { mode: "decoded on the decoder thread", threadBytes: 0 },
];
const cases = kinds.flatMap((kind) => decoding.map((d) => ({ ...d, kind, name: kind.name })));

/** An INFO event's JSON text with `payload` spliced in as raw JSON text (it may be anything). */
const infoWith = (payloadJson: string) =>
  JSON.stringify({ ...SPEC_EVENTS.info, payload: { message: "m" } }).replace(`{"message":"m"}`, payloadJson);
const completed = JSON.stringify(SPEC_EVENTS.completed);
const deep = (n: number) => `${"[".repeat(n)}${"]".repeat(n)}`;

describe.each(cases)("hostile sprite output on $name, $mode", ({ kind, threadBytes }) => {
  let ts: TestStore;
  let dir: string;
  let runs: RunStore;
  beforeEach(async () => {
    ts = await kind.open();
    dir = mkdtempSync(join(tmpdir(), "pmagent-inputs-"));
    mkdirSync(join(dir, ".lattice"));
    runs = new RunStore(ts.store, "demo");
    await runs.create(newRun("run_1", dir));
  });
  afterEach(async () => {
    await ts.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  const outbox = () => join(dir, ".lattice", "outbox.jsonl");
  const ingestor = () =>
    new RunIngestor({
      store: ts.store,
      runId: "run_1",
      attempt: 1,
      outboxPath: outbox(),
      violationsPath: join(dir, "violations.log"),
      outbox: OUTBOX_START,
      stdoutOffset: 0,
      stderrOffset: 0,
      logBytes: 0,
      logTruncated: false,
      redactor: new Redactor(),
      threadBytes,
    });
  /** Feed stdout (raw bytes) and the outbox, drain; everything stored comes back. */
  const ingest = async (stdout: Buffer, outboxText?: Buffer) => {
    if (outboxText) writeFileSync(outbox(), outboxText);
    const ing = ingestor();
    ing.pushStdout(stdout);
    await ing.finish();
    return {
      types: (await runs.events("run_1")).map((e) => e.event_type),
      events: await runs.events("run_1"),
      errors: await runs.protocolErrors("run_1"),
      logs: (await runs.logs("run_1")).map((l) => l.text),
      run: await runs.get("run_1"),
    };
  };
  const lines = (...ls: Array<string | Buffer>) =>
    Buffer.concat(ls.map((l) => Buffer.concat([typeof l === "string" ? Buffer.from(l) : l, Buffer.from("\n")])));

  it("keeps a log line holding NUL (as U+FFFD) and stores the event after it", async () => {
    const r = await ingest(lines("before\u0000after", `LATTICE_EVENT ${completed}`));
    expect(r.logs).toEqual(["before\uFFFDafter"]);
    expect(r.types).toEqual(["COMPLETED"]);
    expect(r.errors).toEqual([]);
  });

  it("refuses an event line with a raw NUL as invalid JSON, its excerpt without the NUL", async () => {
    const r = await ingest(lines(`LATTICE_EVENT ${infoWith('{"message":"a\u0000b"}')}`, `LATTICE_EVENT ${completed}`));
    expect(r.types).toEqual(["COMPLETED"]);
    expect(r.errors).toHaveLength(1);
    expect(r.errors[0]!.reason).toMatch(/^invalid JSON: Bad control character in string literal/);
    expect(r.errors[0]!.excerpt).toContain("a\uFFFDb");
  });

  it("refuses an event holding U+0000 (escaped) from stdout and from the outbox, naming where it is", async () => {
    const bad = infoWith('{"message":"a\\u0000b"}');
    const r = await ingest(lines(`LATTICE_EVENT ${bad}`, `LATTICE_EVENT ${completed}`), lines(bad, completed));
    expect(r.types).toEqual(["COMPLETED"]);
    const reasons = r.errors.map((e) => `${e.source}: ${e.reason}`);
    expect(reasons).toContain(
      "outbox: schema violation: $.payload.message holds U+0000 (NUL), which the store cannot keep as text; leave it out or encode it (e.g. base64)",
    );
    expect(reasons).toContain(
      "stdout: schema violation: $.payload.message holds U+0000 (NUL), which the store cannot keep as text; leave it out or encode it (e.g. base64)",
    );
    // The outbox was read past both lines, and both stored: none lost while the position moved on.
    expect(r.run.outbox.line_no).toBe(3);
  });

  it("refuses a key holding U+0000 too, and takes an escaped backslash before u0000 as the text it is", async () => {
    const r = await ingest(
      lines(
        `LATTICE_EVENT ${infoWith('{"message":"m","metadata":{"k\\u0000":1}}')}`,
        `LATTICE_EVENT ${infoWith('{"message":"\\\\u0000"}')}`,
      ),
    );
    expect(r.errors.map((e) => e.reason)).toEqual([
      'schema violation: $.payload.metadata["k\\u0000"] (the key) holds U+0000 (NUL), which the store cannot keep as text; leave it out or encode it (e.g. base64)',
    ]);
    expect(r.events.map((e) => (e.event.payload as { message: string }).message)).toEqual(["\\u0000"]);
  });

  it(`refuses JSON nested deeper than ${MAX_JSON_DEPTH} levels on stdout and in the outbox, and reads the outbox on after it`, async () => {
    const bad = infoWith(`{"message":"m","metadata":{"d":${deep(5000)}}}`);
    // At the limit: the envelope (1), the payload (2), metadata (3), then 61 arrays.
    const atLimit = infoWith(`{"message":"at limit","metadata":{"d":${deep(MAX_JSON_DEPTH - 3)}}}`);
    const r = await ingest(lines(`LATTICE_EVENT ${bad}`), lines(bad, atLimit, completed));
    expect(r.types).toEqual(["INFO", "COMPLETED"]);
    expect(r.errors.map((e) => `${e.source}: ${e.reason}`).sort()).toEqual([
      `outbox: invalid JSON: the event nests deeper than ${MAX_JSON_DEPTH} levels of objects and arrays (MAX_JSON_DEPTH); flatten it`,
      `stdout: invalid JSON: the event nests deeper than ${MAX_JSON_DEPTH} levels of objects and arrays (MAX_JSON_DEPTH); flatten it`,
    ]);
  });

  it("refuses an event line whose bytes are not UTF-8, and keeps a real U+FFFD", async () => {
    const latin1 = Buffer.from(`LATTICE_EVENT ${infoWith('{"message":"caf\u00e9"}')}`, "latin1");
    const r = await ingest(
      lines(latin1, `LATTICE_EVENT ${infoWith('{"message":"\uFFFD"}')}`),
      lines(latin1.subarray("LATTICE_EVENT ".length), completed),
    );
    // The outbox's events first, then what only stdout delivered.
    expect(r.types).toEqual(["COMPLETED", "INFO"]);
    expect((r.events[1]!.event.payload as { message: string }).message).toBe("\uFFFD");
    expect(r.errors.map((e) => `${e.source}: ${e.reason}`).sort()).toEqual([
      "outbox: invalid UTF-8: the line holds bytes that are not UTF-8 text; an event is UTF-8 JSON (escape other bytes, e.g. as base64)",
      "stdout: invalid UTF-8: the line holds bytes that are not UTF-8 text; an event is UTF-8 JSON (escape other bytes, e.g. as base64)",
    ]);
  });

  it("stores an event with an escaped lone surrogate as it was written", async () => {
    const text = infoWith('{"message":"half \\ud800 pair"}');
    const r = await ingest(lines(`LATTICE_EVENT ${text}`), lines(text));
    expect(r.errors).toEqual([]);
    expect(r.events).toHaveLength(1);
    expect((r.events[0]!.event.payload as { message: string }).message).toBe("half \ud800 pair");
    const row = await ts.store.get<{ event_json: string }>(
      "SELECT event_json FROM lattice_run_events WHERE run_id = 'run_1'",
    );
    expect(row!.event_json).toBe(text);
  });

  it("refuses an outbox that is a FIFO (reading it would block) and still stores stdout's events", async () => {
    execFileSync("mkfifo", [outbox()]);
    const r = await ingest(lines(`LATTICE_EVENT ${completed}`));
    expect(r.types).toEqual(["COMPLETED"]);
    expect(r.errors.map((e) => e.reason)).toEqual([
      `outbox unreadable, no longer read for this run: the outbox ${outbox()} is a FIFO, not a regular file: it must be a plain file in the workspace (no FIFO, socket, device or symbolic link); it is not read`,
    ]);
  });

  it("refuses an outbox that is a symbolic link, or lies in a .lattice that is one", async () => {
    const elsewhere = mkdtempSync(join(tmpdir(), "pmagent-elsewhere-"));
    try {
      writeFileSync(join(elsewhere, "secrets.json"), `${completed}\n`);
      symlinkSync(join(elsewhere, "secrets.json"), outbox());
      let r = await ingest(Buffer.alloc(0));
      expect(r.types).toEqual([]);
      expect(r.errors.map((e) => e.reason)).toEqual([
        `outbox unreadable, no longer read for this run: the outbox ${outbox()} is a symbolic link, not a regular file: it must be a plain file in the workspace (no FIFO, socket, device or symbolic link); it is not read`,
      ]);
      rmSync(join(dir, ".lattice"), { recursive: true });
      writeFileSync(join(elsewhere, "outbox.jsonl"), `${completed}\n`);
      symlinkSync(elsewhere, join(dir, ".lattice"));
      await ts.store.run("DELETE FROM lattice_protocol_errors");
      r = await ingest(Buffer.alloc(0));
      expect(r.types).toEqual([]);
      expect(r.errors.map((e) => e.reason)).toEqual([
        `outbox unreadable, no longer read for this run: the directory of the outbox ${join(dir, ".lattice")} is a symbolic link: it must be a real directory in the workspace; nothing is read or written through it`,
      ]);
    } finally {
      rmSync(elsewhere, { recursive: true, force: true });
    }
  });
});
