/**
 * The claimer loop of the concurrency tests (in claimer.ts processes and on in-process
 * connections): claim entries for Aya and complete them until none is left unfinished. With
 * `finishAndClaim`, each completion claims the worker's next entry in the same call.
 */
import type { Blackboard } from "../../src/blackboard/index.js";
import type { Store } from "../../src/store/index.js";

const KINDS = ["doc_update_proposal_request"];

export async function claimLoop(
  board: Blackboard,
  store: Store,
  worker: string,
  finishAndClaim: boolean,
): Promise<string[]> {
  const done: string[] = [];
  let s = await board.claim(worker, "Aya", KINDS);
  for (;;) {
    if (s) {
      const id = s.entry.id;
      try {
        if (finishAndClaim) s = (await board.finishAndClaim("Aya", id, "done", { worker, kinds: KINDS })).next;
        else {
          await board.transition("Aya", id, "done", { worker });
          s = await board.claim(worker, "Aya", KINDS);
        }
        done.push(id);
      } catch (err) {
        // Under heavy load a lease can expire before completion: the entry was taken over, and
        // this worker must let it go (that is what the refusal says).
        if ((err as { code?: string }).code !== "claim_lost") throw err;
        s = await board.claim(worker, "Aya", KINDS);
      }
      continue;
    }
    const left = await store.get<{ n: number }>("SELECT COUNT(*) AS n FROM bb_entries WHERE status <> 'done'");
    if (Number(left?.n) === 0) return done;
    await new Promise((r) => setTimeout(r, 50));
    s = await board.claim(worker, "Aya", KINDS);
  }
}
