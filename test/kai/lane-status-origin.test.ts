import { describe, expect, it } from "vitest";
import { docUpdateLane, parseConfig } from "../../src/config/index.js";
import {
  buildLaneStatus,
  entryLinks,
  githubRepoOfRemote,
  parseSections,
  withUrls,
  type KaiEvidence,
} from "../../src/kai/index.js";
import { LaneStatusSchema } from "../../src/kai/reports/schema.js";
import { entry } from "./fixtures.js";

const lane = parseConfig(JSON.stringify({ project_id: "vpm-mini", lanes: [docUpdateLane()] }), "test").lanes[0]!;
const ctx = { project_id: "vpm-mini", lane, humans: ["Human"], as_of: new Date("2025-12-01T00:00:00Z") };

/** A cycle as the origin's workflows write it (blackboard issue #841): run ids, payload_ref and details, no pmagent runs. */
function originBoard() {
  return [
    entry(
      "vpm-mini-docupdate-issue571-1",
      "Human",
      "Aya",
      "doc_update_proposal_request",
      "done",
      "2025-11-29T17:30:00Z",
      "2025-11-29T18:00:00Z",
      {
        payload_ref: { kind: "path", value: "progress_summary.md" },
      },
    ),
    entry(
      "vpm-mini-docupdate-issue571-1-review",
      "Aya",
      "Sho",
      "doc_update_review_request",
      "done",
      "2025-11-29T18:00:00Z",
      "2025-11-29T19:00:00Z",
      {
        source_run_id: "19793359086",
        details: { proposal_path: "reports/doc_update_proposals/2025-11-30-vpm-mini.json" },
        refs: { source_board_id: "vpm-mini-docupdate-issue571-1", workflow_run_id: 19793359086 },
        payload_ref: { kind: "path", value: "reports/doc_update_proposals/2025-11-30-vpm-mini.json" },
      },
    ),
    entry(
      "vpm-mini-docupdate-issue571-1-review-apply",
      "Sho",
      "Tsugu",
      "doc_update_apply_request",
      "in_progress",
      "2025-11-29T19:00:00Z",
      "2025-11-29T19:05:00Z",
      {
        payload_ref: {
          type: "actions_artifact",
          workflow_run_id: 19800000001,
          artifact_name: "doc_update_review_v1_19800000001",
        },
        refs: { review_workflow_run_id: "19800000001", workflow: "doc_update_review" },
      },
    ),
  ];
}

describe("lane_status_v1 on entries in the origin's shapes", () => {
  it("fills each step's actions_run_id, workflow and artifact_path from the entries' run ids, details and payload_ref", () => {
    const ev: KaiEvidence = { git: null, state_doc: null, board: originBoard(), runs: null, github: null, notes: [] };
    const data = LaneStatusSchema.parse(buildLaneStatus(ctx, ev));
    // Aya's output is named on the entry she wrote (to Sho): its run and proposal, not her input's progress_summary.md.
    expect(data.steps.aya!.latest_entry).toMatchObject({
      entry_id: "vpm-mini-docupdate-issue571-1",
      actions_run_id: "19793359086",
      artifact_path: "reports/doc_update_proposals/2025-11-30-vpm-mini.json",
    });
    expect(data.steps.sho!.latest_entry).toMatchObject({
      actions_run_id: "19793359086",
      artifact_path: "doc_update_review_v1_19800000001",
      actions_workflow: "doc_update_review",
    });
    expect(data.steps.tsugu!.latest_entry).toMatchObject({
      actions_run_id: "19800000001",
      actions_workflow: "doc_update_review",
      artifact_path: "doc_update_review_v1_19800000001",
    });
  });

  it("the workflow's name comes from GitHub when it knows the run the entry names", () => {
    const github = {
      repo: "o/r",
      issues: [],
      pulls: [],
      workflow_runs: [
        {
          id: "19793359086",
          name: "Aya doc_update proposal",
          path: ".github/workflows/aya.yml",
          status: "completed",
          conclusion: "success",
          url: "https://github.com/o/r/actions/runs/19793359086",
          created_at: "2025-11-29T18:00:00Z",
          updated_at: "2025-11-29T18:10:00Z",
        },
      ],
    };
    const data = buildLaneStatus(ctx, {
      git: null,
      state_doc: null,
      board: originBoard(),
      runs: null,
      github,
      notes: [],
    });
    expect(data.steps.aya!.latest_entry!.actions_workflow).toBe("Aya doc_update proposal");
  });

  it("entryLinks reads pull requests and cycles wherever the writer put them, and nothing from an entry naming none", () => {
    const e = entry(
      "x",
      "Tsugu",
      "Gen",
      "pm_snapshot_request",
      "open",
      "2025-11-29T19:00:00Z",
      "2025-11-29T19:00:00Z",
      { refs: { pr_url: "https://github.com/o/r/pull/849", cycle: "cycle-1" } },
    );
    expect(entryLinks(e)).toEqual({
      run_id: null,
      workflow: null,
      artifact_path: null,
      pr_number: 849,
      cycle: "cycle-1",
    });
    expect(
      entryLinks(
        entry("y", "Human", "Aya", "k", "open", "2025-11-29T19:00:00Z", "2025-11-29T19:00:00Z", {
          details: { cycle: 3 },
          refs: { pr: "#12" },
        }),
      ),
    ).toMatchObject({ pr_number: 12, cycle: "cycle-3" });
    expect(entryLinks(entry("z", "Human", "Aya", "k", "open", "2025-11-29T19:00:00Z", "2025-11-29T19:00:00Z"))).toEqual(
      { run_id: null, workflow: null, artifact_path: null, pr_number: null, cycle: null },
    );
  });
});

describe("advice that changes with the evidence", () => {
  const doc = (updated_at: string) => ({
    path: "STATE/vpm-mini/current_state.md",
    exists: true,
    revision: "abc",
    updated_at,
    sections: parseSections("# S\n\n## Layer B doc_update\n\n- running\n\n### Gaps\n\n- PM snapshot lags\n"),
  });
  const gapTitle = (updated_at: string, as_of: string) =>
    buildLaneStatus(
      { ...ctx, as_of: new Date(as_of) },
      { git: null, state_doc: doc(updated_at), board: [], runs: null, github: null, notes: [] },
    ).next_suggested_actions.find((a) => a.id === "gap-1")!;

  it("a gap is dated by the document's last change, and asked to be confirmed once the list has not changed for two weeks", () => {
    expect(gapTitle("2026-03-01T00:00:00Z", "2026-03-05T00:00:00Z")).toMatchObject({
      title: "Close known gap: PM snapshot lags",
      reason:
        "listed under the Gap list of STATE/vpm-mini/current_state.md#layer-b-doc_update as of its last change 2026-03-01",
    });
    expect(gapTitle("2026-03-01T00:00:00Z", "2026-03-29T00:00:00Z").title).toBe(
      "Confirm or close known gap (listed unchanged for 28 days): PM snapshot lags",
    );
  });
});

describe("GitHub addresses of evidence", () => {
  it.each([
    ["git@github.com:acme/vpm-mini.git", "acme/vpm-mini"],
    ["https://github.com/acme/vpm-mini", "acme/vpm-mini"],
    ["https://x-access-token:secret@github.com/acme/vpm-mini.git", "acme/vpm-mini"],
    ["ssh://git@github.com/acme/vpm-mini.git", "acme/vpm-mini"],
    ["https://gitlab.com/acme/vpm-mini.git", null],
    ["/srv/git/vpm-mini.git", null],
  ])("remote %s → %s (credentials never kept)", (url, repo) => {
    expect(githubRepoOfRemote(url)).toBe(repo);
  });

  it("links what GitHub shows and leaves entries and pmagent runs alone", () => {
    const base = { web_url: "https://github.com/acme/vpm-mini", revision: "abc123" };
    const data = withUrls(
      {
        evidence: [
          { type: "pr", id: "849" },
          { type: "commit", id: "abc1234" },
          { type: "issue", id: "841" },
          { type: "workflow_run", id: "19793359086" },
          { type: "file", id: "docs/a b.md", path: "docs/a b.md" },
          { type: "entry", id: "req-1" },
          { type: "run", id: "run-1" },
          { type: "pr", id: "12", url: "https://example.invalid/pr/12" },
        ],
      },
      base,
    );
    expect(data.evidence.map((e) => (e as { url?: string }).url)).toEqual([
      "https://github.com/acme/vpm-mini/pull/849",
      "https://github.com/acme/vpm-mini/commit/abc1234",
      "https://github.com/acme/vpm-mini/issues/841",
      "https://github.com/acme/vpm-mini/actions/runs/19793359086",
      "https://github.com/acme/vpm-mini/blob/abc123/docs/a%20b.md",
      undefined,
      undefined,
      "https://example.invalid/pr/12",
    ]);
  });
});
