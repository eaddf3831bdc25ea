/**
 * Chaos: `pmagent worker` killed with SIGKILL at random points while its sprite works on an entry
 * and has asked for non-blocking actions (a notification to a local webhook, a comment to the
 * local GitHub), on both stores; then another worker takes the entry over. The killed worker's
 * sprite is dead before the other worker starts; its events are stored exactly once; its actions
 * end finished or `unknown`, each delivered no more often than its idempotency key dedupes; the
 * entry is finished by one run.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Blackboard } from "../../src/blackboard/index.js";
import { ActionStore, RunStore, Worker, readOutbox, type RunRecord } from "../../src/lattice/index.js";
import { projectSupervisor } from "../../src/app/index.js";
import { processAlive } from "../../src/lattice/sandbox/processes.js";
import { availableStoreKinds } from "../helpers/stores.js";
import {
  expireLease,
  lostOrDoubled,
  setRunnerOnDisk,
  startWorker,
  waitForDeath,
  waitForFile,
} from "../lattice/harness.js";
import { prng } from "../helpers/prng.js";
import { PMAGENT, testProject } from "../lattice/helpers.js";
import { GH_TOKEN, GH_TOKEN_ENV, REPO, TRIALS, actionProblems, startTargets, type Targets } from "./targets.js";

const kinds = await availableStoreKinds();
const SEED = Number(process.env.PMAGENT_CHAOS_SEED ?? 20261125);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.each(kinds)("chaos: worker killed with its sprite mid-entry, on $name", (kind) => {
  let t: Targets;
  const saved = process.env[GH_TOKEN_ENV];
  beforeAll(async () => {
    t = await startTargets();
    process.env[GH_TOKEN_ENV] = GH_TOKEN;
  });
  afterAll(async () => {
    if (saved === undefined) delete process.env[GH_TOKEN_ENV];
    else process.env[GH_TOKEN_ENV] = saved;
    await t.close();
  });

  it(
    `never runs two sprites for one entry across ${TRIALS} trials (seed ${SEED})`,
    { timeout: 60_000 + TRIALS * 25_000 },
    async () => {
      const ts = await kind.open();
      const tp = testProject(ts, {
        github: { repo: REPO, api_url: t.gh.url, token_env: GH_TOKEN_ENV },
        notify: { webhook_url: t.url },
      });
      const board = new Blackboard(ts.store, { projectId: "demo", humans: ["Human"] });
      const runStore = new RunStore(ts.store, "demo");
      const random = prng(SEED + (kind.name === "postgres" ? 1 : 0));
      // Every trial runs; the problems of all of them are reported together.
      const problems: string[] = [];
      try {
        for (let trial = 0; trial < TRIALS; trial++) {
          const entryId = `chaos-${trial}`;
          const issue = t.gh.addIssue(REPO, { title: `trial ${trial}` }).number;
          const pidFile = join(tp.root, `sprite-${trial}.pid`);
          const steps: unknown[] = [
            { emit: "PHASE_STARTED", payload: { phase: "work" } },
            { sh: `echo $PPID > ${pidFile}.tmp && mv ${pidFile}.tmp ${pidFile}` },
            {
              emit: "ACTION_REQUEST",
              payload: { action: "NOTIFY_USER", parameters: { message: `trial ${trial}` }, blocking: false },
            },
            {
              emit: "ACTION_REQUEST",
              payload: {
                action: "POST_COMMENT",
                parameters: { body: `trial ${trial}`, issue_number: issue },
                blocking: false,
              },
            },
          ];
          // Long enough that only the kill ends it before the takeover (a sprite that outlived its worker shows).
          for (let i = 0; i < 20; i++) steps.push({ emit: "INFO", payload: { message: `tick ${i}` } }, { sleep: 10 });
          steps.push({ sleep: 8000 });
          steps.push({ emit: "COMPLETED", payload: { status: "success", summary: `trial ${trial}` } });
          // Unsandboxed: the pid file in the project root and the host pid it holds (the sandboxed kill is in test/lattice/supervisor/worker-kill.test.ts).
          setRunnerOnDisk(tp, tp.sprite(`long-${trial}`, { steps }), "off");
          await board.post("Human", { id: entryId, to: "Builder", kind: "build_request" });

          const w = startWorker(tp.root, ts.env, ["--role", "Builder", "--worker-id", `w-a-${trial}`, "--once"]);
          let pid: number;
          try {
            await waitForFile(pidFile);
            pid = Number(readFileSync(pidFile, "utf8"));
            // The kill lands anywhere from the sprite's start to past its end.
            await Promise.race([sleep(Math.floor(random() * 500)), w.exited]);
            w.child.kill("SIGKILL");
            await w.exited;
          } finally {
            w.child.kill("SIGKILL");
          }
          const why = `trial ${trial} (seed ${SEED})`;
          const found: string[] = [];
          // The sprite dies with its worker, before anyone takes the entry over.
          await waitForDeath(pid, 5_000).catch(() => {
            found.push(
              `sprite ${pid} still ran 5 s after its worker was killed, when another worker took the entry over`,
            );
          });

          await expireLease(ts, entryId);
          tp.project.config.lanes[0]!.roles[0]!.runner = {
            command: tp.sprite("quick", { steps: [{ emit: "COMPLETED", payload: { status: "success" } }] }),
            env: {},
            timeout_s: 60,
          };
          const sup = projectSupervisor({
            store: ts.store,
            project: tp.project,
            pmagentCommand: PMAGENT,
            pollMs: 20,
            consoleWrite: () => undefined,
          });
          const taken: RunRecord[] = [];
          await new Worker({
            supervisor: sup,
            roles: ["Builder"],
            id: `w-b-${trial}`,
            once: true,
            onRun: (r) => taken.push(r),
          }).run(new AbortController().signal);
          if (processAlive(pid)) {
            found.push(`sprite ${pid} of the killed worker still runs after the takeover finished the entry`);
            process.kill(pid, "SIGKILL");
          }

          const runs = await runStore.list({ entryId });
          const old = runs.find((r) => r.worker === `w-a-${trial}`)!;
          for (const r of runs) await sup.whenIdle(r.id);
          const outbox = readOutbox(join(old.workspace, ".lattice", "outbox.jsonl"));
          const stored = await runStore.events(old.id);
          const settledOld = await runStore.get(old.id);
          found.push(
            ...lostOrDoubled({
              runs: [settledOld],
              outbox: new Map([
                [old.id, outbox.items.filter((i) => i.kind === "event").map((i) => (i as { id: string }).id)],
              ]),
              stored: new Map([[old.id, stored]]),
              restart: "",
            }),
          );
          found.push(...actionProblems(await new ActionStore(ts.store).list({ runId: old.id }), t, issue));
          // The entry was finished once: by the killed worker's sprite when it got to COMPLETED, else by the takeover.
          const status = (await board.get(entryId)).entry.status;
          if (status !== "done")
            found.push(
              `entry ${entryId} is ${status}, not done (old run ${settledOld.state}: ${settledOld.reason ?? ""})`,
            );
          const expected = settledOld.state === "succeeded" ? [] : ["succeeded"];
          if (taken.map((r) => r.state).join() !== expected.join())
            found.push(
              `the takeover ran ${JSON.stringify(taken.map((r) => r.state))}, expected ${JSON.stringify(expected)}`,
            );
          problems.push(...found.map((f) => `${why}: ${f}`));
        }
        expect(problems, `${problems.length} problems in ${TRIALS} trials`).toEqual([]);
      } finally {
        await ts.cleanup();
        tp.cleanup();
      }
    },
  );
});
