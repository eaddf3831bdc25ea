/** pmagent's library API: each module's public surface. */
export * from "./core/index.js";
export * from "./config/index.js";
export * from "./store/index.js";
export * from "./blackboard/index.js";
export * from "./prompt/index.js";
export * from "./oa/index.js";
export * from "./kai/index.js";
export * from "./lattice/index.js";
export type { GateDecision, RunState } from "./lattice/index.js"; // oa and kai have their own of these names: lattice's are the library's
