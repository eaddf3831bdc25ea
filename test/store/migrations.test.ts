import { describe, expect, it } from "vitest";
import { migrate } from "../../src/store/index.js";
import { migrations as schema } from "../../src/app/index.js";

/** The list itself: these tests apply parts of it. */
const migrations = await schema.load();
import { availableStoreKinds } from "../helpers/stores.js";

const available = await availableStoreKinds();

const INSERT = `INSERT INTO lattice_run_events (run_id, seq, attempt, event_id, event_type, source, outbox_line, event_json, received_ms, event_ts)
  VALUES (?, ?, 1, ?, 'INFO', 'outbox', ?, ?, 0, ?) ON CONFLICT (run_id, event_ts, event_id) DO NOTHING`;

describe.each(available)("migration 130, event identity keyed in time order ($name)", (kind) => {
  it("keeps the events stored before it, with their timestamps as keys, and still stores each event once per run", async () => {
    const { store, cleanup } = await kind.openEmpty();
    try {
      await migrate(
        store,
        migrations.filter((m) => m.version < 130),
      );
      const json = (i: number) =>
        JSON.stringify({ event_type: "INFO", timestamp: `2026-01-15T10:30:0${i}Z`, payload: { message: `m${i}` } });
      for (const i of [1, 2]) {
        await store.run(
          `INSERT INTO lattice_run_events (run_id, seq, attempt, event_id, event_type, source, outbox_line, event_json, received_ms) VALUES ('r1', ?, 1, ?, 'INFO', 'outbox', ?, ?, 0)`,
          [i, `id${i}`, i, json(i)],
        );
      }
      expect(
        await migrate(
          store,
          migrations.filter((m) => m.version <= 130),
        ),
      ).toEqual([130]);
      expect(
        await store.all("SELECT seq, event_id, event_ts, event_json FROM lattice_run_events ORDER BY seq"),
      ).toEqual([
        { seq: 1, event_id: "id1", event_ts: "2026-01-15T10:30:01Z", event_json: json(1) },
        { seq: 2, event_id: "id2", event_ts: "2026-01-15T10:30:02Z", event_json: json(2) },
      ]);
      // The same event again (same id, same timestamp) is dropped; the same id in another run is not.
      expect((await store.run(INSERT, ["r1", 3, "id2", 2, json(2), "2026-01-15T10:30:02Z"])).changes).toBe(0);
      expect((await store.run(INSERT, ["r2", 1, "id2", 2, json(2), "2026-01-15T10:30:02Z"])).changes).toBe(1);
      expect((await store.run(INSERT, ["r1", 3, "id3", 3, json(3), "2026-01-15T10:30:03Z"])).changes).toBe(1);
    } finally {
      await cleanup();
    }
  });
});
