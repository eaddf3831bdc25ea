// The config without its schema (and so without zod): where the file is, the project opened with
// a remembered validation (validated.ts), and what the lanes say. Commands that only read the
// config (`bb list`, `runs list`, `kai status`) import this; config/index.ts re-exports all of it.
export {
  CONFIG_FILE,
  findConfig,
  readConfigText,
  allRoles,
  findRole,
  findLane,
  cycleRootId,
  followUpId,
  nextStep,
  finalKinds,
  localActor,
  type Project,
} from "../project.js";
export { openConfig } from "../validated.js";
export type {
  Config,
  ConfigInput,
  LaneConfig,
  RouteConfig,
  NextStep,
  RoleConfig,
  RunnerConfig,
  PriceConfig,
  BudgetConfig,
} from "../schema.js";
