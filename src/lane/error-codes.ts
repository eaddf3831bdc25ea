/** The error codes src/lane raises (see ErrorCodes in src/core/error-codes.ts). */
declare module "../core/index.js" {
  interface ErrorCodes {
    artifact_ambiguous: "usage";
    artifact_missing: "not_found";
    demo_cycle_incomplete: "unavailable";
    demo_dir_not_empty: "usage";
    demo_timeout: "unavailable";
    github_repo_missing: "usage";
    invalid_artifact: "usage";
    invalid_payload_ref: "usage";
    invalid_proposal: "usage";
    invalid_request: "usage";
    invalid_snapshot: "usage";
    not_in_a_run: "usage";
    review_not_applicable: "refused";
    route_target_missing: "usage";
    route_unknown: "refused";
    unknown_kind: "usage";
    unknown_lane_artifact: "usage";
    unknown_lane_sprite: "usage";
    update_refused: "refused";
  }
}

export {};
