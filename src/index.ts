/** pmagent's library API: each module's public surface. */
export * from "./core/index.js";
export * from "./config/index.js";
export * from "./store/index.js";
export * from "./blackboard/index.js";
export * from "./prompt/index.js";
export * from "./oa/index.js";
export * from "./lattice/index.js";
// oa and lattice both name a GateDecision; the library exports OA's (lattice's is its run record field).
export type { GateDecision } from "./oa/index.js";
export * from "./kai/index.js";
export * from "./server/index.js";
// kai and lattice both name a RunState; lattice's is the supervisor's full set.
export type { RunState } from "./lattice/index.js";
