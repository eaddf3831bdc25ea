import type { BoardEntryEvidence, RunEvidence } from "../../src/kai/index.js";

/** A blackboard entry as the collector hands it over (already cut at the cutoff). */
export function entry(
  id: string,
  from: string,
  to: string,
  kind: string,
  status: string,
  created_at: string,
  updated_at: string,
  more: Partial<BoardEntryEvidence> = {},
): BoardEntryEvidence {
  return {
    id,
    from,
    to,
    kind,
    status,
    created_at,
    updated_at,
    source_issue: 841,
    source_comment_id: null,
    source_run_id: null,
    summary: `${kind} ${id}`,
    refs: {},
    target_docs: [],
    ...more,
  };
}

export function run(
  run_id: string,
  role: string,
  entry_id: string,
  state: RunEvidence["state"],
  started_at: string,
  more: Partial<RunEvidence> = {},
): RunEvidence {
  return {
    run_id,
    role,
    entry_id,
    state,
    started_at,
    finished_at: null,
    waiting: null,
    artifacts: [],
    actions: [],
    events: 0,
    environment_proposals: [],
    ...more,
  };
}

/** cycle-1 complete (root req-1), cycle-2 (root req-2) at Sho, whose run waits for input. */
export function twoCycles(): { board: BoardEntryEvidence[]; runs: RunEvidence[] } {
  const board = [
    entry(
      "req-1",
      "Human",
      "Aya",
      "doc_update_proposal_request",
      "done",
      "2026-01-02T09:00:00Z",
      "2026-01-02T10:00:00Z",
      { source_comment_id: "1001" },
    ),
    entry(
      "req-1-review",
      "Aya",
      "Sho",
      "doc_update_review_request",
      "done",
      "2026-01-02T10:00:00Z",
      "2026-01-03T10:00:00Z",
    ),
    entry(
      "req-1-review-apply",
      "Sho",
      "Tsugu",
      "doc_update_apply_request",
      "done",
      "2026-01-03T10:00:00Z",
      "2026-01-04T10:00:00Z",
      {
        source_run_id: "19793359086",
        refs: { artifact_path: "reports/doc_update_apply/apply-1.json" },
      },
    ),
    entry(
      "req-1-review-apply-pm_snapshot",
      "Tsugu",
      "Gen",
      "pm_snapshot_request",
      "done",
      "2026-01-04T10:00:00Z",
      "2026-01-05T10:00:00Z",
    ),
    entry(
      "req-1-review-apply-pm_snapshot-done",
      "Gen",
      "Hana",
      "pm_snapshot_done",
      "done",
      "2026-01-05T10:00:00Z",
      "2026-01-05T12:00:00Z",
    ),
    // A root whose id prefixes another root's: its follow-ups must not be mixed up.
    entry(
      "req-2",
      "Human",
      "Aya",
      "doc_update_proposal_request",
      "done",
      "2026-01-08T09:00:00Z",
      "2026-01-08T11:00:00Z",
      { source_comment_id: "1010", summary: "Refresh Layer B section" },
    ),
    entry(
      "req-2-review",
      "Aya",
      "Sho",
      "doc_update_review_request",
      "in_progress",
      "2026-01-08T11:00:00Z",
      "2026-01-08T11:05:00Z",
      { source_comment_id: "1011", summary: "Review proposal p2" },
    ),
    // Not part of the lane: another kind from a human to a role that does not pick it.
    entry("note-1", "Human", "Sho", "free_note", "open", "2026-01-09T09:00:00Z", "2026-01-09T09:00:00Z"),
  ];
  const runs = [
    run("run-aya-2", "Aya", "req-2", "succeeded", "2026-01-08T10:00:00Z", {
      finished_at: "2026-01-08T11:00:00Z",
      events: 14,
      artifacts: [{ path: "reports/doc_update_proposals/notes.md" }, { path: "reports/doc_update_proposals/p2.json" }],
      environment_proposals: [{ id: "env-1", status: "pending", summary: "install pandoc", count: 2 }],
    }),
    run("run-sho-2", "Sho", "req-2-review", "waiting", "2026-01-08T11:05:00Z", {
      waiting: {
        checkpoint: "ck-1",
        expected_inputs: { approve: "boolean", comment: "string" },
        since: "2026-01-08T11:10:00Z",
      },
    }),
  ];
  return { board, runs };
}
