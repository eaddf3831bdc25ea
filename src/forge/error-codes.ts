/** The error codes src/forge raises (see ErrorCodes in src/core/error-codes.ts). */
declare module "../core/index.js" {
  interface ErrorCodes {
    artifact_expired: "refused";
    artifact_not_found: "not_found";
    artifact_too_large: "refused";
    artifact_unreadable: "unavailable";
    base_not_found: "usage";
    branch_diverged: "conflict";
    branch_not_found: "usage" | "not_found";
    cycle_conflict: "conflict";
    forge_moved: "conflict";
    forge_unreachable: "unavailable";
    git_failed: "unavailable"; // also raised by lane
    github_forbidden: "refused"; // also raised by blackboard
    github_not_found: "not_found"; // also raised by blackboard
    github_rate_limited: "unavailable"; // also raised by blackboard
    github_rejected: "usage" | "unavailable"; // also raised by blackboard
    github_token_missing: "usage" | "refused"; // also raised by blackboard, lane
    github_unauthorized: "refused";
    github_unavailable: "unavailable";
    invalid_branch: "usage";
    invalid_comment: "usage";
    invalid_parameters: "usage"; // also raised by lattice/actions
    merge_conflict: "conflict";
    permission_refused: "refused"; // also raised by blackboard, lattice/supervisor, server
    pr_base_missing: "not_found";
    pull_request_not_found: "not_found";
    pull_request_not_open: "conflict";
    workspace_git_refused: "refused";
  }
}

export {};
