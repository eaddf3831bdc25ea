// The runs sub-module of lattice: its public surface.
export * from "./run-store.js";
export * from "./sql.js";
