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
    // Another transaction holds snap-1's row: the finish has to wait for it.
    const schema = t.env.PMAGENT_DATABASE_SCHEMA!;
    await blocker.query("BEGIN");
    await blocker.query(`SELECT 1 FROM ${schema}.bb_entries WHERE id = 'snap-1' FOR UPDATE`);
    const pending = board.finishAndClaim("Aya", "snap-1", "done", { worker: "w1", kinds });
    // Waiting for this blocker, not any session of other tests running beside this one.
    const waiting = async () => (await blocker.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE pg_backend_pid() = ANY (pg_blocking_pids(pid))")).rows[0].n as number;
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
});
