/** The error codes src/lattice/wire raises (see ErrorCodes in src/core/error-codes.ts). */
declare module "../../core/index.js" {
  interface ErrorCodes {
    not_regular_file: "conflict";
    outbox_symlink: "conflict";
  }
}

export {};
