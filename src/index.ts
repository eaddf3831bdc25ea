/**
 * pmagent's library API (`import { … } from "pmagent"`): the names a program that drives pmagent
 * needs, listed one by one. Each module's whole surface stays in its own `index.ts`; adding a name
 * here is a decision (test/package.test.ts holds the list). The sprite SDK is `pmagent/sprite`, the
 * test harness and scripted model servers `pmagent/testing`.
 */

// core: typed errors (each with a stable `code`), redaction, logging, canonical JSON.
export {
  PmagentError,
  UsageError,
  RefusedError,
  NotFoundError,
  ConflictError,
  UnavailableError,
  isPmagentError,
  exitCodeFor,
  Redactor,
  createLogger,
  canonicalJson,
  contentHash,
  toJsonSchema,
} from "./core/index.js";
export type { ErrorKind, Logger } from "./core/index.js";

// config: pmagent.config.json, a project and its lanes.
export {
  ConfigSchema,
  CONFIG_FILE,
  parseConfig,
  loadProject,
  initProject,
  findConfig,
  defaultConfig,
  docUpdateLane,
  codeLane,
  LANE_TEMPLATES,
} from "./config/index.js";
export type { Config, ConfigInput, LaneConfig, RoleConfig, Project } from "./config/index.js";

// store: one Store over SQLite and PostgreSQL, and the migration runner.
export { SqliteStore, PostgresStore, openStore, migrate } from "./store/index.js";
export type {
  Store,
  Queryable,
  Dialect,
  Migration,
  StorageConfig,
  OpenStoreOptions,
  SqliteOptions,
  PostgresOptions,
} from "./store/index.js";

// blackboard: entries, claims with leases, history; GitHub sync.
export { Blackboard, EntrySchema, EntryInputSchema, syncBoard } from "./blackboard/index.js";
export type { Entry, EntryInput, StoredEntry } from "./blackboard/index.js";

// lattice: the event protocol, the supervisor and worker, runs, actions and environment proposals.
export {
  Supervisor,
  Worker,
  RunStore,
  ActionStore,
  ProposalStore,
  LatticeEventSchema,
  EVENT_TYPES,
} from "./lattice/index.js";
export type {
  SupervisorOptions,
  WorkerOptions,
  ResumeOptions,
  ResumeResult,
  RunRecord,
  RunState,
  StoredEvent,
  LatticeEvent,
} from "./lattice/index.js";

// forge: where branches and pull requests live.
export { LocalForge, GitHubForge } from "./forge/index.js";
export type { Forge, PullRequest } from "./forge/index.js";

// prompt: the prompt contract and the model client.
export {
  ModelClient,
  loadTemplates,
  buildResponsesRequest,
  runRoleStep,
  runRoleAgent,
  outputSchemaFromZod,
  outputSchemaFromJson,
  OUTPUT_PRESETS,
  PRESET_NAMES,
  AGENT_ROLES,
} from "./prompt/index.js";
export type { ResponsesPayload, BuildRequestOptions, PresetName, ToolCall } from "./prompt/index.js";

// oa: the Orchestrator Assistant's snapshot, boot, guard and run gate.
export { writeSnapshot, bootEnvelope, runOaGuard, gateRun, gateAction } from "./oa/index.js";
export type { GateDecision, GateResult } from "./oa/index.js";

// kai: lane_status and what_changed.
export { answer, answerText, answerRequest, checkRequest, kaiSources, collectRuns, kaiSchemas } from "./kai/index.js";
export type { KaiSources, KaiOptions, KaiRequest, KaiResponse, LaneStatus, WhatChanged } from "./kai/index.js";

// app: a project opened from its config, its supervisor and action executor.
export {
  openProject,
  withProject,
  OpenProject,
  migrations,
  projectSupervisor,
  projectActionExecutor,
} from "./app/index.js";
export type { OpenProjectOptions, KaiSourcesOptions, ProjectSupervisorOptions } from "./app/index.js";

// lane: the demo and the example lane.
export { runDemo, exampleLaneConfig } from "./lane/index.js";

// server: the HTTP API (with the console) and the MCP server.
export { buildServer, DEFAULT_PORT, mcpServer, openApiDocument } from "./server/index.js";
export type { ServerOptions, PmagentServer } from "./server/index.js";
