/** pmagent's library API: each module's public surface. */
export * from "./core/index.js";
export * from "./config/index.js";
export * from "./store/index.js";
export * from "./blackboard/index.js";
export * from "./prompt/index.js";
export * from "./oa/index.js";
export * from "./kai/index.js";
export * from "./forge/index.js";
export * from "./lattice/index.js";
export * from "./app/index.js";
export * from "./lane/index.js";
// Names two modules both export: the package root keeps OA's GateDecision and lattice's RunState.
export type { GateDecision } from "./oa/index.js";
export type { RunState } from "./lattice/index.js";
export * from "./server/index.js";
