import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redactor } from "../../../src/core/index.js";
import { appendOutbox, eventId, OUTBOX_START, RunIngestor, RunStore } from "../../../src/lattice/index.js";
import { availableStoreKinds, type TestStore } from "../../helpers/stores.js";
import { SPEC_EVENTS } from "../helpers.js";
import { newRun } from "../../helpers/runs.js";

const kinds = await availableStoreKinds();

describe.each(kinds)("RunIngestor on $name", (kind) => {
  it("writes nothing after finish(): a resume's reset of the stream offsets is not overwritten by the finished attempt", async () => {
    const ts = await kind.open();
    const dir = mkdtempSync(join(tmpdir(), "pmagent-ingest-"));
    try {
      const runs = new RunStore(ts.store, "demo");
      const run = await runs.create(newRun("run_1", dir));
      const ingestor = new RunIngestor({
        store: ts.store,
        runId: run.id,
        attempt: 1,
        outboxPath: join(dir, "outbox.jsonl"),
        violationsPath: join(dir, "violations.log"),
        outbox: run.outbox,
        stdoutOffset: 0,
        stderrOffset: 0,
        logBytes: 0,
        logTruncated: false,
        redactor: new Redactor(),
      });
      // The last chunk is pushed right before finish(), as the supervisor's drain does: it schedules a flush of its own.
      ingestor.pushStdout(Buffer.from("one\ntwo\n"));
      await ingestor.finish();
      expect((await runs.get(run.id)).stdout_offset).toBe(8);
      // The next attempt starts (what resumeRun does), then anything left scheduled gets its chance to run.
      await runs.update(run.id, { attempt: 2, resetStreams: true });
      await new Promise((r) => setImmediate(r));
      await ingestor.settle();
      expect((await runs.get(run.id)).stdout_offset).toBe(0);
      expect((await runs.logs(run.id)).map((l) => l.text)).toEqual(["one", "two"]);
    } finally {
      await ts.cleanup();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

// Each case twice: outbox lines decoded in place, and on the decoder thread (what large reads use).
const decoding = [
  { mode: "decoded in place", threadBytes: Number.POSITIVE_INFINITY },
  { mode: "decoded on the decoder thread", threadBytes: 0 },
];
const cases = kinds.flatMap((kind) => decoding.map((d) => ({ ...d, kind, name: kind.name })));

describe.each(cases)("RunIngestor: both sources, outbox batches, on $name, $mode", ({ kind, threadBytes }) => {
  let ts: TestStore;
  let dir: string;
  beforeEach(async () => {
    ts = await kind.open();
    dir = mkdtempSync(join(tmpdir(), "pmagent-ingest-"));
  });
  afterEach(async () => {
    await ts.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  const ingestorOptions = () => ({
    store: ts.store,
    runId: "run-1",
    attempt: 1,
    outboxPath: join(dir, "outbox.jsonl"),
    violationsPath: join(dir, "violations.log"),
    outbox: OUTBOX_START,
    stdoutOffset: 0,
    stderrOffset: 0,
    logBytes: 0,
    logTruncated: false,
    redactor: new Redactor(["hunter2-secret-value"]),
    threadBytes,
  });
  const ingestor = () => new RunIngestor(ingestorOptions());
  const rows = () =>
    ts.store.all<{ event_id: string; source: string; outbox_line: number | null; event_ts: string }>(
      "SELECT event_id, source, outbox_line, event_ts FROM lattice_run_events WHERE run_id = 'run-1' ORDER BY seq",
    );
  const line = (e: unknown) => Buffer.from(`LATTICE_EVENT ${JSON.stringify(e)}\n`);

  it("stores events claiming another sprite_id or work_item_id, with one protocol warning per differing value naming both values", async () => {
    const path = join(dir, "outbox.jsonl");
    const identity = { sprite_id: "sprite-run1", work_item_id: "issue-17" };
    const ing = new RunIngestor({ ...ingestorOptions(), identity });
    const mine = { ...SPEC_EVENTS.info, sprite_id: "sprite-run1" };
    // sprite-42 on three outbox events (one warning), issue-99 on one event seen on stdout only.
    appendOutbox(path, SPEC_EVENTS.info);
    appendOutbox(path, mine);
    appendOutbox(path, { ...SPEC_EVENTS.phaseStarted });
    appendOutbox(path, { ...SPEC_EVENTS.completed });
    ing.pushStdout(line({ ...mine, work_item_id: "issue-99", timestamp: "2026-01-15T10:30:01Z" }));
    await ing.finish();
    expect(await rows()).toHaveLength(5);
    const runs = new RunStore(ts.store, "demo");
    expect((await runs.protocolWarnings("run-1")).map((w) => [w.source, w.line_no, w.reason])).toEqual([
      [
        "outbox",
        1,
        `event sprite_id "sprite-42" differs from the run's sprite_id "sprite-run1" (LATTICE_SPRITE_ID); the event is stored under this run`,
      ],
      [
        "stdout",
        1,
        `event work_item_id "issue-99" differs from the run's work_item_id "issue-17" (LATTICE_WORK_ITEM_ID); the event is stored under this run`,
      ],
    ]);
    // Warnings are not errors.
    expect(await runs.protocolErrors("run-1")).toEqual([]);
  });

  it("stores an event seen on stdout first once, and places it on its outbox line when the outbox shows it later", async () => {
    const ing = ingestor();
    ing.pushStdout(line(SPEC_EVENTS.info));
    await ing.poll();
    await ing.settle();
    expect(await rows()).toEqual([
      { event_id: eventId(SPEC_EVENTS.info), source: "stdout", outbox_line: null, event_ts: "2026-01-15T10:30:00Z" },
    ]);
    appendOutbox(join(dir, "outbox.jsonl"), SPEC_EVENTS.phaseStarted);
    appendOutbox(join(dir, "outbox.jsonl"), SPEC_EVENTS.info);
    ing.pushStdout(line(SPEC_EVENTS.phaseStarted));
    await ing.finish();
    expect((await rows()).map((r) => [r.event_id, r.source, Number(r.outbox_line)])).toEqual([
      [eventId(SPEC_EVENTS.info), "stdout", 2],
      [eventId(SPEC_EVENTS.phaseStarted), "outbox", 1],
    ]);
    expect(ing.stored).toBe(2);
  });

  it("adds usage reports to the run's totals in the flush that stores them: a stdout copy and a re-read from the start after a crash count nothing again", async () => {
    const path = join(dir, "outbox.jsonl");
    const report = (i: number, input: number) => ({
      ...SPEC_EVENTS.info,
      timestamp: `2026-01-15T10:3${i}:00Z`,
      payload: {
        message: "usage",
        kind: "token_usage",
        metadata: { model: "m", input_tokens: input, output_tokens: 1 },
      },
    });
    const totals = async () =>
      (
        await ts.store.all<{ total_tokens: number | string; reports: number | string }>(
          "SELECT total_tokens, reports FROM lattice_run_usage WHERE run_id = 'run-1'",
        )
      ).map((r) => [Number(r.total_tokens), Number(r.reports)]);
    let heard = 0;
    const first = new RunIngestor({ ...ingestorOptions(), onUsage: () => void heard++ });
    first.pushStdout(line(report(1, 100)));
    await first.poll();
    await first.settle();
    expect(await totals()).toEqual([[101, 1]]);
    appendOutbox(path, report(1, 100));
    appendOutbox(path, report(2, 50));
    appendOutbox(path, SPEC_EVENTS.info);
    first.pushStdout(line(report(2, 50)));
    await first.finish();
    expect(await totals()).toEqual([[152, 2]]);
    expect(heard).toBe(2);
    // A supervisor that crashed before saving its position reads the whole outbox again.
    const again = new RunIngestor({ ...ingestorOptions(), onUsage: () => void heard++ });
    await again.finish();
    expect(await totals()).toEqual([[152, 2]]);
    expect(heard).toBe(2);
  });

  it("stores many events from both sources once each, in outbox order, redacted, across several outbox batches", async () => {
    const path = join(dir, "outbox.jsonl");
    const events = Array.from({ length: 3000 }, (_, i) => ({
      ...SPEC_EVENTS.infoProgress,
      timestamp: new Date(Date.parse("2026-01-15T10:30:00Z") + i).toISOString(),
      payload: { message: `step ${i} with hunter2-secret-value`, pad: "x".repeat(3000) },
    }));
    appendFileSync(path, events.map((e) => `${JSON.stringify(e)}\n`).join(""));
    const ing = ingestor();
    for (const e of events) ing.pushStdout(line(e));
    await ing.finish();
    const stored = await rows();
    // The id of an event holding a secret hashes its redacted form (it must not confirm a guess).
    const redactor = new Redactor(["hunter2-secret-value"]);
    expect(stored.map((r) => r.event_id)).toEqual(events.map((e) => eventId(redactor.redactValue(e))));
    expect(stored.map((r) => r.event_id)).not.toContain(eventId(events[0]));
    expect(stored.every((r) => r.source === "outbox")).toBe(true);
    const text = await ts.store.all<{ event_json: string }>(
      "SELECT event_json FROM lattice_run_events WHERE run_id = 'run-1'",
    );
    expect(text.some((r) => r.event_json.includes("hunter2"))).toBe(false);
  });

  it("reads the outbox again, not stdout, for stdout lines past the end a read decoded ahead saw (the outbox grew since)", async () => {
    const path = join(dir, "outbox.jsonl");
    const events = Array.from({ length: 1_050 }, (_, i) => ({
      ...SPEC_EVENTS.infoProgress,
      timestamp: new Date(Date.parse("2026-01-15T10:30:00Z") + i).toISOString(),
      payload: { message: `step ${i}`, pad: "x".repeat(3000) },
    }));
    // Between one and two batches' bytes: the first flush stores one batch and decodes the rest ahead, to the end it sees.
    appendFileSync(
      path,
      events
        .slice(0, 1_000)
        .map((e) => `${JSON.stringify(e)}\n`)
        .join(""),
    );
    const ing = ingestor();
    await ing.poll();
    // The sprite writes on (outbox first, then stdout) before the batches decoded ahead are stored.
    appendFileSync(
      path,
      events
        .slice(1_000)
        .map((e) => `${JSON.stringify(e)}\n`)
        .join(""),
    );
    for (const e of events) ing.pushStdout(line(e));
    await ing.finish();
    const stored = await rows();
    expect(stored.map((r) => r.event_id)).toEqual(events.map((e) => eventId(e)));
    expect(stored.filter((r) => r.source !== "outbox").map((r) => r.event_id)).toEqual([]);
    expect(stored.map((r) => Number(r.outbox_line))).toEqual(events.map((_, i) => i + 1));
  });

  it("asks its tailer to read on after each flush that leaves room, until stdout is read to its end; each event stored once", async () => {
    const path = join(dir, "outbox.jsonl");
    // More lines than the queue holds (20,000): the tailer stops when it is full.
    const events = Array.from({ length: 21_000 }, (_, i) => ({
      ...SPEC_EVENTS.info,
      timestamp: new Date(Date.parse("2026-01-15T10:30:00Z") + i).toISOString(),
    }));
    appendFileSync(path, events.map((e) => `${JSON.stringify(e)}\n`).join(""));
    let next = 0;
    let calls = 0;
    const tail = () => {
      while (!ing.full && next < events.length) ing.pushStdout(line(events[next++]));
    };
    const ing = new RunIngestor({
      ...ingestorOptions(),
      onRoom: () => {
        calls++;
        tail();
      },
    });
    tail();
    expect(next).toBeLessThan(events.length);
    await ing.settle();
    while (next < events.length) await ing.poll();
    await ing.finish();
    expect(calls).toBeGreaterThan(1);
    expect(next).toBe(events.length);
    expect(ing.stored).toBe(events.length);
    expect((await rows()).every((r) => r.source === "outbox")).toBe(true);
  });

  it("reads stdout into the buffers it is done with (stdoutBuffer) and never into one pushed from outside", async () => {
    const path = join(dir, "outbox.jsonl");
    const events = Array.from({ length: 40 }, (_, i) => ({
      ...SPEC_EVENTS.info,
      timestamp: new Date(Date.parse("2026-01-15T10:30:00Z") + i).toISOString(),
    }));
    // The first half in both, the second on stdout only (parsed from the reused buffer's bytes).
    appendFileSync(
      path,
      events
        .slice(0, 20)
        .map((e) => `${JSON.stringify(e)}\n`)
        .join(""),
    );
    const ing = ingestor();
    const outside = Buffer.concat([line(SPEC_EVENTS.phaseStarted), Buffer.from("a log line\n")]);
    ing.pushStdout(outside);
    const read = (lines: unknown[]) => {
      const text = Buffer.concat(lines.map(line));
      const buffer = ing.stdoutBuffer(64 * 1024);
      text.copy(buffer);
      ing.pushStdout(buffer.subarray(0, text.length));
      return buffer.buffer;
    };
    const first = read(events.slice(0, 20));
    await ing.poll();
    await ing.settle();
    const second = read(events.slice(20));
    expect(second).toBe(first);
    await ing.poll();
    await ing.settle();
    expect(ing.stdoutBuffer(16).buffer).not.toBe(outside.buffer);
    await ing.finish();
    const stored = await rows();
    // In store order: the outbox's, the first flush's stdout-only event, then the second flush's.
    const ids = events.map((e) => eventId(e));
    expect(stored.map((r) => r.event_id)).toEqual([
      ...ids.slice(0, 20),
      eventId(SPEC_EVENTS.phaseStarted),
      ...ids.slice(20),
    ]);
    expect(stored.map((r) => r.source)).toEqual([
      ...Array<string>(20).fill("outbox"),
      ...Array<string>(21).fill("stdout"),
    ]);
    expect(
      (await ts.store.all<{ text: string }>("SELECT text FROM lattice_run_logs WHERE run_id = 'run-1'")).map(
        (l) => l.text,
      ),
    ).toEqual(["a log line"]);
  });

  it("pairs stdout copies with outbox lines out of step (reordered, stdout only, outbox only, CRLF, non-ASCII): each event once, from the outbox where it has it", async () => {
    const path = join(dir, "outbox.jsonl");
    const events = Array.from({ length: 300 }, (_, i) => ({
      ...SPEC_EVENTS.infoProgress,
      timestamp: new Date(Date.parse("2026-01-15T10:30:00Z") + i).toISOString(),
      payload: { message: i % 7 === 0 ? `étape ${i} — done ✓` : `step ${i}`, i },
    }));
    const onlyStdout = events[150]!;
    const onlyOutbox = { ...SPEC_EVENTS.phaseStarted, payload: { phase: "outbox only" } };
    const outbox: Array<{ timestamp: string }> = events.filter((e) => e !== onlyStdout);
    outbox.splice(100, 0, onlyOutbox);
    appendFileSync(path, outbox.map((e) => `${JSON.stringify(e)}\n`).join(""));
    const stdout = [...events];
    [stdout[10], stdout[11]] = [stdout[11]!, stdout[10]!];
    [stdout[40], stdout[200]] = [stdout[200]!, stdout[40]!];
    const ing = ingestor();
    // In uneven chunks, some lines with CRLF endings.
    const text = stdout.map((e, i) => `LATTICE_EVENT ${JSON.stringify(e)}${i % 5 === 0 ? "\r\n" : "\n"}`).join("");
    const bytes = Buffer.from(text);
    for (let at = 0; at < bytes.length; at += 4093) ing.pushStdout(Buffer.from(bytes.subarray(at, at + 4093)));
    await ing.finish();
    const stored = await rows();
    const byId = new Map(stored.map((r) => [r.event_id, r]));
    expect(stored).toHaveLength(events.length + 1);
    expect(byId.get(eventId(onlyStdout))).toMatchObject({ source: "stdout", outbox_line: null });
    expect(byId.get(eventId(onlyOutbox))).toMatchObject({ source: "outbox" });
    expect(Number(byId.get(eventId(onlyOutbox))!.outbox_line)).toBe(101);
    for (const e of outbox) expect(byId.get(eventId(e))!.source).toBe("outbox");
    expect(ing.stored).toBe(events.length + 1);
    // Stored as written, non-ASCII included, with the timestamp as its own column.
    const json = await ts.store.all<{ event_json: string; event_ts: string }>(
      "SELECT event_json, event_ts FROM lattice_run_events WHERE run_id = 'run-1' ORDER BY seq",
    );
    expect(json.map((r) => JSON.parse(r.event_json) as unknown)).toEqual(outbox.concat([onlyStdout]));
    expect(json.map((r) => r.event_ts)).toEqual(outbox.concat([onlyStdout]).map((e) => e.timestamp));
  });

  it("splits stdout into lines across chunks: CRLF, over-long lines inside a chunk and across two, an event split in two", async () => {
    const ing = new RunIngestor({ ...ingestorOptions(), maxLineBytes: 1000 });
    const event = line(SPEC_EVENTS.info);
    const text = Buffer.concat([
      Buffer.from(`first log\r\n${"x".repeat(1500)}\n`),
      event,
      Buffer.from(`${"y".repeat(1400)}\nlast log\n`),
    ]);
    const eventAt = text.indexOf(event);
    // Cut inside the event line and inside the second over-long line.
    const cuts = [0, eventAt + 20, eventAt + event.length + 700, text.length];
    for (let i = 1; i < cuts.length; i++) ing.pushStdout(Buffer.from(text.subarray(cuts[i - 1], cuts[i])));
    await ing.finish();
    expect((await rows()).map((r) => [r.event_id, r.source])).toEqual([[eventId(SPEC_EVENTS.info), "stdout"]]);
    expect(
      (
        await ts.store.all<{ text: string }>("SELECT text FROM lattice_run_logs WHERE run_id = 'run-1' ORDER BY seq")
      ).map((l) => l.text),
    ).toEqual(["first log", "last log"]);
    const errors = await ts.store.all<{ line_no: number; reason: string; excerpt: string }>(
      "SELECT line_no, reason, excerpt FROM lattice_protocol_errors WHERE run_id = 'run-1' ORDER BY line_no",
    );
    expect(errors.map((e) => [Number(e.line_no), e.reason])).toEqual([
      [2, "line of 1500 bytes exceeds the limit of 1000 bytes; discarded"],
      [4, "line of 1400 bytes exceeds the limit of 1000 bytes; discarded"],
    ]);
    expect(errors.map((e) => e.excerpt.slice(0, 3))).toEqual(["xxx", "yyy"]);
  });

  it("records the outbox's bad lines as protocol errors and stores the good ones", async () => {
    const path = join(dir, "outbox.jsonl");
    const good = {
      ...SPEC_EVENTS.info,
      payload: { ...SPEC_EVENTS.info.payload, message: "token hunter2-secret-value" },
    };
    appendFileSync(
      path,
      [
        "{not json",
        JSON.stringify({ ...SPEC_EVENTS.info, event_type: "NOPE" }),
        JSON.stringify(good),
        `{"pad":"${"y".repeat(2000)}"}`,
      ].join("\n") +
        "\n" +
        '{"torn":',
    );
    const ing = new RunIngestor({ ...ingestorOptions(), maxLineBytes: 1000 });
    await ing.finish();
    expect((await rows()).map((r) => r.event_id)).toEqual([
      eventId({ ...good, payload: { ...good.payload, message: "token [REDACTED]" } }),
    ]);
    const errors = await ts.store.all<{ line_no: number; reason: string; excerpt: string }>(
      "SELECT line_no, reason, excerpt FROM lattice_protocol_errors WHERE run_id = 'run-1' ORDER BY line_no",
    );
    expect(errors.map((e) => [Number(e.line_no), e.reason.split(":")[0]])).toEqual([
      [1, "invalid JSON"],
      [2, "schema violation"],
      [4, "line of 2010 bytes exceeds the limit of 1000 bytes; discarded"],
      [5, "torn last line"],
    ]);
    expect(errors[3]!.reason).toBe(
      "torn last line: 8 bytes at offset " +
        String(Buffer.byteLength(readFileSync(path, "utf8")) - 8) +
        " without a newline (the sprite stopped while writing it); not stored",
    );
    const stored = await ts.store.get<{ event_json: string }>(
      "SELECT event_json FROM lattice_run_events WHERE run_id = 'run-1'",
    );
    expect(stored!.event_json).not.toContain("hunter2");
  });

  it("stops reading an outbox that was rewritten shorter, saying so", async () => {
    const path = join(dir, "outbox.jsonl");
    appendFileSync(path, `${JSON.stringify(SPEC_EVENTS.info)}\n`);
    const ing = ingestor();
    await ing.poll();
    await ing.settle();
    writeFileSync(path, "");
    await ing.finish();
    const errors = await ts.store.all<{ reason: string }>(
      "SELECT reason FROM lattice_protocol_errors WHERE run_id = 'run-1'",
    );
    expect(errors.map((e) => e.reason)).toEqual([
      `outbox unreadable, no longer read for this run: ${path} shrank to 0 bytes but ${JSON.stringify(SPEC_EVENTS.info).length + 1} were already read: the outbox is append-only and must not be rewritten`,
    ]);
  });
});
