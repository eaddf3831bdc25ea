/** The error codes src/config raises (see ErrorCodes in src/core/error-codes.ts). */
declare module "../core/index.js" {
  interface ErrorCodes {
    config_exists: "conflict";
    config_invalid: "usage"; // also raised by prompt
    config_invalid_json: "usage";
    config_not_found: "not_found";
    gitignore_unreadable: "unavailable";
    gitignore_unwritable: "unavailable";
    invalid_option: "usage"; // also raised by lattice/checkpoint, cli
    unknown_role: "usage"; // also raised by prompt
  }
}

export {};
