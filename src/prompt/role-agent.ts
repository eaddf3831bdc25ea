/**
 * The LLM role agent as a Lattice sprite (`pmagent agent --role ROLE`): read the work item (the
 * blackboard entry the supervisor wrote), build the request, call the model, validate the answer,
 * write it as an artifact file in the workspace and report every step as Lattice events. As
 * orchestrator it is offered apply_patch and update_plan and carries the calls out within the
 * lane's allowed paths (edit-tools.ts), until the model answers.
 */
import { existsSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { z } from "zod";
import {
  PmagentError,
  hasCode,
  UnavailableError,
  UsageError,
  confinePath,
  nowIso,
  parseJsonText,
  parseWith,
  writeFileAtomic,
} from "../core/index.js";
import { LaneSchema, findLane, findRole, type Project } from "../config/index.js";
import { Sprite, type Resume } from "../lattice/index.js";
import { runRoleStep, type RoleStepOptions, type RoleStepResult } from "./agent.js";
import { ModelClient } from "./client.js";
import { runEditTool } from "./edit-tools.js";
import { roleTools, type ToolCall } from "./tools.js";
import type { OutputSchema } from "./output-schema.js";
import type { ReviewerOutput } from "./presets.js";
import { DEFAULT_REVIEW_LEVEL, type AgentRole, type ReviewLevel } from "./roles.js";

/** Set by the supervisor (wip/lattice-b) to `$LATTICE_WORKSPACE/.lattice/entry.json`. */
export const ENTRY_FILE_ENV = "PMAGENT_ENTRY_FILE";
const DEFAULT_KEY_ENV = "OPENAI_API_KEY";
/** Where artifact files go, relative to the workspace. */
export const ARTIFACT_DIR = ".pmagent-artifacts";

const RefSchema = z.union([
  z.string().min(1),
  z.looseObject({
    type: z.string().optional(),
    ref: z.string().nullish(),
    url: z.string().nullish(),
    run_id: z.string().optional(),
    entry_id: z.string().optional(),
  }),
]);

/** The fields of a work item the agent reads; the whole entry still goes to the model. */
const WorkItemSchema = z.looseObject({
  id: z.string().min(1),
  to: z.string().min(1).optional(),
  kind: z.string().min(1).optional(),
  // The spec only says `refs` is an object: the supervisor posts a list, people often write a map.
  payload: z
    .looseObject({
      refs: z.union([z.array(RefSchema), z.record(z.string(), z.unknown())]).optional(),
      cycle: z.number().int().min(1).optional(),
    })
    .optional(),
});
type WorkItem = z.output<typeof WorkItemSchema>;

export interface RoleAgentOptions {
  role: AgentRole;
  reviewLevel?: ReviewLevel;
  /** `layer/name`; default: the lane that configures the entry's `to` role. */
  lane?: string;
  cycle?: number;
  /** The entry file; default `$PMAGENT_ENTRY_FILE`, else `.lattice/entry.json` in the workspace. */
  entryFile?: string;
  stream?: boolean;
  project?: Project;
  env?: NodeJS.ProcessEnv;
  /** Where event lines go (default stdout). */
  write?: (line: string) => void;
  /** The sprite to report through (default: one made from `env`). */
  sprite?: Sprite;
  /**
   * A task with its own contract instead of the role's generic answer (e.g. a doc_update lane
   * role): its output schema, the context the model needs, and what the answer becomes.
   */
  task?: RoleAgentTask;
}

/** What a task adds to the model's request; prepared once the work item is read. */
export interface RoleTaskRequest {
  /** The explicit output schema; the answer is validated with it (one retry with the errors). */
  outputSchema: OutputSchema;
  /** The turn_context block (developer zone): what this turn is for. */
  turnContext?: string;
  /** The environment_context block: e.g. the current text of the documents the task is about. */
  environmentContext?: string;
}

/** What the step means for the lane, as a task decides it. */
export interface RoleTaskOutcome {
  status: "success" | "failure";
  summary: string;
  revision_requested: boolean;
  requested_changes: string[];
}

export interface RoleAgentTask {
  /** A short name for messages, e.g. `doc_update_proposal_v1`. */
  name: string;
  /** Read what the task needs (before the model key is asked for, so a missing input fails early). */
  prepare(): RoleTaskRequest;
  /** Turn the validated answer into the task's artifact (ARTIFACT events are the task's) and outcome. */
  finish(step: RoleStepResult): RoleTaskOutcome;
}

export interface RoleAgentReport {
  /** `waiting`: the sprite asked the supervisor for the model key (FETCH_CREDENTIAL) and stopped. */
  status: "success" | "failure" | "waiting";
  entry_id: string;
  artifact: string;
  summary: string;
  revision_requested: boolean;
}

/**
 * Run one role step as a sprite. Failures after the sprite exists are reported as an ERROR event
 * and rethrown (the CLI prints the one-line message and exits with the error's code).
 */
export async function runRoleAgent(options: RoleAgentOptions): Promise<RoleAgentReport> {
  const env = options.env ?? process.env;
  const sprite =
    options.sprite ?? new Sprite({ env, workspace: env.LATTICE_WORKSPACE || process.cwd(), write: options.write });
  let phase: string | undefined;
  const enter = (name: string) => {
    phase = name;
    sprite.phaseStarted(name);
  };
  const leave = (success: boolean) => {
    if (phase !== undefined) sprite.phaseFinished(phase, success);
    phase = undefined;
  };
  try {
    // The resume (which may carry the model key) is read before the first event: the supervisor
    // removes a credential's resume.json once the sprite has sent one, and preparing the task
    // (a lane step fetching the cycle's branch) can take longer than its poll.
    const { resume } = sprite.readResume();
    enter("prepare");
    const entryFile = options.entryFile ?? (env[ENTRY_FILE_ENV] || join(sprite.workspace, ".lattice", "entry.json"));
    const raw = readEntry(entryFile);
    const item = parseWith(WorkItemSchema, raw, `work item ${entryFile}`, "invalid_entry");
    const lane = options.lane ?? laneOf(item, options.project);
    const cycle = options.cycle ?? item.payload?.cycle ?? 1;
    const refs = refLines(item.payload?.refs);
    const task = options.task?.prepare();
    const client = modelClient(sprite, resume, options.project, env);
    if (client === undefined) {
      leave(true);
      return {
        status: "waiting",
        entry_id: item.id,
        artifact: "",
        summary: "waiting for the model key (FETCH_CREDENTIAL)",
        revision_requested: false,
      };
    }
    sprite.info(
      `read entry ${item.id}${item.kind ? ` (${item.kind})` : ""} for ${item.to ?? options.role}: lane ${lane}, cycle ${cycle}, ${refs.length} ref${refs.length === 1 ? "" : "s"}`,
      { kind: "progress" },
    );
    leave(true);

    enter("respond");
    const what = `${options.role}${options.role === "reviewer" ? ` (${options.reviewLevel ?? DEFAULT_REVIEW_LEVEL})` : ""}${options.task ? ` for ${options.task.name}` : ""}`;
    sprite.info(`asking ${client.model} as ${what}${options.stream ? ", streamed" : ""}`, { kind: "progress" });
    // The orchestrator's edit tools; a task (a lane step) has its own contract and edits nothing itself.
    const tools =
      options.task || roleTools(options.role).length === 0 ? undefined : editTools(sprite, item, lane, options.project);
    const step = await runRoleStep({
      entry: raw,
      role: options.role,
      lane,
      cycle,
      refs,
      client,
      projectRoot: options.project?.root,
      reviewLevel: options.role === "reviewer" ? options.reviewLevel : undefined,
      outputSchema: task?.outputSchema,
      turnContext: task?.turnContext,
      environmentContext: task?.environmentContext,
      stream: options.stream,
      tools,
    });
    sprite.info(
      `${step.usage.total_tokens} tokens in ${step.attempts.length} call${step.attempts.length === 1 ? "" : "s"}`,
      {
        kind: "usage",
        metadata: { model: client.model, ...step.usage, attempts: step.attempts },
      },
    );
    if (step.schema_retry)
      sprite.info("the first answer did not match the output schema; the retry with the validation errors did", {
        kind: "progress",
      });
    leave(true);

    enter("artifact");
    const outcome = options.task ? options.task.finish(step) : outcomeOf(step);
    const path = writeArtifact(sprite.workspace, item, step, client.model);
    const ref = relative(sprite.workspace, path);
    const revision = outcome.revision_requested
      ? { revision_requested: true, requested_changes: outcome.requested_changes }
      : {};
    sprite.artifact("file", {
      ref,
      metadata: {
        schema: String((step.request.text?.format as { name?: string } | undefined)?.name ?? "none"),
        role: options.role,
        entry_id: item.id,
        ...(step.review ? { review: step.review } : {}),
        ...revision,
      },
    });
    leave(true);
    sprite.emit("COMPLETED", { status: outcome.status, summary: outcome.summary, ...revision });
    return {
      status: outcome.status,
      entry_id: item.id,
      artifact: ref,
      summary: outcome.summary,
      revision_requested: outcome.revision_requested,
    };
  } catch (err) {
    leave(false);
    const e =
      err instanceof PmagentError
        ? err
        : new PmagentError("agent_failed", `the role agent failed: ${(err as Error).message}`);
    sprite.error(e.message, { code: e.code });
    throw e;
  }
}

/** The lane's `allowed_paths`; the config's default when the lane is not configured here. */
function allowedPathsOf(lane: string, project: Project | undefined): string[] {
  const [layer, name] = lane.split("/");
  const configured =
    project && layer !== undefined && name !== undefined ? findLane(project.config, layer, name) : undefined;
  return configured?.allowed_paths ?? LaneSchema.shape.allowed_paths.parse(undefined);
}

/**
 * The orchestrator's apply_patch and update_plan, carried out in the workspace within the lane's
 * allowed paths. Each change is an ARTIFACT event; a refused call is reported and its error goes
 * back to the model.
 */
function editTools(
  sprite: Sprite,
  item: WorkItem,
  lane: string,
  project: Project | undefined,
): NonNullable<RoleStepOptions["tools"]> {
  const allowedPaths = allowedPathsOf(lane, project);
  const ctx = {
    workspace: sprite.workspace,
    allowedPaths,
    entryId: item.id,
    planFile: join(ARTIFACT_DIR, `orchestrator-${safeName(item.id)}-plan.json`),
  };
  return {
    definitions: roleTools("orchestrator", allowedPaths),
    handler: (call: ToolCall) => {
      const result = runEditTool(call, ctx);
      const about = { tool: call.name, call_id: call.call_id, entry_id: item.id };
      if (!result.ok) {
        sprite.info(`${call.name} refused: ${result.output}`, {
          kind: "tool_refused",
          metadata: { ...about, code: result.code },
        });
      } else if (result.tool === "apply_patch") {
        for (const c of result.changes) {
          sprite.artifact("file", {
            ref: c.path,
            metadata: {
              ...about,
              change: c.type,
              ...(c.from ? { from: c.from } : {}),
              lines_before: c.lines_before,
              lines_after: c.lines_after,
            },
          });
        }
      } else {
        sprite.artifact("plan", {
          ref: result.ref,
          metadata: { ...about, steps: result.plan.plan.length, explanation: result.plan.explanation },
        });
      }
      return result.output;
    },
  };
}

/** An entry id as a file name part. */
function safeName(id: string): string {
  return id.replace(/[^A-Za-z0-9._-]/g, "_");
}

/**
 * The model client, with the key from the environment, or else from the supervisor: a sprite
 * holds no credentials, so under a supervisor it asks for the key with a blocking
 * FETCH_CREDENTIAL and waits; the resume file (0600) brings the value. Undefined: waiting.
 */
function modelClient(
  sprite: Sprite,
  resume: Resume | null,
  project: Project | undefined,
  env: NodeJS.ProcessEnv,
): ModelClient | undefined {
  if (resume) {
    const failed = resume.context?.error as { message?: unknown } | undefined;
    if (failed)
      throw new UnavailableError(
        "model_key_unavailable",
        `the supervisor could not hand over the model key (FETCH_CREDENTIAL): ${String(failed.message)}`,
      );
    const value = resume.inputs?.value;
    if (typeof value === "string" && value !== "") {
      const keyEnv = modelSettingsKeyEnv(project);
      return ModelClient.fromConfig(project?.config.model, { ...env, [keyEnv]: value });
    }
  }
  try {
    return ModelClient.fromConfig(project?.config.model, env);
  } catch (err) {
    // Run by hand (no supervisor to ask): the client's own message says how to set the key.
    if (!hasCode(err, "no_model_api_key") || !env.LATTICE_RUN_ID) throw err;
  }
  const name = modelSettingsKeyEnv(project);
  sprite.info(`no model key in the environment: asking the supervisor for ${name}`, { kind: "progress" });
  sprite.actionRequest("FETCH_CREDENTIAL", { name }, { blocking: true });
  sprite.waiting("FETCH_CREDENTIAL", sprite.checkpoint(), { name: "string", value: "string" });
  return undefined;
}

/** The variable the model key is read from (model.api_key_env). */
function modelSettingsKeyEnv(project: Project | undefined): string {
  return project?.config.model?.api_key_env ?? DEFAULT_KEY_ENV;
}

function readEntry(file: string): unknown {
  if (!existsSync(file)) {
    throw new UsageError(
      "entry_file_missing",
      `work item ${file} does not exist: run the agent under the supervisor (pmagent run --entry ID …), or set ${ENTRY_FILE_ENV} or --entry-file`,
    );
  }
  return parseJsonText(readFileSync(file, "utf8"), `work item ${file}`, "invalid_entry");
}

function laneOf(item: WorkItem, project: Project | undefined): string {
  if (item.to && project) {
    const { lane } = findRole(project.config, item.to);
    return `${lane.layer}/${lane.name}`;
  }
  throw new UsageError(
    "lane_unknown",
    `cannot tell the lane of entry ${item.id}: pass --lane LAYER/NAME, or run in a project whose lanes configure role ${item.to ?? "(the entry has no to)"}`,
  );
}

/** `payload.refs` as ledger lines: a list (runs and artifacts, as the supervisor posts them) or a map of name → refs. */
function refLines(refs: unknown[] | Record<string, unknown> | undefined): string[] {
  if (refs === undefined) return [];
  if (Array.isArray(refs)) return refs.map((r) => refText(r as z.output<typeof RefSchema>));
  // The supervisor's `artifacts` list repeats the references it also names by kind.
  return Object.entries(refs)
    .filter(
      ([name, value]) =>
        !(
          name === "artifacts" &&
          Array.isArray(value) &&
          value.every((v) => (v as { type?: unknown })?.type === "artifact")
        ),
    )
    .flatMap(([name, value]) =>
      (Array.isArray(value) ? value : [value]).map((v) => `${name}: ${typeof v === "string" ? v : JSON.stringify(v)}`),
    );
}

function refText(ref: z.output<typeof RefSchema>): string {
  if (typeof ref === "string") return ref;
  if (ref.type === "run" && ref.run_id) return `run ${ref.run_id}${ref.entry_id ? ` (entry ${ref.entry_id})` : ""}`;
  return ref.ref ?? ref.url ?? JSON.stringify(ref);
}

/** What the step means for the lane: the reviewer's level decides; an executor may report failure. */
function outcomeOf(step: RoleStepResult): RoleTaskOutcome {
  if (step.review) {
    const r = step.review;
    const changes = step.review.revision_requested ? requestedChanges(step.answer as ReviewerOutput) : [];
    return {
      status: r.result,
      summary: `review ${r.decision} at ${r.level}: ${r.reason}`,
      revision_requested: r.revision_requested,
      requested_changes: changes,
    };
  }
  const answer = step.answer as { summary?: string; answer?: string; status?: string };
  const summary = answer.summary ?? answer.answer ?? "";
  const failed = step.role === "executor" && answer.status === "failed";
  return {
    status: failed ? "failure" : "success",
    summary: failed ? `the executor reports failure: ${summary}` : summary,
    revision_requested: false,
    requested_changes: [],
  };
}

/** The review's concrete asks: its planning feedback and every claim it could not support. */
function requestedChanges(review: ReviewerOutput): string[] {
  const changes = [
    ...(review.planning_feedback ?? []).map((f) => `${f.issue}: ${f.suggestion}`),
    ...(review.claims ?? []).filter((c) => c.verdict !== "supported").map((c) => `${c.verdict} claim: ${c.claim}`),
  ];
  return changes.length > 0 ? changes : [review.summary];
}

function writeArtifact(workspace: string, item: WorkItem, step: RoleStepResult, model: string): string {
  const name = `${step.role}-${safeName(item.id)}.json`;
  const path = confinePath(workspace, join(ARTIFACT_DIR, name), "artifact path");
  const body = {
    entry_id: item.id,
    role: step.role,
    ledger: step.ledger,
    model,
    schema: (step.request.text?.format as { name?: string } | undefined)?.name ?? null,
    answer: step.answer,
    ...(step.review ? { review: step.review } : {}),
    usage: step.usage,
    response_ids: step.attempts.map((a) => a.response_id),
    ...(step.tool_calls ? { tool_calls: step.tool_calls } : {}),
    written_at: nowIso(),
  };
  writeFileAtomic(path, `${JSON.stringify(body, null, 2)}\n`);
  return path;
}
