/** The error codes src/lattice/runs raises (see ErrorCodes in src/core/error-codes.ts). */
declare module "../../core/index.js" {
  interface ErrorCodes {
    run_fenced: "refused";
    run_not_found: "not_found";
  }
}

export {};
