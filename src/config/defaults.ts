import type { ConfigInput } from "./schema.js";

/** The model key Aya and Sho may fetch (FETCH_CREDENTIAL) when `model` is configured; unused otherwise. */
const MODEL_KEY = "OPENAI_API_KEY";

/** The kind of the entry Hana posts to Human when a cycle is finished. */
export const CYCLE_DONE_KIND = "doc_update_cycle_done";

/** The kinds Hana picks (roles contract §3.6.2) and the one she posts to Kai and back to Human. */
export const HANA_KINDS = {
  task: "hana_task",
  snapshotDone: "pm_snapshot_done",
  analysisResult: "hana_analysis_result",
} as const;
export const KAI_ANALYSIS_KIND = "hana_to_kai_analysis_request";
/** The kind of the entry Hana posts to Human with Kai's analysis result (an index, not a rewrite). */
export const ANALYSIS_DONE_KIND = "hana_analysis_done";

/** Each role run by its built-in sprite (`pmagent lane-sprite NAME`), so a fresh project's worker runs the lane. */
const sprite = (name: string) => ({ command: ["pmagent", "lane-sprite", name], timeout_s: 300 });

/**
 * The doc_update lane of DESIGN.md §2: Human → Aya → Sho → Tsugu → Gen → Hana → Human. The one
 * definition `pmagent init`, `pmagent demo` and examples/doc-update-lane/ use.
 */
export function docUpdateLane(): ConfigInput["lanes"][number] {
  return {
    layer: "layer_b",
    name: "doc_update",
    allowed_paths: ["STATE/", "docs/", "reports/"],
    state_file: "STATE/current_state.md",
    // Tsugu applies the reviewed updates: the cycle's pull request opens with his commit.
    open_pull_request: "Tsugu",
    roles: [
      {
        name: "Aya",
        runner: sprite("aya"),
        allowed_kinds: ["doc_update_proposal_request"],
        credentials: [MODEL_KEY],
        next: { to: "Sho", kind: "doc_update_review_request", id_suffix: "-review" },
      },
      {
        name: "Sho",
        runner: sprite("sho"),
        allowed_kinds: ["doc_update_review_request"],
        credentials: [MODEL_KEY],
        next: { to: "Tsugu", kind: "doc_update_apply_request", id_suffix: "-apply" },
      },
      {
        name: "Tsugu",
        runner: sprite("tsugu"),
        allowed_kinds: ["doc_update_apply_request"],
        next: { to: "Gen", kind: "pm_snapshot_request", id_suffix: "-pm_snapshot" },
      },
      {
        name: "Gen",
        runner: sprite("gen"),
        allowed_kinds: ["pm_snapshot_request"],
        next: { to: "Hana", kind: "pm_snapshot_done", id_suffix: "-done" },
      },
      {
        name: "Hana",
        runner: sprite("hana"),
        allowed_kinds: [HANA_KINDS.task, HANA_KINDS.snapshotDone, HANA_KINDS.analysisResult],
        // Hana routes by the entry's kind and `payload.target` only (roles contract §3.6.4).
        routes: [
          {
            on: HANA_KINDS.task,
            target: "Aya",
            to: "Aya",
            kind: "doc_update_proposal_request",
            id_suffix: "-proposal",
          },
          { on: HANA_KINDS.task, target: "Kai", to: "Kai", kind: KAI_ANALYSIS_KIND, id_suffix: "-analysis" },
          { on: HANA_KINDS.snapshotDone, to: "Human", kind: CYCLE_DONE_KIND, id_suffix: "-cycle_done" },
          { on: HANA_KINDS.analysisResult, to: "Human", kind: ANALYSIS_DONE_KIND, id_suffix: "-to_human" },
        ],
      },
    ],
  };
}

/** The kinds of the code lane: a change asked for, its review, a fix the review asked for, and the cycle's end. */
export const CODE_KINDS = {
  request: "code_request",
  review: "code_review_request",
  fix: "code_fix_request",
  done: "code_cycle_done",
} as const;

/**
 * The code lane: Human → Developer → Reviewer, who approves (the cycle's pull request is merged and
 * Human told) or sends the work back with `changes_requested` (Developer fixes on the same branch,
 * then Reviewer again). Developer runs Codex, Reviewer Claude Code: each needs its model key in the
 * secrets file (see the README); any agent or command can take either role.
 */
export function codeLane(): ConfigInput["lanes"][number] {
  return {
    layer: "code",
    name: "code",
    open_pull_request: "first_change",
    merge_pull_request: "Reviewer",
    roles: [
      {
        name: "Developer",
        allowed_kinds: [CODE_KINDS.request, CODE_KINDS.fix],
        runner: { agent: "codex", timeout_s: 1800 },
        credentials: ["OPENAI_API_KEY"],
        next: { to: "Reviewer", kind: CODE_KINDS.review, id_suffix: "-review" },
      },
      {
        name: "Reviewer",
        allowed_kinds: [CODE_KINDS.review],
        runner: { agent: "claude", timeout_s: 900 },
        credentials: ["ANTHROPIC_API_KEY"],
        next: { to: "Human", kind: CODE_KINDS.done, id_suffix: "-done" },
        on_outcome: { changes_requested: { to: "Developer", kind: CODE_KINDS.fix, id_suffix: "-fix" } },
      },
    ],
  };
}

/** The lanes `pmagent init --lane` can start a project with. */
export const LANE_TEMPLATES = { doc_update: docUpdateLane, code: codeLane } as const;
export type LaneTemplate = keyof typeof LANE_TEMPLATES;

export function defaultConfig(projectId: string, lane: LaneTemplate = "doc_update"): ConfigInput {
  return {
    $schema: "./node_modules/pmagent/schemas/config.schema.json",
    project_id: projectId,
    humans: ["Human"],
    lanes: [LANE_TEMPLATES[lane]()],
    storage: { driver: "sqlite", path: ".pmagent/pmagent.db" },
    forge: { bare_repo: ".pmagent/forge.git" },
    // Sprites run in bubblewrap where it is installed (apt-get install bubblewrap); "required" refuses runs without it.
    sandbox: "auto",
  };
}
