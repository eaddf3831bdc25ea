// The wire sub-module of lattice: the protocol's zod-free core (constants, the hand-compiled
// envelope check, the outbox append, opening a file a sprite can reach). `pmagent emit` loads this
// and core only, so a shell sprite's every event costs little more than node's own start;
// protocol/index.ts re-exports all of it.
export * from "./constants.js";
export * from "./envelope-check.js";
export * from "./append.js";
export * from "./regular-file.js";
export type * from "./error-codes.js"; // the codes this module raises, merged into core's ErrorCodes
