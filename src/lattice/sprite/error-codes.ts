/** The error codes src/lattice/sprite raises (see ErrorCodes in src/core/error-codes.ts). */
declare module "../../core/index.js" {
  interface ErrorCodes {
    invalid_event: "usage"; // also raised by cli
    sprite_id_missing: "usage";
    work_item_id_missing: "usage";
  }
}

export {};
