/** The error codes src/cli raises (see ErrorCodes in src/core/error-codes.ts). */
declare module "../core/index.js" {
  interface ErrorCodes {
    conflicting_options: "usage";
    input_unreadable: "usage";
    invalid_agent_input: "usage";
    invalid_argument: "usage";
    invalid_event_type: "usage";
    invalid_format: "usage";
    invalid_host: "usage";
    missing_option: "usage";
    missing_role: "usage";
    port_in_use: "unavailable";
    port_not_permitted: "unavailable";
    unknown_lane: "usage";
  }
}

export {};
