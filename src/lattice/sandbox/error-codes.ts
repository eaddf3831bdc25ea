/** The error codes src/lattice/sandbox raises (see ErrorCodes in src/core/error-codes.ts). */
declare module "../../core/index.js" {
  interface ErrorCodes {
    invalid_sprite_env: "usage";
    sandbox_unavailable: "unavailable";
    secret_in_sprite_env: "usage";
  }
}

export {};
