/** The error codes src/server raises (see ErrorCodes in src/core/error-codes.ts). */
declare module "../core/index.js" {
  interface ErrorCodes {
    config_needs_restart: "conflict";
    config_unreadable: "unavailable";
    host_not_allowed: "refused";
    invalid_body: "usage";
    invalid_kai_request: "usage";
    invalid_last_event_id: "usage";
    invalid_params: "usage";
    invalid_query: "usage";
    invalid_tokens: "usage";
    no_tokens: "refused";
    not_found: "not_found";
    origin_not_allowed: "refused";
    unauthorized: "refused";
    worker_not_found: "not_found";
  }
}

export {};
