// The environment sub-module of lattice: its public surface.
export * from "./adjustments.js";
export * from "./proposals.js";
export * from "./changes.js";
export * from "./install.js";
export * from "./names.js";
export type * from "./error-codes.js"; // the codes this module raises, merged into core's ErrorCodes
