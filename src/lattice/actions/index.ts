// The actions sub-module of lattice: its public surface.
export * from "./action-store.js";
export * from "./executor.js";
export * from "./handlers.js";
export * from "./notify.js";
export * from "./secrets.js";
export * from "./types.js";
export type * from "./error-codes.js"; // the codes this module raises, merged into core's ErrorCodes
