// The runs sub-module of lattice: its public surface.
export * from "./records.js";
export * from "./fencing.js";
export { RUN_STATES, TERMINAL_RUN_STATES, UNFINISHED_RUN_STATES, isTerminalRunState, type RunState } from "./states.js";
export { RunStore } from "./run-store.js";
export * from "./sql.js";
export { standingGateDenials, type GateDenial } from "./gate-denials.js";
