import { describe, expect, it } from "vitest";
import { Blackboard } from "../../../src/blackboard/index.js";
import { availableStoreKinds } from "../../helpers/stores.js";
import { crashTrial, lostOrDoubled } from "../harness.js";
import { prng } from "../../helpers/prng.js";
import { testProject } from "../helpers.js";

const kinds = await availableStoreKinds();
const TRIALS = Number(process.env.CRASH_TRIALS ?? 20);
const SEED = Number(process.env.CRASH_SEED ?? 20260115);

describe.each(kinds)("supervisor killed with SIGKILL at random points, then restarted, on $name", (kind) => {
  it(`loses and doubles no event across ${TRIALS} trials (seed ${SEED})`, { timeout: 600_000 }, async () => {
    const ts = await kind.open();
    const tp = testProject(ts);
    const board = new Blackboard(ts.store, { projectId: "demo", humans: ["Human"] });
    const random = prng(SEED);
    const outcomes = new Map<string, number>();
    try {
      for (let trial = 0; trial < TRIALS; trial++) {
        const entryId = `crash-${trial}`;
        await board.post("Human", { id: entryId, to: "Builder", kind: "build_request" });
        const steps = [];
        for (let i = 0; i < 30; i++) {
          steps.push({
            emit: i % 7 === 0 ? "PHASE_STARTED" : "INFO",
            payload: i % 7 === 0 ? { phase: `p${i}` } : { message: `event ${i} of trial ${trial}` },
          });
          if (i % 3 === 0) steps.push({ log: `log line ${i}` });
          steps.push({ sleep: 4 });
        }
        steps.push({ emit: "COMPLETED", payload: { status: "success", summary: `trial ${trial}` } });
        // One trial in ten kills before or while the run starts; the others once the outbox has 0–31 lines.
        const kill =
          random() < 0.1
            ? { afterMs: Math.floor(random() * 1500) }
            : { afterOutboxLines: Math.floor(random() * 32), jitterMs: Math.floor(random() * 30) };
        const result = await crashTrial({
          root: tp.root,
          projectId: "demo",
          store: ts.store,
          storeEnv: ts.env,
          restart: () => tp.supervisor(),
          role: "Builder",
          entryId,
          command: tp.sprite(`t${trial}`, { steps }),
          kill,
        });
        const problems = lostOrDoubled(result);
        expect(problems, `trial ${trial} (kill ${JSON.stringify(kill)}, seed ${SEED}): ${result.restart}`).toEqual([]);
        for (const run of result.runs) {
          outcomes.set(run.state, (outcomes.get(run.state) ?? 0) + 1);
          // A run that finished its work is mapped onto its entry even when the crash came in between.
          if (run.state === "succeeded") {
            expect((await board.get(entryId)).entry.status).toBe("done");
            expect((await board.get(`${entryId}-review`)).entry.status).toBe("open");
            expect(result.stored.get(run.id)!.length).toBe(31);
          }
        }
      }
      // The kill points spread over the run: some runs were re-attached and finished.
      expect(outcomes.get("succeeded") ?? 0).toBeGreaterThan(0);
    } finally {
      await ts.cleanup();
      tp.cleanup();
    }
  });
});
