// The sprite sub-module of lattice: its public surface.
export * from "./sprite.js";
