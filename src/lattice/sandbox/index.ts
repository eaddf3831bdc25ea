// The sandbox sub-module of lattice: its public surface.
export * from "./processes.js";
export * from "./sandbox.js";
