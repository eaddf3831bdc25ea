/**
 * The sandbox sub-module of lattice: what a sprite runs inside. A scrubbed environment (an
 * allow-list, never a token; env.ts), shims first on its PATH that refuse `git push`, remote edits
 * and `gh` and record the attempt as a hard-rule violation (git-guard.ts), then the directory of a
 * `pmagent` launcher (for `pmagent emit` and `pmagent checkpoint`; run-dir.ts), then the
 * supervisor's PATH. Where bubblewrap is there (config `sandbox`), the sprite also runs in a bwrap
 * sandbox (bwrap.ts, with what it shows and hides from run-sandbox.ts): the shims are bound over
 * the real git and gh, and what the sprite must not reach is not visible, so no push succeeds
 * whatever path it takes. What the supervisor runs on what a sprite made (an installer of an
 * accepted environment proposal, git reading a workspace) gets the same view and no more
 * (helperSandbox) and a scrubbed environment too (helperEnv). processes.ts finds, signals and
 * kills the sprites' process groups.
 */
export * from "./processes.js";
export { checkExtraEnv, helperEnv, spriteEnv, type SpriteEnvInput } from "./env.js";
export { VIOLATIONS_FILE, readViolations, type ViolationLine } from "./git-guard.js";
export { prepareRunDir, runHome, selfCommand, type RunDirs } from "./run-dir.js";
export { SANDBOX_WORKSPACE, findSandboxTool, sandboxArgv, type SandboxMode, type SandboxSpec } from "./bwrap.js";
export {
  artifactPaths,
  helperSandbox,
  hiddenFromSprites,
  runSandbox,
  type HelperSandboxInput,
  type RunSandboxInput,
} from "./run-sandbox.js";
export type * from "./error-codes.js"; // the codes this module raises, merged into core's ErrorCodes
