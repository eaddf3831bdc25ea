/** The error codes src/lattice/protocol raises (see ErrorCodes in src/core/error-codes.ts). */
declare module "../../core/index.js" {
  interface ErrorCodes {
    invalid_resume: "usage";
    invalid_resume_inputs: "usage";
    outbox_truncated: "conflict";
    resume_message_empty: "usage";
    resume_message_too_long: "usage";
    resume_message_twice: "usage";
  }
}

export {};
