/** The error codes src/lattice/supervisor raises (see ErrorCodes in src/core/error-codes.ts). */
declare module "../../core/index.js" {
  interface ErrorCodes {
    entry_finished: "refused";
    entry_not_for_role: "refused"; // also raised by server
    entry_not_open: "conflict";
    gate_invalid: "internal";
    invalid_budget: "usage";
    invalid_concurrency: "usage";
    invalid_machine: "usage";
    no_prices: "usage";
    no_sprite_command: "usage"; // also raised by server
    preinstall_failed: "internal";
    resume_input_twice: "usage";
    resume_queued: "conflict";
    run_denied: "refused";
    run_finished: "refused";
    run_not_finished: "conflict";
    run_not_movable: "internal";
    run_not_waiting: "refused";
    run_without_entry: "refused";
    secrets_unreadable: "unavailable";
    sprite_not_found: "internal";
    workspace_failed: "unavailable";
  }
}

export {};
