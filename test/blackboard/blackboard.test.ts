import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Blackboard, EntrySchema } from "../../src/blackboard/index.js";
import { availableStoreKinds, type TestStore } from "../helpers/stores.js";
import { PROJECT, request, testBoard } from "../helpers/blackboard.js";

const kinds = await availableStoreKinds();

describe.each(kinds)("blackboard ($name)", (kind) => {
  let t: TestStore;
  beforeAll(async () => {
    t = await kind.open();
  });
  afterAll(async () => t.cleanup());

  describe("posting", () => {
    it("fills in from, project, status, payload, target_docs and timestamps", async () => {
      const { board } = testBoard(t.store);
      const { stored, created } = await board.post("Human", { to: "Aya", kind: "doc_update_proposal_request" });
      expect(created).toBe(true);
      expect(EntrySchema.parse(stored.entry)).toEqual(stored.entry);
      expect(stored.entry).toMatchObject({
        from: "Human",
        project_id: PROJECT,
        status: "open",
        payload: {},
        target_docs: [],
        created_at: "2026-01-15T10:00:00.000Z",
        updated_at: "2026-01-15T10:00:00.000Z",
      });
      expect(stored.entry.id).toMatch(/^vpm-mini-doc_update_proposal_request-20260115T100000Z-[0-9a-f]{6}$/);
      expect(stored.version).toBe(1);
    });

    it("keeps the spec's optional fields, both target_docs forms and zoned timestamps as given", async () => {
      const { board } = testBoard(t.store);
      const given = {
        ...request("vpm-mini-docupdate-issue571-1", {
          target_docs: [{ path: "STATE/current_state.md", section: "## 差分（δ）" }],
        }),
        source_issue: 571,
        source_comment_id: "3581234",
        source_run_id: 19793359086,
        note: "first",
        created_at: "2025-11-30T02:30:00+09:00",
        updated_at: "2025-11-30T02:30:00+09:00",
      };
      const { stored } = await board.post("Human", given);
      expect(stored.entry).toEqual({ ...given, from: "Human", project_id: PROJECT, status: "open" });
      expect((await board.get(given.id!)).entry).toEqual(stored.entry);
    });

    it("re-posting the same entry is a no-op, other content under the same id is refused", async () => {
      const { board, clock } = testBoard(t.store);
      await board.post("Human", request("dup-1"));
      clock.advance(1000);
      const again = await board.post("Human", request("dup-1"));
      expect(again.created).toBe(false);
      expect(again.stored.version).toBe(1);
      expect(again.stored.entry.created_at).toBe("2026-01-15T10:00:00.000Z");
      await expect(board.post("Human", request("dup-1", { to: "Sho" }))).rejects.toThrow(
        "entry dup-1 already exists with different content (to differ): ids are unique, post it under a new id",
      );
      expect(await board.history("dup-1")).toHaveLength(1);
    });

    it.each([
      [{ to: "Aya" }, "$.kind: Invalid input: expected string, received undefined"],
      [
        { to: "Aya", kind: "k", status: "waiting" },
        '$.status: Invalid option: expected one of "open"|"in_progress"|"done"|"error"|"canceled"',
      ],
      [{ to: "Aya", kind: "k", payload: [] }, "$.payload: Invalid input: expected record, received array"],
      [
        { to: "Aya", kind: "k", target_docs: ["a.md", { path: "b.md" }] },
        "$.target_docs: expected an array of paths or an array of {path, section} objects",
      ],
      [{ to: "Aya", kind: "k", created_at: "2025-11-30 02:30" }, '$.created_at: "2025-11-30 02:30" has no time zone'],
      [
        { to: "Aya", kind: "k", created_at: "2025-11-30T02:30:00" },
        '$.created_at: "2025-11-30T02:30:00" has no time zone: add one (Z or ±hh:mm)',
      ],
      [{ to: "Aya", kind: "k", source_issue: true }, "$.source_issue: Invalid input"],
    ])("refuses a bad entry %j", async (input, message) => {
      const { board } = testBoard(t.store);
      const err = await board.post("Human", input, "entry.json").catch((e: Error) => e);
      expect(err).toMatchObject({ code: "invalid_entry", kind: "usage" });
      expect((err as Error).message).toContain("entry.json is invalid:");
      expect((err as Error).message).toContain(message);
    });

    it("refuses an entry of another project", async () => {
      const { board } = testBoard(t.store);
      await expect(board.post("Human", request("x", { project_id: "hakone-e2" }), "e.json")).rejects.toThrow(
        'e.json: project_id "hakone-e2" is not this project\'s ("vpm-mini")',
      );
    });
  });

  describe("changes", () => {
    it("records every change in the append-only history with actor, time, from → to and what changed", async () => {
      const { board, clock } = testBoard(t.store);
      await board.post("Human", request("h-1"));
      clock.advance(60_000);
      await board.change("Aya", "h-1", { payload: { summary: "revised" }, note: "clarified" });
      clock.advance(60_000);
      await board.transition("Aya", "h-1", "done");
      const h = await board.history("h-1");
      expect(h.map((r) => [r.version, r.at, r.actor, r.action, r.from_status, r.to_status])).toEqual([
        [1, "2026-01-15T10:00:00.000Z", "Human", "post", null, "open"],
        [2, "2026-01-15T10:01:00.000Z", "Aya", "update", "open", "open"],
        [3, "2026-01-15T10:02:00.000Z", "Aya", "status", "open", "done"],
      ]);
      expect(h[1]!.changes).toEqual({
        payload: { from: { summary: "request h-1", details: {}, refs: {} }, to: { summary: "revised" } },
        note: { from: null, to: "clarified" },
      });
      expect((await board.get("h-1")).entry.updated_at).toBe("2026-01-15T10:02:00.000Z");
    });

    it("refuses a stale write (optimistic concurrency)", async () => {
      const { board } = testBoard(t.store);
      const { stored } = await board.post("Human", request("v-1"));
      await board.change("Aya", "v-1", { note: "a" }, { expectedVersion: stored.version });
      const err = await board
        .change("Aya", "v-1", { note: "b" }, { expectedVersion: stored.version })
        .catch((e: Error) => e);
      expect(err).toMatchObject({ code: "stale_write", kind: "conflict" });
      expect((err as Error).message).toBe(
        "entry v-1 was changed by someone else (you had version 1, it is now at 2): read it again and retry",
      );
      expect((await board.get("v-1")).entry.note).toBe("a");
    });

    it("concurrent writers of one entry: exactly one wins", async () => {
      const { board } = testBoard(t.store);
      await board.post("Human", request("race-1"));
      const results = await Promise.allSettled(
        ["Aya", "Human"].map((actor) => board.change(actor, "race-1", { note: actor }, { expectedVersion: 1 })),
      );
      expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
      expect((results.find((r) => r.status === "rejected") as PromiseRejectedResult).reason).toMatchObject({
        code: "stale_write",
      });
    });

    it("says which entry does not exist", async () => {
      const { board } = testBoard(t.store);
      await expect(board.transition("Human", "nope", "done")).rejects.toThrow(
        "entry nope does not exist in project vpm-mini",
      );
      await expect(board.history("nope")).rejects.toMatchObject({ code: "entry_not_found" });
    });
  });

  describe("claims", () => {
    it("follow the pick rule: addressee, kind, open, this project, oldest first", async () => {
      const { board, clock } = testBoard(t.store, Date.parse("2026-06-01T00:00:00Z"));
      const apply = { to: "Tsugu", kind: "doc_update_apply_request" };
      await board.post("Human", request("pick-wrong-kind", { to: "Tsugu", kind: "something_else" }));
      clock.advance(1);
      await board.post("Human", request("pick-to-sho", { to: "Sho", kind: "doc_update_apply_request" }));
      clock.advance(1);
      await board.post("Human", request("pick-canceled", apply));
      clock.advance(1);
      await board.post("Human", request("pick-b", apply));
      clock.advance(1);
      await board.post("Human", request("pick-c", apply));
      // Older by created_at although posted last: order is by created_at, not by insertion.
      await board.post("Human", request("pick-a", { ...apply, created_at: "2026-05-31T00:00:00Z" }));
      await board.transition("Human", "pick-canceled", "canceled");
      const claimed: string[] = [];
      for (
        let s = await board.claim("w1", "Tsugu", ["doc_update_apply_request"]);
        s;
        s = await board.claim("w1", "Tsugu", ["doc_update_apply_request"])
      )
        claimed.push(s.entry.id);
      expect(claimed).toEqual(["pick-a", "pick-b", "pick-c"]);
      expect(await board.claim("w1", "Tsugu", [])).toBeUndefined();
    });

    it("carry a lease; heartbeats extend it; an expired lease is taken over by another claimer of the role", async () => {
      const { board, clock } = testBoard(t.store, Date.parse("2027-01-01T00:00:00Z"));
      await board.post("Human", request("lease-1", { to: "Gen", kind: "pm_snapshot_request" }));
      const a = await board.claim("gen-a", "Gen", ["pm_snapshot_request"]);
      expect(a).toMatchObject({
        claimed_by: "gen-a",
        lease_expires_at: "2027-01-01T00:00:05.000Z",
        entry: { status: "in_progress" },
      });
      expect(await board.claim("gen-b", "Gen", ["pm_snapshot_request"])).toBeUndefined();
      clock.advance(4_000);
      await board.heartbeat("gen-a", "lease-1");
      clock.advance(4_000);
      expect(await board.claim("gen-b", "Gen", ["pm_snapshot_request"])).toBeUndefined();
      clock.advance(2_000);
      const b = await board.claim("gen-b", "Gen", ["pm_snapshot_request"]);
      expect(b).toMatchObject({ claimed_by: "gen-b", entry: { id: "lease-1", status: "in_progress" } });
      // The first worker lost its claim: heartbeat and completion are refused.
      await expect(board.heartbeat("gen-a", "lease-1")).rejects.toThrow(
        "entry lease-1: worker gen-a does not hold its claim (in_progress, claimed by gen-b)",
      );
      await expect(board.transition("Gen", "lease-1", "done", { worker: "gen-a" })).rejects.toThrow(
        "entry lease-1: worker gen-a no longer holds its claim (taken over by gen-b)",
      );
      const done = await board.transition("Gen", "lease-1", "done", { worker: "gen-b" });
      expect(done).toMatchObject({ claimed_by: null, lease_expires_at: null, entry: { status: "done" } });
      expect((await board.history("lease-1")).map((h) => h.action)).toEqual(["post", "claim", "takeover", "status"]);
    });

    it("claimNext waits for posted entries: each waiting claimer gets its own", { timeout: 20_000 }, async () => {
      const { board } = testBoard(t.store);
      const stop = new AbortController();
      // Waits far longer than the test may run: only the post's wake-up can end them.
      const waiting = ["rin-a", "rin-b"].map((w) =>
        board.claimNext(w, "Rin", ["rin_request"], { waitMs: 600_000, signal: stop.signal }),
      );
      await board.post("Human", request("rin-1", { to: "Rin", kind: "other_kind" }));
      await board.post("Human", request("rin-2", { to: "Rin", kind: "rin_request" }));
      await board.post("Human", request("rin-3", { to: "Rin", kind: "rin_request" }));
      const got = await Promise.all(waiting);
      expect(got.map((s) => s?.entry.id).sort()).toEqual(["rin-2", "rin-3"]);
      expect(new Set(got.map((s) => s?.claimed_by))).toEqual(new Set(["rin-a", "rin-b"]));
      expect((await board.get("rin-1")).entry.status).toBe("open");
    });

    it("claimNext returns nothing once aborted, and refuses an empty kind list", async () => {
      const { board } = testBoard(t.store);
      const stop = new AbortController();
      const waiting = board.claimNext("w", "Mio", ["mio_request"], { waitMs: 600_000, signal: stop.signal });
      stop.abort();
      expect(await waiting).toBeUndefined();
      await expect(board.claimNext("w", "Mio", [])).rejects.toThrow(
        "claimNext for Mio: give at least one kind to claim (the role's allowed_kinds)",
      );
    });

    it("finishAndClaim completes a worker's claim and claims its next entry; history records both", async () => {
      const { board, clock } = testBoard(t.store, Date.parse("2029-01-01T00:00:00Z"));
      const kinds = ["fac_request"];
      for (const id of ["fac-1", "fac-2", "fac-3"]) {
        await board.post("Human", request(id, { to: "Ren", kind: "fac_request" }));
        clock.advance(1);
      }
      const first = await board.claim("ren-a", "Ren", kinds);
      expect(first?.entry.id).toBe("fac-1");
      clock.advance(1000);
      const one = await board.finishAndClaim("Ren", "fac-1", "done", { worker: "ren-a", kinds });
      expect(one.finished).toMatchObject({
        version: 3,
        claimed_by: null,
        lease_expires_at: null,
        entry: { id: "fac-1", status: "done", updated_at: "2029-01-01T00:00:01.003Z" },
      });
      expect(one.next).toMatchObject({
        version: 2,
        claimed_by: "ren-a",
        lease_expires_at: "2029-01-01T00:00:06.003Z",
        entry: { id: "fac-2", status: "in_progress" },
      });
      expect(await board.get("fac-2")).toEqual(one.next);
      // With a note (and on to error): the note is kept, the next entry claimed all the same.
      const two = await board.finishAndClaim("Ren", "fac-2", "error", {
        worker: "ren-a",
        kinds,
        note: "failed: no network",
      });
      expect(two.finished.entry).toMatchObject({ status: "error", note: "failed: no network" });
      expect(two.next?.entry.id).toBe("fac-3");
      // Nothing left: finished, and no next entry.
      const three = await board.finishAndClaim("Ren", "fac-3", "done", { worker: "ren-a", kinds });
      expect(three).toMatchObject({ finished: { entry: { id: "fac-3", status: "done" } }, next: undefined });
      const h = await board.history("fac-1");
      expect(h.map((r) => [r.action, r.actor, r.from_status, r.to_status, r.changes])).toEqual([
        ["post", "Human", null, "open", expect.anything()],
        [
          "claim",
          "Ren",
          "open",
          "in_progress",
          { claimed_by: { from: null, to: "ren-a" }, status: { from: "open", to: "in_progress" } },
        ],
        ["status", "Ren", "in_progress", "done", { status: { from: "in_progress", to: "done" } }],
      ]);
      expect(h[2]!.at).toBe("2029-01-01T00:00:01.003Z");
      // In the project's history, each finish comes before the claim it made.
      const order = (await board.history())
        .filter((r) => r.entry_id.startsWith("fac-") && r.action !== "post")
        .map((r) => `${r.entry_id} ${r.action}`);
      expect(order).toEqual([
        "fac-1 claim",
        "fac-1 status",
        "fac-2 claim",
        "fac-2 status",
        "fac-3 claim",
        "fac-3 status",
      ]);
      expect((await board.history("fac-2")).map((r) => [r.action, r.version, r.changes])).toEqual([
        ["post", 1, expect.anything()],
        ["claim", 2, { claimed_by: { from: null, to: "ren-a" }, status: { from: "open", to: "in_progress" } }],
        ["status", 3, { status: { from: "in_progress", to: "error" }, note: { from: null, to: "failed: no network" } }],
      ]);
    });

    it("finishAndClaim takes over an expired claim when nothing is open", async () => {
      const { board, clock } = testBoard(t.store, Date.parse("2029-02-01T00:00:00Z"));
      const kinds = ["fac_takeover_request"];
      await board.post("Human", request("fact-1", { to: "Ren", kind: "fac_takeover_request" }));
      await board.post("Human", request("fact-2", { to: "Ren", kind: "fac_takeover_request" }));
      await board.claim("ren-a", "Ren", kinds);
      await board.claim("ren-b", "Ren", kinds);
      clock.advance(4_000);
      await board.heartbeat("ren-a", "fact-1");
      clock.advance(2_000);
      // ren-b's lease on fact-2 expired; ren-a finishes fact-1 and takes fact-2 over.
      const { next } = await board.finishAndClaim("Ren", "fact-1", "done", { worker: "ren-a", kinds });
      expect(next).toMatchObject({ claimed_by: "ren-a", entry: { id: "fact-2", status: "in_progress" } });
      expect((await board.history("fact-2")).map((h) => [h.action, h.changes])).toEqual([
        ["post", expect.anything()],
        ["claim", expect.anything()],
        ["takeover", { claimed_by: { from: "ren-b", to: "ren-a" } }],
      ]);
    });

    it("finishAndClaim refuses as transition does, and then claims nothing", async () => {
      const { board, clock } = testBoard(t.store, Date.parse("2029-03-01T00:00:00Z"));
      const kinds = ["facr_request"];
      await board.post("Human", request("facr-1", { to: "Ren", kind: "facr_request" }));
      await board.claim("ren-a", "Ren", kinds);
      await board.post("Human", request("facr-2", { to: "Ren", kind: "facr_request" }));
      const refused = async (p: Promise<unknown>, message: string) => {
        await expect(p).rejects.toThrow(message);
        expect(await board.get("facr-2")).toMatchObject({ version: 1, claimed_by: null, entry: { status: "open" } });
      };
      await refused(
        board.finishAndClaim("Ren", "facr-1", "done", { worker: "ren-b", kinds }),
        "entry facr-1: worker ren-b no longer holds its claim (taken over by ren-a)",
      );
      await refused(
        board.finishAndClaim("Sho", "facr-1", "done", { worker: "ren-a", role: "Ren", kinds }),
        "entry facr-1: Sho may not move it in_progress → done: only its writer (Human), its addressee (Ren) or a human (Human) may change it",
      );
      await refused(
        board.finishAndClaim("Ren", "facr-1", "open", { worker: "ren-a", kinds }),
        "entry facr-1: Ren cannot move it in_progress → open (allowed from in_progress: done, error, canceled)",
      );
      await refused(
        board.finishAndClaim("Ren", "facr-none", "done", { worker: "ren-a", kinds }),
        "entry facr-none does not exist in project vpm-mini",
      );
      // The lease expired and another worker took the entry over: the first one's finish is refused.
      clock.advance(6_000);
      await board.claim("ren-b", "Ren", ["nothing_open"]);
      const taken = await board.claim("ren-b", "Ren", kinds);
      expect(taken?.entry.id).toBe("facr-2");
      await expect(board.finishAndClaim("Ren", "facr-1", "done", { worker: "ren-b", kinds })).rejects.toThrow(
        "entry facr-1: worker ren-b no longer holds its claim (taken over by ren-a)",
      );
      expect((await board.history("facr-1")).map((h) => h.action)).toEqual(["post", "claim"]);
    });

    it("a worker's transition follows the lifecycle: in_progress → open is refused", async () => {
      const { board } = testBoard(t.store);
      await board.post("Human", request("back-1", { to: "Ren", kind: "back_request" }));
      await board.claim("ren-a", "Ren", ["back_request"]);
      await expect(board.transition("Ren", "back-1", "open", { worker: "ren-a" })).rejects.toThrow(
        "entry back-1: Ren cannot move it in_progress → open (allowed from in_progress: done, error, canceled)",
      );
      expect(await board.get("back-1")).toMatchObject({ claimed_by: "ren-a", entry: { status: "in_progress" } });
    });

    it("an in_progress entry set by hand (no lease) is never taken over", async () => {
      const { board, clock } = testBoard(t.store, Date.parse("2028-01-01T00:00:00Z"));
      await board.post("Human", request("manual-1", { to: "Hana", kind: "pm_snapshot_done" }));
      await board.transition("Hana", "manual-1", "in_progress");
      clock.advance(3_600_000);
      expect(await board.claim("h", "Hana", ["pm_snapshot_done"])).toBeUndefined();
    });
  });

  describe("import (put)", () => {
    it("keeps status and timestamps, skips identical entries and refuses different ones", async () => {
      const { board } = testBoard(t.store);
      const entry = EntrySchema.parse({
        ...request("imp-1"),
        from: "Human",
        project_id: PROJECT,
        status: "done",
        created_at: "2025-11-30T02:30:00+09:00",
        updated_at: "2025-11-30T03:00:00+09:00",
        payload: {},
        target_docs: [],
      });
      expect((await board.put("Human", entry)).outcome).toBe("created");
      expect((await board.put("Human", entry)).outcome).toBe("unchanged");
      await expect(board.put("Human", { ...entry, kind: "other" })).rejects.toMatchObject({ code: "entry_exists" });
      const replaced = await board.put("github-sync", { ...entry, note: "edited on GitHub" }, { replace: true });
      expect(replaced.outcome).toBe("replaced");
      expect((await board.history("imp-1")).at(-1)).toMatchObject({
        actor: "github-sync",
        action: "import",
        changes: { note: { from: null, to: "edited on GitHub" } },
      });
    });
  });

  describe("outline", () => {
    const T0 = Date.parse("2026-03-01T10:00:00Z");
    const HOUR = 3_600_000;
    let board: Blackboard;
    beforeAll(async () => {
      const clock = { now: T0 };
      board = new Blackboard(t.store, { projectId: "outline-test", humans: ["Human"], clock: () => clock.now });
      await board.post("Human", { ...request("req-a"), project_id: "outline-test" });
      clock.now = T0 + HOUR;
      await board.transition("Aya", "req-a", "in_progress");
      clock.now = T0 + 2 * HOUR;
      await board.transition("Aya", "req-a", "done");
      await board.post("Aya", {
        ...request("req-a-review", { to: "Sho", kind: "doc_update_review_request" }),
        project_id: "outline-test",
      });
      clock.now = T0 + 3 * HOUR;
      // Written elsewhere a day earlier, last changed there after T0 + 2.5 h, imported at T0 + 3 h.
      await board.put("sync", {
        ...request("imp-y"),
        from: "Human",
        project_id: "outline-test",
        status: "done",
        created_at: "2026-02-28T10:00:00Z",
        updated_at: "2026-03-01T12:30:00Z",
        payload: {},
        target_docs: [],
      });
    });

    const brief = (list: Awaited<ReturnType<Blackboard["outline"]>>) =>
      list.map((e) => [e.id, e.status, e.updated_ms - T0, e.basis]);

    it("gives id, writer, addressee, kind, status and times, oldest first, without the entry", async () => {
      const all = await board.outline();
      expect(all[1]).toEqual({
        id: "req-a",
        from: "Human",
        to: "Aya",
        kind: "doc_update_proposal_request",
        status: "done",
        created_ms: T0,
        updated_ms: T0 + 2 * HOUR,
        basis: "stored",
      });
      expect(brief(all)).toEqual([
        ["imp-y", "done", 2.5 * HOUR, "stored"],
        ["req-a", "done", 2 * HOUR, "stored"],
        ["req-a-review", "open", 2 * HOUR, "stored"],
      ]);
    });

    it("at a past time: later entries left out, statuses and last changes from the history, an entry imported later as first posted", async () => {
      expect(brief(await board.outline({ at: T0 + 1.5 * HOUR }))).toEqual([
        ["imp-y", "open", -24 * HOUR, "posted"],
        ["req-a", "in_progress", HOUR, "history"],
      ]);
      expect(brief(await board.outline({ at: T0 + 2 * HOUR }))).toEqual([
        ["imp-y", "open", -24 * HOUR, "posted"],
        ["req-a", "done", 2 * HOUR, "stored"],
        ["req-a-review", "open", 2 * HOUR, "stored"],
      ]);
      expect(await board.outline({ at: T0 - 48 * HOUR })).toEqual([]);
    });

    it("filters by writer and by stored last change", async () => {
      expect(brief(await board.outline({ from: ["Aya"] }))).toEqual([["req-a-review", "open", 2 * HOUR, "stored"]]);
      expect(await board.outline({ from: [] })).toEqual([]);
      expect(
        brief(await board.outline({ updatedSince: T0 + 2 * HOUR, updatedBefore: T0 + 2.5 * HOUR })).map((e) => e[0]),
      ).toEqual(["req-a", "req-a-review"]);
      expect(brief(await board.outline({ updatedSince: T0 + 2.5 * HOUR })).map((e) => e[0])).toEqual(["imp-y"]);
    });

    it("list by ids: none for an empty list, creation order for a long one", async () => {
      expect(await board.list({ ids: [] })).toEqual([]);
      expect((await board.list({ ids: ["req-a-review", "imp-y", "no-such"] })).map((s) => s.entry.id)).toEqual([
        "imp-y",
        "req-a-review",
      ]);
      const many = Array.from({ length: 1200 }, (_, i) => `missing-${i}`);
      expect((await board.list({ ids: [...many, "req-a", "imp-y"] })).map((s) => s.entry.id)).toEqual([
        "imp-y",
        "req-a",
      ]);
      expect((await board.list({ ids: [...many, "req-a", "imp-y"], limit: 1 })).map((s) => s.entry.id)).toEqual([
        "imp-y",
      ]);
    });

    it("filters by addressee and kinds, and by ids (none for an empty list; a long list in chunks)", async () => {
      const ids = (list: Awaited<ReturnType<Blackboard["outline"]>>) => list.map((e) => e.id);
      expect(ids(await board.outline({ addressed: [{ to: "Sho", kinds: ["doc_update_review_request"] }] }))).toEqual([
        "req-a-review",
      ]);
      expect(
        ids(
          await board.outline({
            addressed: [
              { to: "Sho", kinds: ["doc_update_review_request"] },
              { to: "Aya", kinds: ["other", "doc_update_proposal_request"] },
            ],
          }),
        ),
      ).toEqual(["imp-y", "req-a", "req-a-review"]);
      expect(await board.outline({ addressed: [{ to: "Aya", kinds: ["doc_update_review_request"] }] })).toEqual([]);
      expect(await board.outline({ addressed: [{ to: "Aya", kinds: [] }] })).toEqual([]);
      expect(ids(await board.outline({ ids: ["req-a", "no-such"] }))).toEqual(["req-a"]);
      expect(await board.outline({ ids: [] })).toEqual([]);
      const many = Array.from({ length: 1200 }, (_, i) => `missing-${i}`);
      expect(ids(await board.outline({ ids: [...many, "req-a", "imp-y"] }))).toEqual(["imp-y", "req-a"]);
      expect(ids(await board.outline({ ids: [...many, "req-a", "imp-y"], newestFirst: true, limit: 1 }))).toEqual([
        "req-a",
      ]);
      // As of a time: statuses from the history, as without the filter.
      expect(brief(await board.outline({ at: T0 + 1.5 * HOUR, ids: ["req-a", "req-a-review"] }))).toEqual([
        ["req-a", "in_progress", HOUR, "history"],
      ]);
    });

    it("newest first, a limit, and entries before a point in creation order (ties broken by id)", async () => {
      const ids = (list: Awaited<ReturnType<Blackboard["outline"]>>) => list.map((e) => e.id);
      expect(ids(await board.outline({ newestFirst: true }))).toEqual(["req-a-review", "req-a", "imp-y"]);
      expect(ids(await board.outline({ newestFirst: true, limit: 2 }))).toEqual(["req-a-review", "req-a"]);
      expect(ids(await board.outline({ limit: 1 }))).toEqual(["imp-y"]);
      expect(ids(await board.outline({ before: { created_ms: T0, id: "req-a" } }))).toEqual(["imp-y"]);
      expect(ids(await board.outline({ before: { created_ms: T0 + 2 * HOUR, id: "" }, newestFirst: true }))).toEqual([
        "req-a",
        "imp-y",
      ]);
      const clock = { now: T0 };
      const ties = new Blackboard(t.store, { projectId: "outline-ties", humans: ["Human"], clock: () => clock.now });
      for (const id of ["t-b", "t-a", "t-c"]) await ties.post("Human", { ...request(id), project_id: "outline-ties" });
      expect(ids(await ties.outline({ before: { created_ms: T0, id: "t-b" } }))).toEqual(["t-a"]);
      expect(ids(await ties.outline({ before: { created_ms: T0, id: "t-c" }, newestFirst: true }))).toEqual([
        "t-b",
        "t-a",
      ]);
      expect(await ties.outline({ before: { created_ms: T0, id: "" } })).toEqual([]);
    });

    it("counts what outline would give, in SQL", async () => {
      expect(await board.outlineCount()).toBe(3);
      expect(await board.outlineCount({ from: ["Human"] })).toBe(2);
      expect(await board.outlineCount({ from: [] })).toBe(0);
      expect(await board.outlineCount({ at: T0 + 1.5 * HOUR })).toBe(2);
      expect(
        await board.outlineCount({
          addressed: [{ to: "Aya", kinds: ["doc_update_proposal_request"] }],
          before: { created_ms: T0 + 2 * HOUR, id: "" },
        }),
      ).toBe(2);
      expect(await board.outlineCount({ addressed: [{ to: "Aya", kinds: [] }] })).toBe(0);
      expect(await board.outlineCount({ updatedSince: T0 + 2.5 * HOUR })).toBe(1);
    });
  });
});
