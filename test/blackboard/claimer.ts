/**
 * A claimer process for the concurrency tests: claims entries for Aya and completes them until none
 * is left unfinished. With HOLD=1 it claims up to MAX entries, prints them and then hangs (to be
 * killed). With FINISH_AND_CLAIM=1 each completion claims the next entry in the same call. Prints
 * one JSON line: {worker, done: [ids]} (or {worker, held: [ids]}).
 */
import { Blackboard } from "../../src/blackboard/index.js";
import { PostgresStore, SqliteStore, type Store } from "../../src/store/index.js";
import { claimLoop } from "./claim-loop.js";

const env = process.env;
const worker = env.WORKER ?? `w${process.pid}`;
const leaseMs = Number(env.LEASE_MS ?? 2000);
const store: Store = env.PG_URL
  ? await PostgresStore.connect(env.PG_URL, { schema: env.PG_SCHEMA, max: 1 })
  : new SqliteStore(env.SQLITE_FILE!);
const board = new Blackboard(store, { projectId: "vpm-mini", humans: ["Human"], leaseMs });
const kinds = ["doc_update_proposal_request"];

if (env.HOLD === "1") {
  const held: string[] = [];
  for (let i = 0; i < Number(env.MAX ?? 5); i++) {
    const s = await board.claim(worker, "Aya", kinds);
    if (s) held.push(s.entry.id);
  }
  console.log(JSON.stringify({ worker, held }));
  setInterval(() => undefined, 1000);
} else {
  const done = await claimLoop(board, store, worker, env.FINISH_AND_CLAIM === "1");
  console.log(JSON.stringify({ worker, done }));
  await store.close();
}
