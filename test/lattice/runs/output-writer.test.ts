import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { RunStore } from "../../../src/lattice/index.js";
import { RunOutputWriter, type NewEvent, type RunOutput } from "../../../src/lattice/runs/index.js";
import { availableStoreKinds, type TestStore } from "../../helpers/stores.js";

const kinds = await availableStoreKinds();

/** An event as ingest hands it over: from the outbox its texts are bytes, from stdout strings. */
function event(n: number, source: "outbox" | "stdout", payload: Record<string, unknown> = {}): NewEvent {
  const ts = `2026-01-15T10:30:${String(n).padStart(2, "0")}Z`;
  const json = JSON.stringify({ event_type: "INFO", timestamp: ts, payload: { message: `m${n}`, ...payload } });
  const id = `id-${n}`;
  return source === "outbox"
    ? { id: Buffer.from(id), type: "INFO", source, outbox_line: n, json: Buffer.from(json), ts: Buffer.from(ts) }
    : { id, type: "INFO", source, outbox_line: null, json, ts };
}

const usage = { kind: "token_usage", metadata: { model: "m", input_tokens: 10, output_tokens: 5 } };

/**
 * The runs module's writer of a run's output (what ingest hands it, parsed): each event once, the
 * usage counted once, numbering continued, the run's position saved with it, a fenced run refused.
 */
describe.each(kinds)("RunOutputWriter ($name)", (kind) => {
  let t: TestStore;
  let runs: RunStore;
  beforeEach(async () => {
    t = await kind.open();
    runs = new RunStore(t.store, "p", () => 1_000);
    await runs.create({
      id: "r1",
      project_id: "p",
      role: "Aya",
      entry_id: null,
      sprite_id: "aya",
      work_item_id: "r1",
      command: ["true"],
      workspace: "/w",
      checkpoint_dir: "/c",
      run_dir: "/r",
      worker: null,
      host: "h",
      supervisor_pid: 1,
      gate: null,
    });
  });
  afterEach(async () => t.cleanup());

  const output = (events: NewEvent[], line: number): RunOutput => ({
    events,
    logs: [{ stream: "stdout", text: `log ${line}` }],
    errors: [{ source: "outbox", line_no: line, reason: `bad line ${line}`, excerpt: "" }],
    violations: [{ line_no: line, rule: "git_push", detail: "blocked" }],
    position: {
      outbox: { offset: line * 100, line_no: line + 1 },
      stdout: line,
      stderr: 0,
      logBytes: 6,
      logTruncated: false,
    },
    now: 2_000,
  });

  it("stores each event once, counts usage once, numbers on and saves the run's position in the same write", async () => {
    const writer = new RunOutputWriter("r1", 1, (type) => type !== "PHASE_STARTED");
    const first = await t.store.transaction(async (q) =>
      writer.append(q, output([event(1, "outbox"), event(2, "outbox", usage)], 2), await writer.counters(q)),
    );
    expect(first.added).toBe(2);
    expect(first.usage).toBe(true);
    expect(first.fresh.map((e) => [e.seq, e.id, e.event.timestamp])).toEqual([
      [1, "id-1", "2026-01-15T10:30:01Z"],
      [2, "id-2", "2026-01-15T10:30:02Z"],
    ]);
    // The same events again (a re-read after a crash, a stdout copy) and a new one: only the new one is stored and counted.
    const second = await t.store.transaction(async (q) =>
      writer.append(q, output([event(2, "stdout", usage), event(1, "outbox"), event(3, "stdout")], 3), first.counters),
    );
    expect(second.added).toBe(1);
    expect(second.usage).toBe(false);
    expect(second.fresh.map((e) => [e.id, e.source])).toEqual([["id-3", "stdout"]]);
    expect((await runs.events("r1", { order: "seq" })).map((e) => e.id)).toEqual(["id-1", "id-2", "id-3"]);
    expect((await runs.usage("r1")).map((u) => [u.model, u.total_tokens, u.reports])).toEqual([["m", 15, 1]]);
    expect((await runs.logs("r1")).map((l) => [l.seq, l.text])).toEqual([
      [1, "log 2"],
      [2, "log 3"],
    ]);
    expect((await runs.protocolErrors("r1")).map((e) => e.reason)).toEqual(["bad line 2", "bad line 3"]);
    expect((await runs.violations("r1")).map((v) => v.line_no)).toEqual([2, 3]);
    expect(await writer.position(t.store)).toEqual(output([], 3).position);
    // A writer starting afresh reads where numbering goes on (after the last stored event: the seqs
    // the second write gave the two already stored are left unused).
    expect(second.fresh[0]!.seq).toBe(5);
    expect(await writer.counters(t.store)).toEqual({ seq: 6, logSeq: 3, violationsSeen: 3 });
  });

  it("refuses a fenced run's output and stores none of it", async () => {
    // Another worker's newer run of the same entry fences r1.
    await t.store.run("UPDATE lattice_runs SET entry_id = 'e1', worker = 'w1' WHERE id = 'r1'");
    await runs.create({
      id: "r2",
      project_id: "p",
      role: "Aya",
      entry_id: "e1",
      sprite_id: "aya",
      work_item_id: "r2",
      command: ["true"],
      workspace: "/w",
      checkpoint_dir: "/c",
      run_dir: "/r",
      worker: "w2",
      host: "h",
      supervisor_pid: 1,
      gate: null,
    });
    const writer = new RunOutputWriter("r1", 1);
    await expect(
      t.store.transaction(async (q) => writer.append(q, output([event(1, "outbox")], 1), await writer.counters(q))),
    ).rejects.toThrow("run r1: its entry was taken over by another worker; the run's late output is refused");
    expect(await runs.events("r1")).toEqual([]);
    expect(await runs.logs("r1")).toEqual([]);
    expect((await writer.position(t.store))?.outbox).toEqual({ offset: 0, line_no: 1 });
  });
});
