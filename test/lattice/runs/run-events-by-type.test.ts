import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { EVENT_TYPES, RunStore } from "../../../src/lattice/index.js";
import { EVENT_TYPE_INDEX_TERM, UNINDEXED_EVENT_TYPES } from "../../../src/lattice/runs/index.js";
import { availableStoreKinds, type TestStore } from "../../helpers/stores.js";

const kinds = await availableStoreKinds();

/**
 * Lookups by event type: the type index holds only some types (migration 140), so a lookup of
 * indexed types reads the index and one of other types reads the run's rows. Either way the same
 * events come back.
 */
describe.each(kinds)("a run's events by type ($name)", (kind) => {
  let t: TestStore;
  let runs: RunStore;
  beforeEach(async () => {
    t = await kind.open();
    runs = new RunStore(t.store, "p", () => 1_000);
    for (const id of ["r1", "r2"]) {
      await runs.create({
        id,
        project_id: "p",
        role: "Aya",
        entry_id: null,
        sprite_id: "aya",
        work_item_id: id,
        command: ["true"],
        workspace: "/w",
        checkpoint_dir: "/c",
        run_dir: "/r",
        worker: null,
        host: "h",
        supervisor_pid: 1,
        gate: null,
      });
    }
    // Every type twice in r1 (attempt 1, then attempt 2), once in r2.
    const insert = `INSERT INTO lattice_run_events (run_id, seq, attempt, event_id, event_type, source, outbox_line, event_json, received_ms, event_ts) VALUES (?, ?, ?, ?, ?, 'outbox', ?, ?, ?, ?)`;
    let seq = 0;
    for (const [run, attempt] of [
      ["r1", 1],
      ["r1", 2],
      ["r2", 1],
    ] as const) {
      for (const type of EVENT_TYPES) {
        seq++;
        const ts = `2026-01-15T10:30:${String(seq).padStart(2, "0")}Z`;
        await t.store.run(insert, [
          run,
          seq,
          attempt,
          `id-${seq}`,
          type,
          seq,
          JSON.stringify({ event_type: type, timestamp: ts, payload: {} }),
          seq * 10,
          ts,
        ]);
      }
    }
  });
  afterEach(async () => t.cleanup());

  const typesOf = (events: Array<{ event_type: string; run_id: string; seq: number }>) =>
    events.map((e) => `${e.run_id}:${e.seq}:${e.event_type}`);
  const n = EVENT_TYPES.length;
  const at = (type: string, attempt: 1 | 2) =>
    `r1:${EVENT_TYPES.indexOf(type as (typeof EVENT_TYPES)[number]) + 1 + (attempt - 1) * n}:${type}`;

  it("finds indexed types, unindexed types and a mix of both, in order", async () => {
    expect(typesOf(await runs.events("r1", { types: ["COMPLETED", "WAITING"], order: "seq" }))).toEqual([
      at("WAITING", 1),
      at("COMPLETED", 1),
      at("WAITING", 2),
      at("COMPLETED", 2),
    ]);
    expect(typesOf(await runs.events("r1", { types: ["INFO", "PHASE_FINISHED"], order: "seq" }))).toEqual([
      at("INFO", 1),
      at("PHASE_FINISHED", 1),
      at("INFO", 2),
      at("PHASE_FINISHED", 2),
    ]);
    expect(typesOf(await runs.events("r1", { types: ["PHASE_STARTED", "ARTIFACT"], order: "seq" }))).toEqual([
      at("PHASE_STARTED", 1),
      at("ARTIFACT", 1),
      at("PHASE_STARTED", 2),
      at("ARTIFACT", 2),
    ]);
    for (const type of EVENT_TYPES)
      expect(typesOf(await runs.events("r1", { type }))).toEqual([at(type, 1), at(type, 2)]);
    expect(typesOf(await runs.undispatched("r1", ["ACTION_REQUEST", "INFO"]))).toEqual([
      at("INFO", 1),
      at("ACTION_REQUEST", 1),
      at("INFO", 2),
      at("ACTION_REQUEST", 2),
    ]);
  });

  it("indexes exactly the types not left out (a new type sorting among the left-out ones would fail here)", async () => {
    const indexed = await t.store.all<{ event_type: string }>(
      `SELECT event_type FROM lattice_run_events WHERE run_id = 'r1' AND attempt = 1 AND ${EVENT_TYPE_INDEX_TERM[t.store.dialect]} ORDER BY event_type`,
    );
    const left: readonly string[] = UNINDEXED_EVENT_TYPES;
    expect(indexed.map((r) => r.event_type)).toEqual(EVENT_TYPES.filter((type) => !left.includes(type)).sort());
  });

  it("reads with the very condition the migrated index was created with", async () => {
    // The same term in an index of our own, read back as the database normalizes it, beside the
    // migrated index's: a lookup whose term differed would not use the index.
    const predicate = async (index: string): Promise<string> => {
      if (t.store.dialect === "sqlite") {
        const row = await t.store.get<{ sql: string }>("SELECT sql FROM sqlite_master WHERE name = ?", [index]);
        return row!.sql.slice(row!.sql.indexOf(" WHERE ") + 7);
      }
      const row = await t.store.get<{ pred: string }>(
        "SELECT pg_get_expr(indpred, indrelid) AS pred FROM pg_index WHERE indexrelid = to_regclass(?)",
        [index],
      );
      return row!.pred;
    };
    await t.store.exec(
      `CREATE INDEX term_check ON lattice_run_events (run_id) WHERE ${EVENT_TYPE_INDEX_TERM[t.store.dialect]}`,
    );
    expect(await predicate("lattice_run_events_type")).toBe(await predicate("term_check"));
    await t.store.exec("DROP INDEX term_check");
  });

  it("gives an attempt's last event of the types asked for", async () => {
    expect((await runs.lastEventOfTypes("r1", 1, ["COMPLETED", "ERROR", "WAITING"]))?.event_id).toBe(
      `id-${EVENT_TYPES.indexOf("ERROR") + 1}`,
    );
    expect((await runs.lastEventOfTypes("r1", 2, ["WAITING"]))?.event_id).toBe(
      `id-${EVENT_TYPES.indexOf("WAITING") + 1 + n}`,
    );
    expect((await runs.lastEventOfTypes("r1", 2, ["INFO"]))?.event_type).toBe("INFO");
    expect(await runs.lastEventOfTypes("r1", 3, ["COMPLETED"])).toBeUndefined();
  });

  it("reads events of several runs by type up to a time", async () => {
    const found = await runs.eventsOfTypes(["r1", "r2"], ["ARTIFACT", "WAITING"], 2 * n * 10 + 1_000);
    expect(found.map((e) => `${e.run_id}:${e.event_type}`)).toEqual([
      "r1:ARTIFACT",
      "r1:WAITING",
      "r1:ARTIFACT",
      "r1:WAITING",
      "r2:ARTIFACT",
      "r2:WAITING",
    ]);
    expect((await runs.eventsOfTypes(["r1", "r2"], ["INFO"], n * 10)).map((e) => e.seq)).toEqual([
      EVENT_TYPES.indexOf("INFO") + 1,
    ]);
  });
});
