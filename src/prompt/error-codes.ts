/** The error codes src/prompt raises (see ErrorCodes in src/core/error-codes.ts). */
declare module "../core/index.js" {
  interface ErrorCodes {
    agent_failed: "internal";
    entry_file_missing: "usage";
    invalid_base_url: "usage";
    invalid_output_schema: "usage";
    invalid_patch: "usage";
    invalid_review: "usage";
    invalid_tool_arguments: "usage";
    lane_unknown: "usage";
    model_aborted: "unavailable";
    model_answer_invalid: "unavailable";
    model_auth_failed: "refused";
    model_failed: "unavailable";
    model_incomplete: "unavailable";
    model_key_unavailable: "unavailable";
    model_rate_limited: "unavailable";
    model_refused: "refused";
    model_request_rejected: "usage";
    model_server_error: "unavailable";
    model_stream_error: "unavailable";
    model_stream_truncated: "unavailable";
    model_timeout: "unavailable";
    model_tool_call_unexpected: "unavailable";
    model_tool_rounds_exceeded: "unavailable";
    model_unreachable: "unavailable";
    no_model_api_key: "usage";
    output_schema_not_strict: "usage";
    path_not_allowed: "refused";
    template_empty: "usage";
    template_invalid: "usage";
    template_unreadable: "usage";
    unknown_preset: "usage";
    unknown_review_level: "usage";
  }
}

export {};
