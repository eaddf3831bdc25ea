import { describe, expect, it } from "vitest";
import { Blackboard } from "../../src/blackboard/index.js";
import { migrate, type SqlParam, type Store } from "../../src/store/index.js";
import { migrations as schema } from "../../src/app/index.js";

/** The list itself: these tests apply parts of it. */
const migrations = await schema.load();
import { availableStoreKinds } from "../helpers/stores.js";

const kinds = await availableStoreKinds();

describe.each(kinds)("blackboard migration 2 ($name)", (kind) => {
  it("moves status and updated_at of existing entries out of entry_json; they read, claim and finish as before", async () => {
    const { store, cleanup } = await kind.openEmpty();
    try {
      await migrate(
        store,
        migrations.filter((m) => m.version === 1),
      );
      const entry = {
        id: "old-1",
        from: "Human",
        to: "Aya",
        project_id: "vpm-mini",
        kind: "doc_update_proposal_request",
        status: "open",
        payload: { summary: "from before", n: 1.5 },
        target_docs: ["a.md"],
        created_at: "2025-11-30T02:30:00+09:00",
        updated_at: "2025-11-30T03:00:00+09:00",
        note: "kept",
      };
      const done = { ...entry, id: "old-2", status: "done", note: undefined };
      for (const e of [entry, done]) {
        await store.run(
          `INSERT INTO bb_entries (project_id, id, version, status, from_actor, to_actor, kind, created_ms, updated_ms, entry_json, content_hash) VALUES (?, ?, 3, ?, ?, ?, ?, ?, ?, ?, ?)`,
          [
            "vpm-mini",
            e.id,
            e.status,
            e.from,
            e.to,
            e.kind,
            Date.parse(e.created_at),
            Date.parse(e.updated_at),
            JSON.stringify(e),
            "h",
          ],
        );
      }
      await migrate(store, migrations);
      const board = new Blackboard(store, {
        projectId: "vpm-mini",
        humans: ["Human"],
        clock: () => Date.parse("2026-01-01T00:00:00Z"),
      });
      expect(await board.get("old-1")).toEqual({ entry, version: 3, claimed_by: null, lease_expires_at: null });
      expect((await board.get("old-2")).entry).toEqual(JSON.parse(JSON.stringify(done)));
      const stored = await store.get<{ entry_json: string; updated_at: string }>(
        "SELECT entry_json, updated_at FROM bb_entries WHERE id = ?",
        ["old-1"],
      );
      expect(JSON.parse(stored!.entry_json)).not.toHaveProperty("status");
      expect(JSON.parse(stored!.entry_json)).not.toHaveProperty("updated_at");
      expect(stored!.updated_at).toBe("2025-11-30T03:00:00+09:00");

      const claimed = await board.claim("w1", "Aya", ["doc_update_proposal_request"]);
      expect(claimed).toMatchObject({
        version: 4,
        claimed_by: "w1",
        entry: { ...entry, status: "in_progress", updated_at: "2026-01-01T00:00:00.000Z" },
      });
      expect(await board.claim("w2", "Aya", ["doc_update_proposal_request"])).toBeUndefined();
      const finished = await board.transition("Aya", "old-1", "done", { worker: "w1" });
      expect(finished).toMatchObject({
        version: 5,
        claimed_by: null,
        entry: { ...entry, status: "done", updated_at: "2026-01-01T00:00:00.000Z" },
      });
      expect((await board.list({ status: "done" })).map((s) => s.entry.id)).toEqual(["old-1", "old-2"]);
      expect((await board.history("old-1")).map((h) => [h.action, h.from_status, h.to_status])).toEqual([
        ["claim", "open", "in_progress"],
        ["status", "in_progress", "done"],
      ]);
    } finally {
      await cleanup();
    }
  });
});

const postgres = kinds.filter((k) => k.name === "postgres");

describe.each(postgres)("blackboard migration 420 ($name)", (kind) => {
  const at = (iso: string) => () => Date.parse(iso);
  const fields = (s: {
    entry: { id: string; status: string; to: string; kind: string };
    version: number;
    claimed_by: string | null;
  }) => [s.entry.id, s.entry.status, s.entry.to, s.entry.kind, s.version, s.claimed_by];
  /** The row version of an entry's body: it changes when anything writes the body row. */
  const bodyVersion = async (store: Store, id: string) =>
    (await store.get<{ x: string }>("SELECT xmin::text AS x FROM bb_entry_body WHERE id = ?", [id]))!.x;

  it("moves a board of open, claimed, finished and edited entries into body and state; they read, list, claim and finish as before", async () => {
    // The board is made by this pmagent on a store at the newest version, then copied row by row
    // into a store at version 410 (bb_entries a table, as it was), which is then migrated.
    const made = await kind.open();
    const { store, cleanup } = await kind.openEmpty();
    try {
      await migrate(
        store,
        migrations.filter((m) => m.version < 420),
      );
      const source = new Blackboard(made.store, {
        projectId: "vpm-mini",
        humans: ["Human"],
        clock: at("2026-01-01T00:00:00Z"),
      });
      const sourceOther = new Blackboard(made.store, {
        projectId: "other",
        humans: ["Human"],
        clock: at("2026-01-01T00:00:00Z"),
      });
      const base = {
        from: "Human",
        project_id: "vpm-mini",
        payload: { summary: "s" },
        target_docs: ["a.md"],
        created_at: "2025-11-30T02:30:00+09:00",
        updated_at: "2025-11-30T02:30:00+09:00",
      };
      for (let i = 1; i <= 6; i++)
        await source.post("Human", {
          ...base,
          id: `e${i}`,
          to: i % 2 ? "Aya" : "Kai",
          kind: "doc_update_proposal_request",
          status: "open",
          created_at: `2025-11-30T02:3${i}:00+09:00`,
        });
      await sourceOther.post("Human", {
        ...base,
        project_id: "other",
        id: "e1",
        to: "Aya",
        kind: "doc_update_proposal_request",
        status: "open",
      });
      await source.claim("w1", "Aya", ["doc_update_proposal_request"]);
      await source.claim("w2", "Aya", ["doc_update_proposal_request"]);
      await source.transition("Aya", "e3", "done", { worker: "w2" });
      await source.change("Human", "e6", { note: "edited before", to: "Aya" });
      const before = {
        list: (await source.list()).map(fields),
        history: await source.history(),
        outline: await source.outline({ from: ["Human"] }),
        other: await sourceOther.list(),
      };
      for (const table of ["bb_entries", "bb_history"]) {
        for (const row of await made.store.all<Record<string, SqlParam>>(`SELECT * FROM ${table}`, [])) {
          const cols = Object.keys(row);
          await store.run(
            `INSERT INTO ${table} (${cols.join(", ")}) VALUES (${cols.map(() => "?").join(", ")})`,
            Object.values(row),
          );
        }
      }
      await store.exec("SELECT setval(pg_get_serial_sequence('bb_history', 'seq'), (SELECT max(seq) FROM bb_history))");
      const board = new Blackboard(store, {
        projectId: "vpm-mini",
        humans: ["Human"],
        clock: at("2026-01-01T00:00:00Z"),
      });
      const other = new Blackboard(store, { projectId: "other", humans: ["Human"], clock: at("2026-01-01T00:00:00Z") });

      // 420 and whatever came after it (migrations of other modules with later versions).
      expect(await migrate(store, migrations)).toEqual(
        migrations.filter((m) => m.version >= 420).map((m) => m.version),
      );
      expect((await board.list()).map(fields)).toEqual(before.list);
      expect(await board.history()).toEqual(before.history);
      expect(await board.outline({ from: ["Human"] })).toEqual(before.outline);
      expect(await other.list()).toEqual(before.other);
      expect((await board.list({ status: "in_progress" })).map((s) => [s.entry.id, s.claimed_by])).toEqual([
        ["e1", "w1"],
      ]);

      // The claim path writes the state row only; an edit writes the body too.
      const e5 = await bodyVersion(store, "e5");
      const next = await board.finishAndClaim("Aya", "e1", "done", {
        worker: "w1",
        kinds: ["doc_update_proposal_request"],
      });
      expect(next.finished).toMatchObject({ version: 3, claimed_by: null, entry: { id: "e1", status: "done" } });
      expect(next.next).toMatchObject({
        claimed_by: "w1",
        entry: { id: "e5", status: "in_progress", payload: { summary: "s" } },
      });
      expect((await board.heartbeat("w1", "e5", 60_000)).claimed_by).toBe("w1");
      await board.transition("Aya", "e5", "done", { worker: "w1" });
      expect(await bodyVersion(store, "e5")).toBe(e5);
      expect(await board.claim("w3", "Aya", ["doc_update_proposal_request"])).toMatchObject({
        entry: { id: "e6", note: "edited before" },
      });
      const e6 = await bodyVersion(store, "e6");
      expect(await board.change("Human", "e6", { note: "edited after" })).toMatchObject({
        entry: { note: "edited after", status: "in_progress" },
        claimed_by: "w3",
      });
      expect(await bodyVersion(store, "e6")).not.toBe(e6);
      expect((await board.get("e6")).entry.note).toBe("edited after");
      expect((await other.list()).map(fields)).toEqual([["e1", "open", "Aya", "doc_update_proposal_request", 1, null]]);
      await expect(
        board.post("Human", {
          ...base,
          id: "e2",
          to: "Kai",
          kind: "doc_update_proposal_request",
          status: "open",
          note: "not the same",
        }),
      ).rejects.toThrow(/e2/);
    } finally {
      await Promise.all([cleanup(), made.cleanup()]);
    }
  });
});
