/** The error codes src/testing raises (see ErrorCodes in src/core/error-codes.ts). */
declare module "../core/index.js" {
  interface ErrorCodes {
    invalid_command: "usage";
  }
}

export {};
