/** The error codes src/store raises (see ErrorCodes in src/core/error-codes.ts). */
declare module "../core/index.js" {
  interface ErrorCodes {
    invalid_cursor: "usage";
    invalid_limit: "usage";
    migration_duplicate: "internal";
    store_bad_schema: "unavailable";
    store_bad_url: "usage";
    store_busy: "unavailable";
    store_missing_url: "usage";
    store_newer_schema: "unavailable";
    store_open_failed: "unavailable";
    store_path_unusable: "usage";
    store_unreachable: "unavailable";
  }
}

export {};
