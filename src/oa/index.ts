/** OA: kernel surfaces, snapshot, boot, guard, tools, reasoning programs and the run gate. */
export { OAToolError, OASurfaceError } from "./errors.js";
export * from "./schemas.js";
export { oaWorkspace, type OAWorkspace, type OAConfig } from "./workspace.js";
export {
  OA_INIT_COMMAND,
  noKernelSurfaces,
  SURFACES,
  REQUIRED_SURFACES,
  EMPTY_OA_CONTEXT,
  loadSurface,
  loadSurfaces,
  contextOf,
  type SurfaceName,
  type SurfaceSet,
  type LoadedSurface,
} from "./surfaces.js";
export {
  computeKernel,
  interpretation,
  OA_MODE_TABLE,
  STATE_KEY_CHECKS,
  describeDisagreement,
  type KernelView,
  type ActionCategory,
} from "./kernel.js";
export { buildState, writeSnapshot, readState } from "./snapshot.js";
export { bootEnvelope, bootExitCode } from "./boot.js";
export { initSurfaces, type OAInitOptions, type OAInitResult } from "./init.js";
export { runOaGuard } from "./guard.js";
export { runRegisteredGuard, parseGuardOutput, guardNames, REGISTRY_GUARDS, type OAGuardRun } from "./guards.js";
export { OA_TOOL_IDS, callOATool, type OAToolId } from "./tools.js";
export * from "./programs/io.js";
export { decideSafeOps } from "./programs/safe-ops.js";
export { generateOpsBlock } from "./programs/ops-block.js";
export { interpretGuardFailure } from "./programs/guard-interpreter.js";
export { validatePhaseTransition, comparePhases } from "./programs/phase-validator.js";
export { classifyAction, checkConstraints } from "./programs/classify.js";
export type { ReasoningModel } from "./model.js";
export {
  buildEnvelope,
  run as runReasoning,
  PROGRAMS as REASONING_PROGRAMS,
  PROGRAM_TOOLS,
  ReasoningEnvelopeSchema,
  ReasoningResultSchema,
  type ReasoningEnvelope,
  type ReasoningResult,
  type ReasoningDiagnostic,
  type BuildEnvelopeOptions,
  type RunOptions as ReasoningRunOptions,
} from "./reasoning.js";
export { recordOpsBlock, completeOpsBlock, type PendingOpsBlock } from "./context.js";
export { gateRun, gateAction, type GateRunArgs, type GateResult, type GateDecision, type GateEntry } from "./gate.js";
export { OA_PUBLISHED_SCHEMAS } from "./published.js";
export {
  PromptReasoningModel,
  reasoningEngine,
  type PromptReasoningModelOptions,
  type ReasoningEngine,
} from "./prompt-model.js";
export type * from "./error-codes.js"; // the codes this module raises, merged into core's ErrorCodes
