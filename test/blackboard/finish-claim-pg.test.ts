import { afterAll, beforeAll, describe, expect, it } from "vitest";
import pg from "pg";
import { openPostgresTestStore, PG_URL, postgresAvailable, type TestStore } from "../helpers/stores.js";
import { request, testBoard } from "../helpers/blackboard.js";

const kinds = ["doc_update_proposal_request"];

describe.skipIf(!(await postgresAvailable()))("finishAndClaim on PostgreSQL", () => {
  let t: TestStore;
  let blocker: pg.Client;
  beforeAll(async () => {
    t = await openPostgresTestStore();
    blocker = new pg.Client({ connectionString: PG_URL });
    await blocker.connect();
  });
  afterAll(async () => {
    await blocker.end();
    await t.cleanup();
  });

  it("a finish that waited for a lock claims an entry posted while it waited", async () => {
    const { board } = testBoard(t.store);
    await board.post("Human", request("snap-1"));
    expect((await board.claim("w1", "Aya", kinds))?.entry.id).toBe("snap-1");
    // Another transaction holds snap-1's claim state (migration 420): the finish has to wait for it.
    const schema = t.env.PMAGENT_DATABASE_SCHEMA!;
    await blocker.query("BEGIN");
    await blocker.query(`SELECT 1 FROM ${schema}.bb_entry_state WHERE id = 'snap-1' FOR UPDATE`);
    const pending = board.finishAndClaim("Aya", "snap-1", "done", { worker: "w1", kinds });
    // Waiting for this blocker, not any session of other tests running beside this one.
    const waiting = async () =>
      (
        await blocker.query(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE pg_backend_pid() = ANY (pg_blocking_pids(pid))",
        )
      ).rows[0].n as number;
    const waitedFrom = Date.now();
    while ((await waiting()) === 0) {
      if (Date.now() - waitedFrom > 10_000) throw new Error("the finish never waited for the lock");
      await new Promise((r) => setTimeout(r, 10));
    }
    // Posted (and committed) after the finishing statement began, before its finish could go on.
    await board.post("Human", request("snap-2"));
    await blocker.query("COMMIT");
    const { finished, next } = await pending;
    expect(finished.entry.status).toBe("done");
    expect(next?.entry.id).toBe("snap-2");
    expect(next?.claimed_by).toBe("w1");
    expect((await board.history("snap-2")).map((h) => h.action)).toEqual(["post", "claim"]);
  });
  it("eight workers finishing at once each claim a different entry; a refused finish among them claims nothing", async () => {
    const { board } = testBoard(t.store);
    for (let i = 0; i < 20; i++) await board.post("Human", request(`batch-${String(i).padStart(2, "0")}`));
    const workers = Array.from({ length: 8 }, (_, w) => `bw${w}`);
    const held = await Promise.all(workers.map((w) => board.claim(w, "Aya", kinds)));
    // In the same turn: the requests go to the server together (bb_finish_claim_batch).
    // Which entry each worker holds depends on which concurrent claim locked first.
    const lost = expect(
      board.finishAndClaim("Aya", held[0]!.entry.id, "done", { worker: "not-the-holder", kinds }),
    ).rejects.toThrow(`entry ${held[0]!.entry.id}: worker not-the-holder no longer holds its claim`);
    const results = await Promise.all(
      workers.map((w, i) => board.finishAndClaim("Aya", held[i]!.entry.id, "done", { worker: w, kinds })),
    );
    await lost;
    const nextIds = results.map((r) => r.next?.entry.id);
    expect(new Set(nextIds).size).toBe(8);
    expect(nextIds.every((id) => id !== undefined && !held.some((h) => h!.entry.id === id))).toBe(true);
    results.forEach((r, i) => {
      expect(r.finished.entry.status).toBe("done");
      expect(r.next?.claimed_by).toBe(workers[i]);
      expect(r.next?.entry.status).toBe("in_progress");
    });
    for (const [i, r] of results.entries()) {
      expect((await board.history(held[i]!.entry.id)).map((h) => [h.action, h.to_status])).toEqual([
        ["post", "open"],
        ["claim", "in_progress"],
        ["status", "done"],
      ]);
      const claimRecord = (await board.history(r.next!.entry.id)).at(-1)!;
      expect(claimRecord).toMatchObject({
        action: "claim",
        from_status: "open",
        to_status: "in_progress",
        changes: { claimed_by: { from: null, to: workers[i] } },
      });
    }
    expect((await board.list({ status: "open" })).length).toBe(4);
  });

  it("one batch of workers of two roles and two kind sets: each role's oldest open entries go to its workers in request order; a worker with none left claims nothing", async () => {
    const { board, clock } = testBoard(t.store);
    const K1 = "doc_update_proposal_request";
    const K2 = "review_request";
    const post = async (id: string, to: string, kind: string) => {
      clock.advance(1);
      await board.post("Human", request(id, { to, kind }));
    };
    const cho = ["aw0", "aw1", "aw2", "aw3"];
    const dan = ["bw0", "bw1", "bw2"];
    for (const w of cho) await post(`hold-${w}`, "Cho", K1);
    for (const w of dan) await post(`hold-${w}`, "Dan", K1);
    const kindsOf = (w: string) => (w === "aw3" ? [K1, K2] : [K1]);
    for (const w of cho) expect((await board.claim(w, "Cho", kindsOf(w)))?.entry.id).toBe(`hold-${w}`);
    for (const w of dan) expect((await board.claim(w, "Dan", [K1]))?.entry.id).toBe(`hold-${w}`);
    await post("n-k2", "Cho", K2);
    for (const id of ["n-a0", "n-a1", "n-a2"]) await post(id, "Cho", K1);
    for (const id of ["n-b0", "n-b1"]) await post(id, "Dan", K1);
    // In the same turn: one call of bb_finish_claim_batch for all seven.
    const results = await Promise.all([
      ...cho.map((w) => board.finishAndClaim("Cho", `hold-${w}`, "done", { worker: w, kinds: kindsOf(w) })),
      ...dan.map((w) => board.finishAndClaim("Dan", `hold-${w}`, "done", { worker: w, kinds: [K1], role: "Dan" })),
    ]);
    expect(results.map((r) => r.finished.entry.status)).toEqual(Array(7).fill("done"));
    // aw3 may take K2 too: the oldest open entry for it was n-k2 until the first three took the rest.
    expect(results.map((r) => r.next?.entry.id)).toEqual(["n-a0", "n-a1", "n-a2", "n-k2", "n-b0", "n-b1", undefined]);
    expect(results.map((r) => r.next?.claimed_by)).toEqual([...cho, "bw0", "bw1", undefined]);
    for (const r of results.slice(0, 6))
      expect((await board.history(r.next!.entry.id)).map((h) => h.action)).toEqual(["post", "claim"]);
    expect((await board.list({ status: "open" })).filter((e) => ["Cho", "Dan"].includes(e.entry.to))).toEqual([]);
  });
});
