/**
 * Chaos: `pmagent run` (a supervisor process) killed with SIGKILL at random points while its
 * sprite asks for non-blocking actions right before COMPLETED (a notification to a local webhook,
 * a comment to the local GitHub), on both stores; then a new supervisor reconciles. Afterwards
 * every action is finished or `unknown` (none `running`, none lost), no comment or notification
 * is delivered more often than its idempotency key lets the receiver drop, no delivered action
 * is recorded failed, and every event is stored exactly once.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ActionStore, RunStore, type Supervisor } from "../../src/lattice/index.js";
import { projectSupervisor } from "../../src/app/index.js";
import { availableStoreKinds } from "../helpers/stores.js";
import { crashTrial, lostOrDoubled } from "../lattice/harness.js";
import { prng } from "../helpers/prng.js";
import { PMAGENT, testProject } from "../lattice/helpers.js";
import { GH_TOKEN, GH_TOKEN_ENV, REPO, TRIALS, actionProblems, startTargets, type Targets } from "./targets.js";

const kinds = await availableStoreKinds();
const SEED = Number(process.env.PMAGENT_CHAOS_SEED ?? 20261125);

describe.each(kinds)("chaos: supervisor killed with actions in flight, on $name", (kind) => {
  let t: Targets;
  const saved = process.env[GH_TOKEN_ENV];
  beforeAll(async () => {
    t = await startTargets();
    // The `pmagent run` children inherit the supervisor's GitHub token.
    process.env[GH_TOKEN_ENV] = GH_TOKEN;
  });
  afterAll(async () => {
    if (saved === undefined) delete process.env[GH_TOKEN_ENV];
    else process.env[GH_TOKEN_ENV] = saved;
    await t.close();
  });

  it(
    `finishes a notification cut off after its run succeeded, across ${TRIALS} targeted trials`,
    { timeout: 60_000 + TRIALS * 20_000 },
    async () => {
      const ts = await kind.open();
      const tp = testProject(ts, {
        github: { repo: REPO, api_url: t.gh.url, token_env: GH_TOKEN_ENV },
        notify: { webhook_url: t.url },
      });
      const runStore = new RunStore(ts.store, "demo");
      let sup: Supervisor | undefined;
      const restart = () => {
        t.hold = false; // the receiver answers again for the restarted supervisor
        return (sup = projectSupervisor({
          store: ts.store,
          project: tp.project,
          pmagentCommand: PMAGENT,
          pollMs: 20,
          consoleWrite: () => undefined,
        }));
      };
      const problems: string[] = [];
      try {
        for (let trial = 0; trial < TRIALS; trial++) {
          const issue = t.gh.addIssue(REPO, { title: `targeted ${trial}` }).number;
          const steps = [
            {
              emit: "ACTION_REQUEST",
              payload: { action: "NOTIFY_USER", parameters: { message: `targeted ${trial}` }, blocking: false },
            },
            { emit: "COMPLETED", payload: { status: "success", summary: `targeted ${trial}` } },
          ];
          const succeeded = (await runStore.list({ state: "succeeded" })).length;
          // Killed once the webhook holds the notification and the run is already recorded succeeded.
          const when = async () => {
            await t.nextDelivery();
            while ((await runStore.list({ state: "succeeded" })).length === succeeded)
              await new Promise((r) => setTimeout(r, 5));
          };
          t.hold = true;
          const result = await crashTrial({
            root: tp.root,
            projectId: "demo",
            store: ts.store,
            storeEnv: ts.env,
            restart,
            role: "Builder",
            command: tp.sprite(`targeted-${trial}`, { steps }),
            kill: { when },
          });
          for (const run of result.runs) await sup!.whenIdle(run.id);
          const found = lostOrDoubled(result);
          for (const run of result.runs)
            found.push(...actionProblems(await new ActionStore(ts.store).list({ runId: run.id }), t, issue));
          problems.push(...found.map((f) => `targeted trial ${trial}: ${f}`));
        }
        expect(problems, `${problems.length} problems in ${TRIALS} trials`).toEqual([]);
      } finally {
        t.hold = false;
        await ts.cleanup();
        tp.cleanup();
      }
    },
  );

  it(
    `leaves no action running, lost or doubled across ${TRIALS} trials (seed ${SEED})`,
    { timeout: 60_000 + TRIALS * 20_000 },
    async () => {
      const ts = await kind.open();
      const tp = testProject(ts, {
        github: { repo: REPO, api_url: t.gh.url, token_env: GH_TOKEN_ENV },
        notify: { webhook_url: t.url },
      });
      const random = prng(SEED + (kind.name === "postgres" ? 1 : 0));
      let sup: Supervisor | undefined;
      const restart = () =>
        (sup = projectSupervisor({
          store: ts.store,
          project: tp.project,
          pmagentCommand: PMAGENT,
          pollMs: 20,
          consoleWrite: () => undefined,
        }));
      let reattached = 0;
      // Every trial runs; the problems of all of them are reported together, each with its kill point.
      const problems: string[] = [];
      try {
        for (let trial = 0; trial < TRIALS; trial++) {
          const issue = t.gh.addIssue(REPO, { title: `trial ${trial}` }).number;
          const steps = [
            { emit: "PHASE_STARTED", payload: { phase: "work" } },
            { emit: "INFO", payload: { message: `trial ${trial}` } },
            { sleep: 5 },
            // The finding: non-blocking actions asked for right before COMPLETED.
            {
              emit: "ACTION_REQUEST",
              payload: { action: "NOTIFY_USER", parameters: { message: `trial ${trial} done` }, blocking: false },
            },
            {
              emit: "ACTION_REQUEST",
              payload: {
                action: "POST_COMMENT",
                parameters: { body: `trial ${trial}`, issue_number: issue },
                blocking: false,
              },
            },
            { emit: "COMPLETED", payload: { status: "success", summary: `trial ${trial}` } },
          ];
          const kill =
            random() < 0.1
              ? { afterMs: Math.floor(random() * 1500) }
              : { afterOutboxLines: Math.floor(random() * 6), jitterMs: Math.floor(random() * 60) };
          const result = await crashTrial({
            root: tp.root,
            projectId: "demo",
            store: ts.store,
            storeEnv: ts.env,
            restart,
            role: "Builder",
            command: tp.sprite(`t${trial}`, { steps }),
            kill,
          });
          for (const run of result.runs) await sup!.whenIdle(run.id);
          const why = `trial ${trial} (kill ${JSON.stringify(kill)}, seed ${SEED}): ${result.restart}`;
          const found = lostOrDoubled(result);
          for (const run of result.runs) {
            const actions = await new ActionStore(ts.store).list({ runId: run.id });
            // Every ACTION_REQUEST stored became an action: none was dropped by the crash.
            const requested = result.stored.get(run.id)!.filter((e) => e.event_type === "ACTION_REQUEST").length;
            if (actions.length !== requested) found.push(`${requested} actions requested, ${actions.length} recorded`);
            found.push(...actionProblems(actions, t, issue));
            reattached += actions.filter((a) => a.attempts > 1).length;
          }
          problems.push(...found.map((f) => `${why}: ${f}`));
        }
        expect(problems, `${problems.length} problems in ${TRIALS} trials`).toEqual([]);
        // Across many trials some kills land mid-action (with the default few, it may not happen).
        if (TRIALS >= 20) expect(reattached).toBeGreaterThan(0);
      } finally {
        await ts.cleanup();
        tp.cleanup();
      }
    },
  );
});
