/** The error codes src/lattice/checkpoint raises (see ErrorCodes in src/core/error-codes.ts). */
declare module "../../core/index.js" {
  interface ErrorCodes {
    checkpoint_damaged: "usage" | "not_found";
    checkpoint_dir_locked: "unavailable";
    checkpoint_not_found: "not_found"; // also raised by lattice/supervisor
    checkpoint_unreadable: "refused";
    invalid_checkpoint_id: "usage";
    invalid_run_id: "usage";
    workspace_missing: "not_found";
    workspace_not_directory: "usage";
  }
}

export {};
