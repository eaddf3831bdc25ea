// The actions sub-module of lattice: its public surface.
export * from "./action-store.js";
export * from "./executor.js";
export * from "./forge.js";
export * from "./git.js";
export * from "./github.js";
export * from "./handlers.js";
export * from "./notify.js";
export * from "./params.js";
export * from "./secrets.js";
export * from "./types.js";
export * from "./forge-diff.js";
export * from "./forge-decide.js";
export * from "./workspace-git.js";
export * from "./cycle-branch.js";
