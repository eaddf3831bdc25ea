/** pmagent's library API: each module's public surface. */
export * from "./core/index.js";
export * from "./config/index.js";
export * from "./store/index.js";
export * from "./blackboard/index.js";
export * from "./prompt/index.js";
export * from "./oa/index.js";
export * from "./lattice/index.js";
// oa and lattice both export a GateDecision; the package root keeps OA's.
export type { GateDecision } from "./oa/index.js";
export * from "./kai/index.js";
