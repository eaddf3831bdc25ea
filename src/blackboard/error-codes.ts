/** The error codes src/blackboard raises (see ErrorCodes in src/core/error-codes.ts). */
declare module "../core/index.js" {
  interface ErrorCodes {
    bb_bad_type: "usage";
    bb_comment_bad_marker: "usage";
    bb_comment_empty: "usage";
    bb_comment_invalid_entry: "usage";
    bb_comment_invalid_json: "usage";
    bb_comment_no_json_line: "usage";
    bb_comment_not_object: "usage";
    bb_comment_unclosed_fence: "usage";
    bb_import_mixed: "usage";
    bb_sync_bad_issue: "usage";
    bb_sync_bad_repo: "usage";
    bb_sync_running: "conflict";
    claim_lost: "refused";
    empty_input: "usage";
    entry_exists: "conflict";
    entry_not_found: "not_found";
    github_bad_api_url: "usage";
    github_bad_credentials: "unavailable";
    github_unreachable: "unavailable";
    invalid_entry: "usage"; // also raised by prompt, lane, cli
    invalid_status: "usage";
    no_kinds: "usage";
    stale_write: "conflict";
    transition_refused: "refused";
    wrong_project: "usage";
  }
}

export {};
