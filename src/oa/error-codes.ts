/** The error codes src/oa raises (see ErrorCodes in src/core/error-codes.ts). */
declare module "../core/index.js" {
  interface ErrorCodes {
    oa_branch_unknown: "usage";
    oa_context_invalid: "refused";
    oa_goal_empty: "usage";
    oa_guard_failed: "unavailable";
    oa_guard_invalid_output: "unavailable";
    oa_guard_timeout: "unavailable";
    oa_invalid_envelope: "usage";
    oa_invalid_inputs: "usage";
    oa_ops_block_not_found: "not_found";
    oa_program_input_invalid: "usage";
    oa_surface_invalid: "refused";
    oa_surface_missing: "refused";
    oa_surface_unavailable: "refused";
    oa_surfaces_exist: "refused";
    oa_tool_arguments: "usage";
    oa_tool_not_allowed: "refused";
    oa_unknown_guard: "usage";
    oa_unknown_program: "usage";
    oa_unknown_tool: "usage";
  }
}

export {};
