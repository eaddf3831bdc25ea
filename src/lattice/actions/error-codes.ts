/** The error codes src/lattice/actions raises (see ErrorCodes in src/core/error-codes.ts). */
declare module "../../core/index.js" {
  interface ErrorCodes {
    credential_not_allowed: "refused";
    credential_not_found: "not_found";
    github_not_configured: "refused";
    invalid_credential_name: "usage";
    secrets_file_invalid: "usage";
    secrets_file_unreadable: "unavailable";
    webhook_failed: "unavailable";
    webhook_refused: "refused";
    webhook_unreachable: "unavailable";
  }
}

export {};
