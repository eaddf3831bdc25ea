import type { ConfigInput } from "./schema.js";

/** The model key Aya and Sho may fetch (FETCH_CREDENTIAL) when `model` is configured; unused otherwise. */
const MODEL_KEY = "OPENAI_API_KEY";

/** The kind of the entry Hana posts to Human when a cycle is finished. */
export const CYCLE_DONE_KIND = "doc_update_cycle_done";

/** The kinds Hana picks (roles contract §3.6.2) and the one she posts to Kai and back to Human. */
export const HANA_KINDS = { task: "hana_task", snapshotDone: "pm_snapshot_done", analysisResult: "hana_analysis_result" } as const;
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
    allowed_paths: ["STATE/", "docs/"],
    state_file: "STATE/current_state.md",
    // Tsugu applies the reviewed updates: the cycle's pull request opens with his commit.
    open_pull_request: "Tsugu",
    roles: [
      { name: "Aya", runner: sprite("aya"), allowed_kinds: ["doc_update_proposal_request"], credentials: [MODEL_KEY], next: { to: "Sho", kind: "doc_update_review_request", id_suffix: "-review" } },
      { name: "Sho", runner: sprite("sho"), allowed_kinds: ["doc_update_review_request"], credentials: [MODEL_KEY], next: { to: "Tsugu", kind: "doc_update_apply_request", id_suffix: "-apply" } },
      { name: "Tsugu", runner: sprite("tsugu"), allowed_kinds: ["doc_update_apply_request"], next: { to: "Gen", kind: "pm_snapshot_request", id_suffix: "-pm_snapshot" } },
      { name: "Gen", runner: sprite("gen"), allowed_kinds: ["pm_snapshot_request"], next: { to: "Hana", kind: "pm_snapshot_done", id_suffix: "-done" } },
      {
        name: "Hana",
        runner: sprite("hana"),
        allowed_kinds: [HANA_KINDS.task, HANA_KINDS.snapshotDone, HANA_KINDS.analysisResult],
        // Hana routes by the entry's kind and `payload.target` only (roles contract §3.6.4).
        routes: [
          { on: HANA_KINDS.task, target: "Aya", to: "Aya", kind: "doc_update_proposal_request", id_suffix: "-proposal" },
          { on: HANA_KINDS.task, target: "Kai", to: "Kai", kind: KAI_ANALYSIS_KIND, id_suffix: "-analysis" },
          { on: HANA_KINDS.snapshotDone, to: "Human", kind: CYCLE_DONE_KIND, id_suffix: "-cycle_done" },
          { on: HANA_KINDS.analysisResult, to: "Human", kind: ANALYSIS_DONE_KIND, id_suffix: "-to_human" },
        ],
      },
    ],
  };
}

export function defaultConfig(projectId: string): ConfigInput {
  return {
    $schema: "./node_modules/pmagent/schemas/config.schema.json",
    project_id: projectId,
    humans: ["Human"],
    lanes: [docUpdateLane()],
    storage: { driver: "sqlite", path: ".pmagent/pmagent.db" },
    forge: { bare_repo: ".pmagent/forge.git" },
    // Sprites run in bubblewrap where it is installed (apt-get install bubblewrap); "required" refuses runs without it.
    sandbox: "auto",
  };
}
