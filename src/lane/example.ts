/**
 * The example doc_update lane (examples/doc-update-lane/pmagent.config.json, kept equal by a test):
 * DESIGN.md §2's roles, each run by its built-in sprite, and Hana routing the finished cycle to Human.
 */
import type { ConfigInput } from "../config/index.js";

/** The model key Aya and Sho may fetch (FETCH_CREDENTIAL) when `model` is configured; unused otherwise. */
const MODEL_KEY = "OPENAI_API_KEY";

export const CYCLE_DONE_KIND = "doc_update_cycle_done";

const sprite = (name: string) => ({ command: ["pmagent", "lane-sprite", name], timeout_s: 300 });

export function exampleLaneConfig(projectId: string): ConfigInput {
  return {
    $schema: "./node_modules/pmagent/schemas/config.schema.json",
    project_id: projectId,
    humans: ["Human"],
    lanes: [
      {
        layer: "layer_b",
        name: "doc_update",
        allowed_paths: ["STATE/", "docs/"],
        state_file: "STATE/current_state.md",
        roles: [
          { name: "Aya", allowed_kinds: ["doc_update_proposal_request"], credentials: [MODEL_KEY], runner: sprite("aya"), next: { to: "Sho", kind: "doc_update_review_request", id_suffix: "-review" } },
          { name: "Sho", allowed_kinds: ["doc_update_review_request"], credentials: [MODEL_KEY], runner: sprite("sho"), next: { to: "Tsugu", kind: "doc_update_apply_request", id_suffix: "-apply" } },
          { name: "Tsugu", allowed_kinds: ["doc_update_apply_request"], runner: sprite("tsugu"), next: { to: "Gen", kind: "pm_snapshot_request", id_suffix: "-pm_snapshot" } },
          { name: "Gen", allowed_kinds: ["pm_snapshot_request"], runner: sprite("gen"), next: { to: "Hana", kind: "pm_snapshot_done", id_suffix: "-done" } },
          { name: "Hana", allowed_kinds: ["pm_snapshot_done"], runner: sprite("hana"), next: { to: "Human", kind: CYCLE_DONE_KIND, id_suffix: "-cycle_done" } },
        ],
      },
    ],
    storage: { driver: "sqlite", path: ".pmagent/pmagent.db" },
    forge: { bare_repo: ".pmagent/forge.git" },
  };
}
