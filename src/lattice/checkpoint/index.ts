// The checkpoint sub-module of lattice: its public surface.
export * from "./blobs.js";
export * from "./create.js";
export * from "./directory.js";
export * from "./lock.js";
export * from "./manifest.js";
export * from "./restore.js";
export * from "./statcache.js";
export * from "./vault.js";
export * from "./walk.js";
export * from "./shared.js";
export type * from "./error-codes.js"; // the codes this module raises, merged into core's ErrorCodes
