import { describe, expect, it } from "vitest";
import { docUpdateLane, parseConfig } from "../../src/config/index.js";
import { buildLaneStatus, laneCycles, type KaiEvidence, type StateDocEvidence } from "../../src/kai/index.js";
import { LaneStatusSchema } from "../../src/kai/reports/schema.js";
import { entry, run, twoCycles } from "./fixtures.js";

const lane = parseConfig(JSON.stringify({ project_id: "vpm-mini", lanes: [docUpdateLane()] }), "test").lanes[0]!;
const ctx = { project_id: "vpm-mini", lane, humans: ["Human"], as_of: new Date("2026-01-10T00:00:00Z") };

const stateDoc: StateDocEvidence = {
  path: "STATE/current_state.md",
  exists: true,
  revision: "abc",
  updated_at: "2026-01-04T00:00:00.000Z",
  sections: [
    { level: 1, title: "State", anchor: "state", line: 1, body: "", parent: null },
    {
      level: 2,
      title: "Layer B / doc_update v1",
      anchor: "layer-b--doc_update-v1",
      line: 3,
      body: "Cycle-1 applied (PR #849).",
      parent: 0,
    },
    {
      level: 3,
      title: "Gaps",
      anchor: "gaps",
      line: 6,
      body: "- PM snapshot lags Layer B\n- no truncation guard",
      parent: 1,
    },
  ],
};

function evidence(more: Partial<KaiEvidence> = {}): KaiEvidence {
  const { board, runs } = twoCycles();
  return { git: null, state_doc: stateDoc, board, runs, github: null, notes: [], ...more };
}

describe("lane_status_v1", () => {
  it("reports the latest cycle, each role's step with its entry and run, the state view and next actions", () => {
    const data = LaneStatusSchema.parse(buildLaneStatus(ctx, evidence()));
    expect(data.cycle).toEqual({
      latest_cycle_id: "cycle-2",
      root_entry_id: "req-2",
      status: "blocked",
      started_at: "2026-01-08T09:00:00Z",
      completed_at: null,
      found_in: "blackboard",
      evidence: [{ type: "entry", id: "req-2", title: "Refresh Layer B section", at: "2026-01-08T11:00:00Z" }],
    });
    expect(Object.keys(data.steps)).toEqual(["aya", "sho", "tsugu", "gen", "hana"]);
    expect(data.steps.sho!.status).toBe("waiting");
    expect(Object.values(data.steps).map((s) => [s.role, s.status])).toEqual([
      ["Aya", "completed"],
      ["Sho", "waiting"],
      ["Tsugu", "not_started"],
      ["Gen", "not_started"],
      ["Hana", "not_started"],
    ]);
    expect(data.steps.aya).toEqual({
      role: "Aya",
      status: "completed",
      latest_entry: {
        entry_id: "req-2",
        kind: "doc_update_proposal_request",
        entry_status: "done",
        blackboard_issue: 841,
        blackboard_comment_id: "1010",
        // No Actions run named: the supervisor run that carried the entry stands in.
        actions_workflow: "layer_b/doc_update:Aya",
        actions_run_id: "run-aya-2",
        artifact_path: "reports/doc_update_proposals/p2.json",
        updated_at: "2026-01-08T11:00:00Z",
        summary: "Refresh Layer B section",
      },
      run: {
        run_id: "run-aya-2",
        state: "succeeded",
        started_at: "2026-01-08T10:00:00Z",
        finished_at: "2026-01-08T11:00:00Z",
        waiting_for: [],
        events: 14,
        artifacts: ["reports/doc_update_proposals/notes.md", "reports/doc_update_proposals/p2.json"],
        pull_requests: [],
      },
    });
    expect(data.steps.sho!.run!.waiting_for).toEqual(["approve", "comment"]);
    expect(data.steps.tsugu!.latest_entry).toBeNull();
    expect(data.state_view).toEqual({
      state_file: "STATE/current_state.md",
      section_anchor: "#layer-b--doc_update-v1",
      digest: "Cycle-1 applied (PR #849).",
      known_gaps: ["PM snapshot lags Layer B", "no truncation guard"],
      updated_at: "2026-01-04T00:00:00.000Z",
    });
    expect(data.next_suggested_actions.map((a) => [a.id, a.priority, a.owner])).toEqual([
      ["resume-run-sho-2", "high", "Human"],
      ["decide-env-env-1", "medium", "Human"],
      ["update-state-doc", "medium", "Human"],
      ["gap-1", "low", "Human"],
      ["gap-2", "low", "Human"],
    ]);
    expect(data.next_suggested_actions[0]!.title).toBe("Provide approve, comment to resume Sho's run run-sho-2");
    expect(data.next_suggested_actions[2]!.reason).toBe(
      "STATE/current_state.md last changed at 2026-01-04T00:00:00.000Z, before cycle-1 completed at 2026-01-05T12:00:00Z",
    );
  });

  it("a completed latest cycle: completed_at, workflow name from GitHub, and a suggestion to start the next cycle", () => {
    const { board } = twoCycles();
    const cycle1 = board.filter((e) => e.id.startsWith("req-1"));
    const data = buildLaneStatus(
      ctx,
      evidence({
        board: cycle1,
        runs: [],
        state_doc: { ...stateDoc, updated_at: "2026-01-06T00:00:00.000Z", sections: stateDoc.sections.slice(0, 2) },
        github: {
          repo: "o/r",
          issues: [],
          pulls: [],
          workflow_runs: [
            {
              id: "19793359086",
              name: "doc_update_apply",
              path: ".github/workflows/apply.yml",
              status: "completed",
              conclusion: "success",
              url: "u",
              created_at: "2026-01-04T09:00:00Z",
              updated_at: "2026-01-04T10:00:00Z",
            },
          ],
        },
      }),
    );
    expect(data.cycle).toEqual({
      latest_cycle_id: "cycle-1",
      root_entry_id: "req-1",
      status: "completed",
      started_at: "2026-01-02T09:00:00Z",
      completed_at: "2026-01-05T12:00:00Z",
      found_in: "blackboard",
      evidence: [
        { type: "entry", id: "req-1", title: "doc_update_proposal_request req-1", at: "2026-01-02T10:00:00Z" },
      ],
    });
    expect(Object.values(data.steps).every((s) => s.status === "completed")).toBe(true);
    expect(data.steps.tsugu!.latest_entry).toMatchObject({
      actions_workflow: "doc_update_apply",
      actions_run_id: "19793359086",
      artifact_path: "reports/doc_update_apply/apply-1.json",
    });
    expect(data.next_suggested_actions).toEqual([
      {
        id: "start-cycle",
        title: "Start the next cycle: post a doc_update_proposal_request entry to Aya",
        owner: "Human",
        priority: "low",
        reason: "cycle-1 completed at 2026-01-05T12:00:00Z",
        evidence: [
          { type: "entry", id: "req-1", title: "doc_update_proposal_request req-1", at: "2026-01-02T10:00:00Z" },
        ],
      },
    ]);
  });

  it("a failed step: error status, a blocked cycle and a high-priority action naming the run", () => {
    const board = [
      entry(
        "req-9",
        "Human",
        "Aya",
        "doc_update_proposal_request",
        "done",
        "2026-01-08T09:00:00Z",
        "2026-01-08T10:00:00Z",
      ),
      entry(
        "req-9-review",
        "Aya",
        "Sho",
        "doc_update_review_request",
        "in_progress",
        "2026-01-08T10:00:00Z",
        "2026-01-08T10:01:00Z",
      ),
    ];
    const runs = [
      run("r-1", "Sho", "req-9-review", "failed", "2026-01-08T10:01:00Z", { finished_at: "2026-01-08T10:02:00Z" }),
    ];
    const data = buildLaneStatus(ctx, evidence({ board, runs, state_doc: { ...stateDoc, sections: [] } }));
    expect(data.cycle.status).toBe("blocked");
    expect(data.steps.sho!.status).toBe("error");
    expect(data.next_suggested_actions[0]).toMatchObject({
      id: "fix-req-9-review",
      priority: "high",
      title: "Investigate the failed Sho step (entry req-9-review)",
      reason: "Sho's run r-1 failed",
    });
  });

  it("an open entry nobody runs yet asks for a worker of that role; a stalled cycle asks to unblock", () => {
    const open = buildLaneStatus(
      ctx,
      evidence({
        board: [
          entry(
            "req-5",
            "Human",
            "Aya",
            "doc_update_proposal_request",
            "open",
            "2026-01-09T00:00:00Z",
            "2026-01-09T00:00:00Z",
          ),
        ],
        runs: [],
      }),
    );
    expect(open.cycle.status).toBe("in_progress");
    expect(open.steps.aya!.status).toBe("pending");
    expect(open.next_suggested_actions[0]).toMatchObject({
      id: "pick-req-5",
      owner: "Aya",
      priority: "medium",
      title: "Start a worker for Aya to pick entry req-5 (pmagent worker --role Aya)",
    });

    const stalled = buildLaneStatus(
      ctx,
      evidence({
        board: [
          entry(
            "req-6",
            "Human",
            "Aya",
            "doc_update_proposal_request",
            "done",
            "2026-01-09T00:00:00Z",
            "2026-01-09T01:00:00Z",
          ),
          entry(
            "req-6-review",
            "Aya",
            "Sho",
            "doc_update_review_request",
            "canceled",
            "2026-01-09T01:00:00Z",
            "2026-01-09T02:00:00Z",
          ),
        ],
        runs: [],
      }),
    );
    expect(stalled.cycle.status).toBe("blocked");
    expect(stalled.steps.sho!.status).toBe("skipped");
    expect(stalled.next_suggested_actions[0]).toMatchObject({
      id: "unblock-cycle-1",
      priority: "high",
      title: "cycle-1 stopped at Sho: post its follow-up entry or cancel the cycle",
    });
  });

  it("no cycle and no STATE document", () => {
    const data = buildLaneStatus(
      ctx,
      evidence({
        board: [],
        runs: [],
        state_doc: {
          path: "STATE/current_state.md",
          exists: false,
          revision: "abcdef0123456789",
          updated_at: null,
          sections: [],
        },
      }),
    );
    expect(data.cycle).toEqual({
      latest_cycle_id: null,
      root_entry_id: null,
      status: null,
      started_at: null,
      completed_at: null,
      found_in: null,
      evidence: [],
    });
    expect(data.state_view.digest).toBe("STATE/current_state.md does not exist at abcdef012345");
    expect(data.next_suggested_actions.map((a) => a.title)).toEqual([
      "Start a first cycle: post a doc_update_proposal_request entry to Aya",
    ]);
  });

  it("assigns follow-ups to the longest root id they extend", () => {
    const board = [
      entry(
        "req",
        "Human",
        "Aya",
        "doc_update_proposal_request",
        "done",
        "2026-01-01T00:00:00Z",
        "2026-01-01T00:00:00Z",
      ),
      entry(
        "req-x",
        "Human",
        "Aya",
        "doc_update_proposal_request",
        "open",
        "2026-01-02T00:00:00Z",
        "2026-01-02T00:00:00Z",
      ),
      entry(
        "req-review",
        "Aya",
        "Sho",
        "doc_update_review_request",
        "open",
        "2026-01-01T01:00:00Z",
        "2026-01-01T01:00:00Z",
      ),
      entry(
        "req-x-review",
        "Aya",
        "Sho",
        "doc_update_review_request",
        "open",
        "2026-01-02T01:00:00Z",
        "2026-01-02T01:00:00Z",
      ),
    ];
    expect(laneCycles(board, lane, ["Human"], []).map((c) => [c.id, c.entries.map((e) => e.id)])).toEqual([
      ["cycle-1", ["req", "req-review"]],
      ["cycle-2", ["req-x", "req-x-review"]],
    ]);
  });
});
