import { describe, expect, it } from "vitest";
import { Blackboard } from "../../src/blackboard/index.js";
import { migrate, migrations } from "../../src/store/index.js";
import { availableStoreKinds } from "../helpers/stores.js";

const kinds = await availableStoreKinds();

describe.each(kinds)("blackboard migration 2 ($name)", (kind) => {
  it("moves status and updated_at of existing entries out of entry_json; they read, claim and finish as before", async () => {
    const { store, cleanup } = await kind.openEmpty();
    try {
      await migrate(store, migrations.filter((m) => m.version === 1));
      const entry = {
        id: "old-1", from: "Human", to: "Aya", project_id: "vpm-mini", kind: "doc_update_proposal_request", status: "open",
        payload: { summary: "from before", n: 1.5 }, target_docs: ["a.md"], created_at: "2025-11-30T02:30:00+09:00", updated_at: "2025-11-30T03:00:00+09:00", note: "kept",
      };
      const done = { ...entry, id: "old-2", status: "done", note: undefined };
      for (const e of [entry, done]) {
        await store.run(
          `INSERT INTO bb_entries (project_id, id, version, status, from_actor, to_actor, kind, created_ms, updated_ms, entry_json, content_hash) VALUES (?, ?, 3, ?, ?, ?, ?, ?, ?, ?, ?)`,
          ["vpm-mini", e.id, e.status, e.from, e.to, e.kind, Date.parse(e.created_at), Date.parse(e.updated_at), JSON.stringify(e), "h"],
        );
      }
      await migrate(store, migrations);
      const board = new Blackboard(store, { projectId: "vpm-mini", humans: ["Human"], clock: () => Date.parse("2026-01-01T00:00:00Z") });
      expect(await board.get("old-1")).toEqual({ entry, version: 3, claimed_by: null, lease_expires_at: null });
      expect((await board.get("old-2")).entry).toEqual(JSON.parse(JSON.stringify(done)));
      const stored = await store.get<{ entry_json: string; updated_at: string }>("SELECT entry_json, updated_at FROM bb_entries WHERE id = ?", ["old-1"]);
      expect(JSON.parse(stored!.entry_json)).not.toHaveProperty("status");
      expect(JSON.parse(stored!.entry_json)).not.toHaveProperty("updated_at");
      expect(stored!.updated_at).toBe("2025-11-30T03:00:00+09:00");

      const claimed = await board.claim("w1", "Aya", ["doc_update_proposal_request"]);
      expect(claimed).toMatchObject({ version: 4, claimed_by: "w1", entry: { ...entry, status: "in_progress", updated_at: "2026-01-01T00:00:00.000Z" } });
      expect(await board.claim("w2", "Aya", ["doc_update_proposal_request"])).toBeUndefined();
      const finished = await board.transition("Aya", "old-1", "done", { worker: "w1" });
      expect(finished).toMatchObject({ version: 5, claimed_by: null, entry: { ...entry, status: "done", updated_at: "2026-01-01T00:00:00.000Z" } });
      expect((await board.list({ status: "done" })).map((s) => s.entry.id)).toEqual(["old-1", "old-2"]);
      expect((await board.history("old-1")).map((h) => [h.action, h.from_status, h.to_status])).toEqual([["claim", "open", "in_progress"], ["status", "in_progress", "done"]]);
    } finally {
      await cleanup();
    }
  });
});
