// The supervisor sub-module of lattice: its public surface.
export * from "./hooks.js";
export * from "./supervisor.js";
export * from "./worker.js";
export * from "./rerun.js";
export type * from "./error-codes.js"; // the codes this module raises, merged into core's ErrorCodes
