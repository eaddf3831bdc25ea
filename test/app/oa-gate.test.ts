import { beforeEach, describe, expect, it } from "vitest";
import { cpSync } from "node:fs";
import { join } from "node:path";
import { Worker, type RunRecord } from "../../src/lattice/index.js";
import { projectSupervisor } from "../../src/app/index.js";
import { REPO_ROOT, runCli } from "../helpers/proc.js";
import { openSqliteTestStore } from "../helpers/stores.js";
import { PMAGENT } from "../lattice/helpers.js";
import { useSupervisorFixture } from "../helpers/supervisor-fixture.js";

/** The worker of a project with OA surfaces asks SafeOPSDecision (through projectSupervisor) before each run. */
describe("OA gate in the supervisor", () => {
  const fx = useSupervisorFixture(openSqliteTestStore);
  beforeEach(async () => {
    fx.tp.project.config.lanes[0]!.roles[0]!.runner = {
      command: fx.tp.sprite("runner", { steps: [{ emit: "COMPLETED", payload: { status: "success" } }] }),
      env: {},
      timeout_s: 120,
    };
    await fx.board.post("Human", {
      id: "job-1",
      to: "Builder",
      kind: "build_request",
      payload: { summary: "build the thing" },
    });
  });

  async function runOnce(): Promise<RunRecord[]> {
    const runs: RunRecord[] = [];
    const supervisor = projectSupervisor({
      store: fx.ts.store,
      project: fx.tp.project,
      pmagentCommand: PMAGENT,
      pollMs: 20,
      env: {},
    });
    await new Worker({ supervisor, roles: ["Builder"], once: true, onRun: (r) => runs.push(r) }).run(
      new AbortController().signal,
    );
    return runs;
  }

  it("a BLOCKED kernel denies the run: the entry stays open and the reason is recorded", async () => {
    cpSync(join(REPO_ROOT, "test/fixtures/oa/blocked-missing-surface/share"), join(fx.tp.root, "share"), {
      recursive: true,
    });
    expect(await runOnce()).toEqual([]);
    expect((await fx.board.get("job-1")).entry.status).toBe("open");
    const decision = await projectSupervisor({ store: fx.ts.store, project: fx.tp.project }).runs.lastGateDecision(
      "job-1",
    );
    expect(decision?.decision).toBe("DENY");
    expect(decision?.reasoning).toMatch(/BLOCKED/);
  });

  it("the origin's kernel whose bootstrap's stale health disagrees on reality_green is NORMAL, as the origin's guard says: the run starts", async () => {
    cpSync(join(REPO_ROOT, "test/fixtures/oa/origin-reality-conflict/share"), join(fx.tp.root, "share"), {
      recursive: true,
    });
    const runs = await runOnce();
    expect(runs.map((r) => [r.entry_id, r.state])).toEqual([["job-1", "succeeded"]]);
    expect(["ALLOW", "CONDITIONAL"]).toContain(runs[0]!.gate?.decision);
  });

  it("a kernel whose bootstrap health disagrees with the reality summary's checks is DEGRADED: feature work denied, with how to lift it", async () => {
    cpSync(join(REPO_ROOT, "test/fixtures/oa/degraded-health-mismatch/share"), join(fx.tp.root, "share"), {
      recursive: true,
    });
    expect(await runOnce()).toEqual([]);
    expect((await fx.board.get("job-1")).entry.status).toBe("open");
    const decision = await projectSupervisor({ store: fx.ts.store, project: fx.tp.project }).runs.lastGateDecision(
      "job-1",
    );
    expect(decision?.decision).toBe("DENY");
    expect(decision?.reasoning).toMatch(
      /^Kernel is DEGRADED; feature_work is forbidden in DEGRADED .* To lift: run `pmagent oa guard` and `pmagent boot oa` to see why/,
    );
    // The entry says why no run started, and how to lift it.
    const show = await runCli(["bb", "show", "job-1"], { cwd: fx.tp.root, env: fx.ts.env });
    expect(show.code).toBe(0);
    expect(show.stdout).toMatch(
      /\ngate: {8}DENY at \S+ \(entry version 1\): Kernel is DEGRADED; feature_work is forbidden in DEGRADED .* To lift: /,
    );
  });

  it("a project without OA surfaces is not gated: the run starts and no decision is recorded", async () => {
    const runs = await runOnce();
    expect(runs.map((r) => [r.entry_id, r.state, r.gate])).toEqual([["job-1", "succeeded", null]]);
    expect(
      await projectSupervisor({ store: fx.ts.store, project: fx.tp.project }).runs.lastGateDecision("job-1"),
    ).toBeUndefined();
  });

  it("a NORMAL kernel lets the run start, with OA's decision in the run's record", async () => {
    cpSync(join(REPO_ROOT, "test/fixtures/oa/normal/share"), join(fx.tp.root, "share"), { recursive: true });
    const runs = await runOnce();
    expect(runs).toHaveLength(1);
    expect(runs[0]!.state).toBe("succeeded");
    expect(["ALLOW", "CONDITIONAL"]).toContain(runs[0]!.gate?.decision);
    expect(runs[0]!.gate?.reasoning).not.toBe("");
  });
});
