import type { ConfigInput } from "./schema.js";

/** The model key Aya and Sho may fetch (FETCH_CREDENTIAL) when `model` is configured; unused otherwise. */
const MODEL_KEY = "OPENAI_API_KEY";

/** The kind of the entry Hana posts to Human when a cycle is finished. */
export const CYCLE_DONE_KIND = "doc_update_cycle_done";

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
    roles: [
      { name: "Aya", runner: sprite("aya"), allowed_kinds: ["doc_update_proposal_request"], credentials: [MODEL_KEY], next: { to: "Sho", kind: "doc_update_review_request", id_suffix: "-review" } },
      { name: "Sho", runner: sprite("sho"), allowed_kinds: ["doc_update_review_request"], credentials: [MODEL_KEY], next: { to: "Tsugu", kind: "doc_update_apply_request", id_suffix: "-apply" } },
      { name: "Tsugu", runner: sprite("tsugu"), allowed_kinds: ["doc_update_apply_request"], next: { to: "Gen", kind: "pm_snapshot_request", id_suffix: "-pm_snapshot" } },
      { name: "Gen", runner: sprite("gen"), allowed_kinds: ["pm_snapshot_request"], next: { to: "Hana", kind: "pm_snapshot_done", id_suffix: "-done" } },
      { name: "Hana", runner: sprite("hana"), allowed_kinds: ["pm_snapshot_done"], next: { to: "Human", kind: CYCLE_DONE_KIND, id_suffix: "-cycle_done" } },
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
