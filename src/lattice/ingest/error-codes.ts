/** The error codes src/lattice/ingest raises (see ErrorCodes in src/core/error-codes.ts). */
declare module "../../core/index.js" {
  interface ErrorCodes {
    ingest_store_fault: "unavailable";
    outbox_decoder_stopped: "unavailable";
  }
}

export {};
