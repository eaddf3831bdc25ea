/** The error codes src/lattice/environment raises (see ErrorCodes in src/core/error-codes.ts). */
declare module "../../core/index.js" {
  interface ErrorCodes {
    actor_required: "usage"; // also raised by cli
    change_exists: "conflict";
    change_not_applied: "conflict";
    change_not_found: "not_found";
    change_undone: "conflict";
    install_failed: "unavailable"; // also raised by cli
    not_human: "refused";
    proposal_decided: "conflict";
    proposal_details_invalid: "usage";
    proposal_not_accepted: "conflict";
    proposal_not_found: "not_found";
    proposal_refused: "refused";
    proposal_type_unknown: "usage";
  }
}

export {};
