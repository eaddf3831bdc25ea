// The forge: where a project's branches and pull requests live (a local bare repository, or
// GitHub), the git helpers the supervisor uses, and the checked git that reads a sprite's workspace.
export * from "./forge.js";
export * from "./diff.js";
export * from "./git.js";
export * from "./github.js";
export * from "./workspace-git.js";
export * from "./cycle-branch.js";
export * from "./remote.js";
export * from "./decide.js";
export * from "./comments.js";
export * from "./artifacts.js";
export type * from "./error-codes.js"; // the codes this module raises, merged into core's ErrorCodes
