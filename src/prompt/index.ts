/** The chat-codex prompt contract: templates, request builder, output schemas, model client, role step. */
export {
  AGENT_ROLES,
  REVIEW_LEVELS,
  DEFAULT_REVIEW_LEVEL,
  parseAgentRole,
  parseReviewLevel,
  type AgentRole,
  type ReviewLevel,
} from "./roles.js";
export {
  PACKAGE_TEMPLATES_DIR,
  loadTemplates,
  renderTemplate,
  type TemplateFile,
  type PromptTemplates,
} from "./templates.js";
export { renderLedgerBlock, type Ledger, type LedgerInput, type KnownLedger } from "./ledger.js";
export {
  ReviewerOutputSchema,
  OUTPUT_PRESETS,
  PRESET_NAMES,
  parsePresetName,
  presetFormatName,
  type PresetName,
  type OrchestratorOutput,
  type ReviewerOutput,
  type ExecutorOutput,
  type SearcherOutput,
} from "./presets.js";
export {
  outputSchemaFromZod,
  outputSchemaFromJson,
  assertStrictJsonSchema,
  presetOutputSchema,
  resolveOutputSchema,
  checkAnswer,
  type OutputSchema,
  type OutputSchemaSelection,
  type AnswerCheck,
} from "./output-schema.js";
export {
  HistoryMessageSchema,
  buildResponsesRequest,
  DEFAULT_MODEL_REQUEST,
  takesReasoning,
  developerInstructions,
  textFormat,
  type HistoryMessage,
  type ContextTag,
  type BuildRequestOptions,
  type ResponsesPayload,
} from "./request.js";
export {
  APPLY_PATCH,
  UPDATE_PLAN,
  PLAN_STATUSES,
  ApplyPatchArgsSchema,
  UpdatePlanArgsSchema,
  roleTools,
  type UpdatePlanArgs,
  type ToolCall,
  type ToolHandler,
} from "./tools.js";
export { parsePatch, applyPatch, type PatchOperation, type PatchHunk, type PatchChange } from "./apply-patch.js";
export { runEditTool, type EditToolContext, type EditToolResult } from "./edit-tools.js";
export {
  ModelClient,
  modelSettings,
  DEFAULT_BASE_URL,
  type ModelSectionInput,
  type ModelSettings,
  type TokenUsage,
  type ModelAnswer,
  type RespondOptions,
} from "./client.js";
export { reviewOutcome, type ReviewOutcome } from "./review.js";
export { runRoleStep, type RoleStepOptions, type RoleStepResult } from "./agent.js";
export {
  runRoleAgent,
  type RoleAgentOptions,
  type RoleAgentReport,
  type RoleAgentTask,
  type RoleTaskRequest,
  type RoleTaskOutcome,
} from "./role-agent.js";
export type * from "./error-codes.js"; // the codes this module raises, merged into core's ErrorCodes
