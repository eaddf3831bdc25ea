import { beforeAll, describe, expect, it } from "vitest";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { Blackboard } from "../../src/blackboard/index.js";
import { answer, collectRuns, type KaiResponse, type LaneStatus, type WhatChanged } from "../../src/kai/index.js";
import { ActionStore, ProposalStore, RunStore, type RunRecord } from "../../src/lattice/index.js";
import { LocalForge } from "../../src/forge/index.js";
import { openProject, projectSupervisor } from "../../src/app/index.js";
import { availableStoreKinds } from "../helpers/stores.js";
import { ACTION_SPRITE, DIST, PMAGENT, PR_INPUTS, SPEC_EVENTS } from "../lattice/helpers.js";
import { useSupervisorFixture } from "../helpers/supervisor-fixture.js";

const kinds = await availableStoreKinds();
const PROPOSAL = "runtime_install (runtime=node, version=20) after bootstrap exited 127";

/** Wait until the clock has moved past `ms`, so that what follows is strictly later. */
async function after(ms: number): Promise<void> {
  while (Date.now() <= ms) await new Promise((r) => setTimeout(r, 2));
}

function payload<K extends "lane_status_v1" | "what_changed_v1">(
  res: KaiResponse,
  kind: K,
): K extends "lane_status_v1" ? LaneStatus : WhatChanged {
  if (res.status !== "ok" || res.payload.kind !== kind) throw new Error(JSON.stringify(res));
  return res.payload.data as K extends "lane_status_v1" ? LaneStatus : WhatChanged;
}

describe.each(kinds)("the runs collector with real sprites under the supervisor ($name)", (kind) => {
  const fx = useSupervisorFixture(kind, { git: true, scope: "all" });
  let built: RunRecord; // Builder of req-1: OPEN_PR through the local forge, succeeded
  let reviewed: RunRecord; // Reviewer of req-1-review: an environment proposal, then failed
  let waiting: RunRecord; // Builder of req-2: waiting for input
  let cut1: number; // after the first cycle's runs, before req-2
  let proposalId: string;
  const ask = async (type: "lane_status" | "what_changed", params: Record<string, unknown> = {}) =>
    answer(
      {
        version: "kai_request_v1",
        request_id: `t-${type}`,
        from: { actor_type: "human" },
        project_id: "demo",
        type,
        lane: { layer: "test", name: "build" },
        params,
      },
      {
        config: fx.tp.project.config,
        sources: await (await openProject({ project: fx.tp.project, store: fx.ts.store })).kaiSources(),
      },
    );

  beforeAll(async () => {
    const sup = projectSupervisor({
      store: fx.ts.store,
      project: fx.tp.project,
      env: { PATH: process.env.PATH, HOME: process.env.HOME },
      pmagentCommand: PMAGENT,
      pollMs: 20,
      consoleWrite: () => undefined,
    });
    await fx.board.post("Human", {
      id: "req-1",
      to: "Builder",
      kind: "build_request",
      payload: { summary: "fix the cache" },
    });
    const plan = join(fx.tp.root, "builder.plan.json");
    writeFileSync(
      plan,
      JSON.stringify({
        commit: { branch: "sprite/fix-cache", file: "fix.txt", text: "fixed\n" },
        action: "OPEN_PR",
        parameters: SPEC_EVENTS.openPr.payload.parameters,
        expected_inputs: PR_INPUTS,
      }),
    );
    built = await sup.startRun({
      role: "Builder",
      entryId: "req-1",
      command: [process.execPath, ACTION_SPRITE, DIST, plan],
    });
    reviewed = await sup.startRun({
      role: "Reviewer",
      entryId: "req-1-review",
      command: fx.tp.sprite("reviewer", {
        steps: [
          { emit: "ENVIRONMENT_PROPOSAL", payload: SPEC_EVENTS.proposal.payload },
          { emit: "ERROR", payload: { message: "node: command not found" } },
          { exit: 1 },
        ],
      }),
    });
    cut1 = Date.now();
    await after(cut1);
    await fx.board.post("Human", {
      id: "req-2",
      to: "Builder",
      kind: "build_request",
      payload: { summary: "add the index" },
    });
    waiting = await sup.startRun({
      role: "Builder",
      entryId: "req-2",
      command: fx.tp.sprite("waiter", {
        steps: [
          { emit: "PHASE_STARTED", payload: { phase: "plan" } },
          { waiting: { reason: "needs approval", expected_inputs: { approved: "boolean" } } },
        ],
      }),
    });
    proposalId = (await new ProposalStore({ store: fx.ts.store, projectId: "demo", humans: ["Human"] }).list())[0]!.id;
  }, 120_000);

  it("the runs came out as the scenario says", async () => {
    expect([built.state, reviewed.state, waiting.state]).toEqual(["succeeded", "failed", "waiting"]);
    expect(proposalId).toMatch(/^envp_/);
  });

  it("lane_status: the waiting step, its suggested resume, and the pending environment proposal", async () => {
    const runs = new RunStore(fx.ts.store, "demo");
    const w = await runs.get(waiting.id);
    const entry = (await new Blackboard(fx.ts.store, { projectId: "demo", humans: ["Human"] }).get("req-2")).entry;
    const res = await ask("lane_status");
    const data = payload(res, "lane_status_v1");
    expect(data.cycle).toEqual({
      latest_cycle_id: "cycle-2",
      root_entry_id: "req-2",
      status: "blocked",
      started_at: entry.created_at,
      completed_at: null,
      found_in: "blackboard",
      evidence: [{ type: "entry", id: "req-2", title: "add the index", at: entry.updated_at }],
    });
    expect(data.steps).toEqual({
      builder: {
        role: "Builder",
        status: "waiting",
        latest_entry: {
          entry_id: "req-2",
          kind: "build_request",
          entry_status: entry.status,
          blackboard_issue: null,
          blackboard_comment_id: null,
          actions_workflow: "test/build:Builder",
          actions_run_id: waiting.id,
          artifact_path: null,
          updated_at: entry.updated_at,
          summary: "add the index",
        },
        run: {
          run_id: waiting.id,
          state: "waiting",
          started_at: w.created_at,
          finished_at: null,
          waiting_for: ["approved"],
          events: w.event_count,
          artifacts: [],
          pull_requests: [],
        },
      },
      reviewer: { role: "Reviewer", status: "not_started", latest_entry: null, run: null },
    });
    expect(w.event_count).toBeGreaterThanOrEqual(2);
    expect(data.next_suggested_actions).toEqual([
      {
        id: `resume-${waiting.id}`,
        title: `Provide approved to resume Builder's run ${waiting.id}`,
        owner: "Human",
        priority: "high",
        reason: `run ${waiting.id} is waiting for input`,
        evidence: [
          { type: "entry", id: "req-2", title: "add the index", at: entry.updated_at },
          { type: "run", id: waiting.id, title: "Builder run (waiting)", at: w.created_at },
        ],
      },
      {
        id: `decide-env-${proposalId}`,
        title: `Accept or reject Reviewer's environment proposal ${proposalId}: ${PROPOSAL}`,
        owner: "Human",
        priority: "medium",
        reason: `proposal ${proposalId} is pending (seen 1 time)`,
        evidence: [
          { type: "environment_proposal", id: proposalId, title: PROPOSAL },
          { type: "run", id: reviewed.id, title: "Reviewer run (failed)", at: reviewed.finished_at },
        ],
      },
    ]);
    expect(res.notes).toContain("Evidence: 3 runs");
    expect(res.notes.join("\n")).not.toContain("runs were not read");
  });

  it("what_changed: the local forge's PR, the runs per role, the failed and waiting runs as risks and questions", async () => {
    const res = await ask("what_changed");
    const data = payload(res, "what_changed_v1");
    expect(data.by_category.prs).toEqual([
      {
        number: 1,
        title: "Fix cache invalidation",
        status: "open",
        impact: "high",
        url: "pmagent-forge://demo/pulls/1",
        paths: [],
      },
    ]);
    expect(data.by_category.workflows).toEqual([
      {
        name: "test/build:Builder",
        source: "pmagent",
        runs: 2,
        failed_runs: 0,
        latest_status: "waiting",
        latest_run_id: waiting.id,
        latest_at: waiting.created_at,
      },
      {
        name: "test/build:Reviewer",
        source: "pmagent",
        runs: 1,
        failed_runs: 1,
        latest_status: "failed",
        latest_run_id: reviewed.id,
        latest_at: reviewed.created_at,
      },
    ]);
    expect(data.highlights.map((h) => h.title)).toEqual([
      "test/build cycle-2 is blocked at Builder",
      "test/build cycle-1 is blocked at Reviewer",
      // A failure changes more for the lane than its open PR.
      "test/build:Reviewer: 1 of 1 run failed",
      "PR #1 open: Fix cache invalidation",
    ]);
    expect(data.highlights[3]!.evidence).toEqual([
      { type: "pr", id: "1", title: "Fix cache invalidation", url: "pmagent-forge://demo/pulls/1" },
      { type: "run", id: built.id, title: "Builder run (succeeded)", at: built.finished_at },
    ]);
    const since = (await new RunStore(fx.ts.store, "demo").events(waiting.id, { type: "WAITING" }))[0]!.received_at;
    expect(data.risks.map((r) => [r.id, r.severity, r.summary])).toEqual([
      ["cycle-blocked-cycle-2", "high", "cycle-2 of test/build is blocked"],
      ["runs-waiting", "medium", `1 run waiting for input: Builder ${waiting.id}`],
      ["environment-proposals-pending", "medium", `1 environment proposal pending a decision: Reviewer: ${PROPOSAL}`],
      // The failed review step posted its doc_update_error to the human, who has not read it yet.
      ["entries-waiting-on-human", "medium", "1 entry waiting on a human: req-1-review-error (doc_update_error)"],
      ["runs-failed", "high", `1 run of the lane failed this window: Reviewer ${reviewed.id}`],
    ]);
    expect(data.open_questions).toEqual([
      `Who provides approved for Builder's run ${waiting.id} (waiting since ${since})?`,
      `Should Reviewer's environment proposal ${proposalId} (${PROPOSAL}) be accepted?`,
      "When will PR #1 (Fix cache invalidation) be reviewed and merged?",
    ]);
  });

  it("as_of before req-2: its run is absent, the first cycle is blocked at the failed Reviewer, and its open PR is to review", async () => {
    const at = new Date(cut1).toISOString();
    const res = await ask("lane_status", { as_of: at });
    const data = payload(res, "lane_status_v1");
    expect(data.cycle).toMatchObject({ latest_cycle_id: "cycle-1", root_entry_id: "req-1", status: "blocked" });
    expect(
      Object.values(data.steps).map((s) => [s.role, s.status, s.run?.run_id, s.run?.state, s.run?.pull_requests]),
    ).toEqual([
      ["Builder", "completed", built.id, "succeeded", [1]],
      ["Reviewer", "error", reviewed.id, "failed", []],
    ]);
    expect(data.next_suggested_actions.map((a) => [a.id, a.priority, a.reason])).toEqual([
      ["fix-req-1-review", "high", `Reviewer's run ${reviewed.id} failed`],
      [`decide-env-${proposalId}`, "medium", `proposal ${proposalId} is pending (seen 1 time)`],
      ["review-pr-1", "medium", "PR #1 opened by the lane is still open"],
    ]);
    expect(data.next_suggested_actions[2]!.evidence).toEqual([
      { type: "pr", id: "1", title: "Fix cache invalidation", url: "pmagent-forge://demo/pulls/1" },
    ]);
    expect(res.notes).toContain("Evidence: 2 runs");
    const changes = payload(await ask("what_changed", { as_of: at }), "what_changed_v1");
    expect(changes.by_category.workflows.map((w) => [w.name, w.runs, w.latest_run_id])).toEqual([
      ["test/build:Builder", 1, built.id],
      ["test/build:Reviewer", 1, reviewed.id],
    ]);
    expect(changes.risks.map((r) => r.id)).toEqual([
      "cycle-blocked-cycle-1",
      "environment-proposals-pending",
      "entries-waiting-on-human",
      "runs-failed",
    ]);
  });

  it("a window that ends before the first run holds no runs; one that starts after the first cycle keeps only its entries' runs", async () => {
    const readers = {
      runs: new RunStore(fx.ts.store, "demo"),
      actions: new ActionStore(fx.ts.store),
      proposals: new ProposalStore({ store: fx.ts.store, projectId: "demo", humans: ["Human"] }),
      forge: new LocalForge({
        store: fx.ts.store,
        projectId: "demo",
        root: fx.tp.root,
        bareRepo: ".pmagent/forge.git",
      }),
    };
    const lane = fx.tp.project.config.lanes[0]!;
    const before = new Date(Date.parse(built.created_at) - 1);
    expect(
      await collectRuns(readers, lane, { since: new Date(before.getTime() - 86_400_000), until: before }, ["req-1"]),
    ).toEqual([]);
    const now = new Date();
    const late = await collectRuns(readers, lane, { since: new Date(cut1), until: now }, ["req-1-review"]);
    expect(late.map((r) => [r.run_id, r.state])).toEqual([
      [reviewed.id, "failed"],
      [waiting.id, "waiting"],
    ]);
    const pr = (await collectRuns(readers, lane, { since: new Date(0), until: now }, [])).find(
      (r) => r.run_id === built.id,
    )!;
    expect(pr.actions).toEqual([
      {
        id: `${built.id}:${pr.actions[0]!.id.split(":")[1]}`,
        type: "OPEN_PR",
        status: "succeeded",
        pr_number: 1,
        url: "pmagent-forge://demo/pulls/1",
        title: "Fix cache invalidation",
        pr_state: "open",
      },
    ]);
  });
});

describe.each(kinds)("a run's state at the cutoff, from its recorded times ($name)", (kind) => {
  const T0 = Date.parse("2026-01-15T10:00:00Z");
  const HOUR = 3_600_000;
  const fx = useSupervisorFixture(kind, { scope: "all" });
  let run: RunRecord;
  let now = T0;

  beforeAll(async () => {
    const sup = fx.tp.supervisor(undefined, { clock: () => now });
    const command = fx.tp.sprite("waiter", {
      steps: [
        { emit: "PHASE_STARTED", payload: { phase: "plan" } },
        { waiting: { reason: "needs approval", expected_inputs: { approved: "boolean" } } },
      ],
      on_resume: [{ emit: "COMPLETED", payload: { status: "success" } }, { exit: 0 }],
    });
    run = await sup.startRun({ role: "Builder", command });
    now = T0 + HOUR;
    run = await (await sup.resumeRun(run.id, { inputs: { approved: true } })).finished;
  }, 120_000);

  const collect = (untilMs: number) =>
    collectRuns(
      {
        runs: new RunStore(fx.ts.store, "demo"),
        actions: new ActionStore(fx.ts.store),
        proposals: new ProposalStore({ store: fx.ts.store, projectId: "demo", humans: ["Human"] }),
        forge: null,
      },
      fx.tp.project.config.lanes[0]!,
      { since: new Date(untilMs - 7 * 24 * HOUR), until: new Date(untilMs) },
      [],
    );

  it("waiting between its WAITING event and its resume, succeeded once finished, absent before it was created", async () => {
    expect(run.state).toBe("succeeded");
    const total = (await new RunStore(fx.ts.store, "demo").get(run.id)).event_count;
    const waitingThen = await collect(T0 + HOUR / 2);
    expect(waitingThen).toEqual([
      {
        run_id: run.id,
        role: "Builder",
        entry_id: "",
        state: "waiting",
        started_at: new Date(T0).toISOString(),
        finished_at: null,
        waiting: {
          checkpoint: expect.stringMatching(/^chk_/),
          expected_inputs: { approved: "boolean" },
          since: new Date(T0).toISOString(),
        },
        artifacts: [],
        actions: [],
        events: 2,
        usage: [],
        cycle: null,
        environment_proposals: [],
      },
    ]);
    const later = await collect(T0 + 2 * HOUR);
    expect(later.map((r) => [r.state, r.finished_at, r.waiting, r.events])).toEqual([
      ["succeeded", new Date(T0 + HOUR).toISOString(), null, total],
    ]);
    expect(total).toBeGreaterThan(2);
    expect(await collect(T0 - 1)).toEqual([]);
  });
});
