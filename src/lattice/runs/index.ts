// The runs sub-module of lattice: its public surface.
export * from "./records.js";
export * from "./fencing.js";
export { RUN_STATES, UNFINISHED_RUN_STATES, isTerminalRunState, type RunState } from "./states.js";
export { RunStore } from "./run-store.js";
export {
  RunOutputWriter,
  samePosition,
  type NewEvent,
  type NewLogLine,
  type NewProtocolError,
  type NewViolation,
  type OutputCounters,
  type OutputPosition,
  type OutputWritten,
  type RunOutput,
} from "./output-writer.js";
export * from "./sql.js";
export { standingGateDenials, type GateDenial } from "./gate-denials.js";
export { usageOfEvent, addTokens, sumTokens, noTokens, type TokenCounts, type ModelUsage } from "./usage.js";
export {
  costOf,
  summarizeUsage,
  budgetBreach,
  formatCost,
  type Cost,
  type PriceTable,
  type UsageSummary,
  type BudgetLimits,
} from "./cost.js";
export { usageOfRuns, setRunBudget, runBudget, type RunBudget } from "./usage-store.js";
export { USAGE_GROUPINGS, groupUsage, usageText, type UsageGrouping, type UsageGroup } from "./usage-report.js";
export type { QueuedResume } from "./resume-queue.js";
export {
  followRunEvents,
  followRunLogs,
  notifyRunProgress,
  runProgressWaker,
  type FollowOptions,
  type RunProgressWaker,
} from "./progress.js";
export type * from "./error-codes.js"; // the codes this module raises, merged into core's ErrorCodes
