// The sprite sub-module of lattice: its public surface.
export * from "./sprite.js";
export type * from "./error-codes.js"; // the codes this module raises, merged into core's ErrorCodes
