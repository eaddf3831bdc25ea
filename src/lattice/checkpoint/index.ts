// The checkpoint sub-module of lattice: its public surface.
export * from "./blobs.js";
export * from "./checkpoint.js";
export * from "./lock.js";
export * from "./manifest.js";
export * from "./statcache.js";
export * from "./walk.js";
