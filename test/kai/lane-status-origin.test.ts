import { describe, expect, it } from "vitest";
import { docUpdateLane, parseConfig } from "../../src/config/index.js";
import { buildLaneStatus, entryLinks, LaneStatusSchema, type KaiEvidence } from "../../src/kai/index.js";
import { entry } from "./fixtures.js";

const lane = parseConfig(JSON.stringify({ project_id: "vpm-mini", lanes: [docUpdateLane()] }), "test").lanes[0]!;
const ctx = { project_id: "vpm-mini", lane, humans: ["Human"], as_of: new Date("2025-12-01T00:00:00Z") };

/** A cycle as the origin's workflows write it (blackboard issue #841): run ids, payload_ref and details, no pmagent runs. */
function originBoard() {
  return [
    entry("vpm-mini-docupdate-issue571-1", "Human", "Aya", "doc_update_proposal_request", "done", "2025-11-29T17:30:00Z", "2025-11-29T18:00:00Z", {
      payload_ref: { kind: "path", value: "progress_summary.md" },
    }),
    entry("vpm-mini-docupdate-issue571-1-review", "Aya", "Sho", "doc_update_review_request", "done", "2025-11-29T18:00:00Z", "2025-11-29T19:00:00Z", {
      source_run_id: "19793359086",
      details: { proposal_path: "reports/doc_update_proposals/2025-11-30-vpm-mini.json" },
      refs: { source_board_id: "vpm-mini-docupdate-issue571-1", workflow_run_id: 19793359086 },
      payload_ref: { kind: "path", value: "reports/doc_update_proposals/2025-11-30-vpm-mini.json" },
    }),
    entry("vpm-mini-docupdate-issue571-1-review-apply", "Sho", "Tsugu", "doc_update_apply_request", "in_progress", "2025-11-29T19:00:00Z", "2025-11-29T19:05:00Z", {
      payload_ref: { type: "actions_artifact", workflow_run_id: 19800000001, artifact_name: "doc_update_review_v1_19800000001" },
      refs: { review_workflow_run_id: "19800000001", workflow: "doc_update_review" },
    }),
  ];
}

describe("lane_status_v1 on entries in the origin's shapes", () => {
  it("fills each step's actions_run_id, workflow and artifact_path from the entries' run ids, details and payload_ref", () => {
    const ev: KaiEvidence = { git: null, state_doc: null, board: originBoard(), runs: null, github: null, notes: [] };
    const data = LaneStatusSchema.parse(buildLaneStatus(ctx, ev));
    // Aya's output is named on the entry she wrote (to Sho): its run and proposal, not her input's progress_summary.md.
    expect(data.steps.aya!.latest_entry).toMatchObject({ entry_id: "vpm-mini-docupdate-issue571-1", actions_run_id: "19793359086", artifact_path: "reports/doc_update_proposals/2025-11-30-vpm-mini.json" });
    expect(data.steps.sho!.latest_entry).toMatchObject({ actions_run_id: "19793359086", artifact_path: "doc_update_review_v1_19800000001", actions_workflow: "doc_update_review" });
    expect(data.steps.tsugu!.latest_entry).toMatchObject({ actions_run_id: "19800000001", actions_workflow: "doc_update_review", artifact_path: "doc_update_review_v1_19800000001" });
  });

  it("the workflow's name comes from GitHub when it knows the run the entry names", () => {
    const github = { repo: "o/r", issues: [], pulls: [], workflow_runs: [{ id: "19793359086", name: "Aya doc_update proposal", path: ".github/workflows/aya.yml", status: "completed", conclusion: "success", url: "https://github.com/o/r/actions/runs/19793359086", created_at: "2025-11-29T18:00:00Z", updated_at: "2025-11-29T18:10:00Z" }] };
    const data = buildLaneStatus(ctx, { git: null, state_doc: null, board: originBoard(), runs: null, github, notes: [] });
    expect(data.steps.aya!.latest_entry!.actions_workflow).toBe("Aya doc_update proposal");
  });

  it("entryLinks reads pull requests and cycles wherever the writer put them, and nothing from an entry naming none", () => {
    const e = entry("x", "Tsugu", "Gen", "pm_snapshot_request", "open", "2025-11-29T19:00:00Z", "2025-11-29T19:00:00Z", { refs: { pr_url: "https://github.com/o/r/pull/849", cycle: "cycle-1" } });
    expect(entryLinks(e)).toEqual({ run_id: null, workflow: null, artifact_path: null, pr_number: 849, cycle: "cycle-1" });
    expect(entryLinks(entry("y", "Human", "Aya", "k", "open", "2025-11-29T19:00:00Z", "2025-11-29T19:00:00Z", { details: { cycle: 3 }, refs: { pr: "#12" } }))).toMatchObject({ pr_number: 12, cycle: "cycle-3" });
    expect(entryLinks(entry("z", "Human", "Aya", "k", "open", "2025-11-29T19:00:00Z", "2025-11-29T19:00:00Z"))).toEqual({ run_id: null, workflow: null, artifact_path: null, pr_number: null, cycle: null });
  });
});
