import type { z } from "zod";
import { jsonPath } from "../core/index.js";
import type { Config } from "../config/light/index.js";
import { findLane } from "../config/light/index.js";
import { kaiSchemas, plainRequest, type KaiRequest } from "./reports/index.js";

/** A request Kai can answer, or what is wrong with it (each note names the field and the fix). */
export type RequestCheck =
  { ok: true; request: KaiRequest } | { ok: false; request_id: string | null; notes: string[] };

function issueNote(issue: z.core.$ZodIssue): string {
  const at = jsonPath(issue.path);
  if (issue.code === "unrecognized_keys") {
    return issue.keys.map((k) => `${at}: unknown field "${k}" (kai_request_v1 does not define it)`).join("\n");
  }
  // A missing field: zod reports a wrong type, or for `type` (an enum) a value not among the choices.
  if (
    (issue.code === "invalid_type" || issue.code === "invalid_value") &&
    (issue as { input?: unknown }).input === undefined
  )
    return `${at}: required field is missing`;
  return `${at}: ${issue.message}`;
}

function requestIdOf(value: unknown): string | null {
  if (value !== null && typeof value === "object" && !Array.isArray(value)) {
    const id = (value as Record<string, unknown>).request_id;
    if (typeof id === "string" && id.length > 0) return id;
  }
  return null;
}

/** The projects a request may name: given, or read when a request names another project. */
export type Projects = readonly string[] | (() => Promise<readonly string[]>);

/**
 * Check a request against kai_request_v1 and against the repository it is sent to: the project
 * must be one living there (`projects`: the configured one, and those with a STATE document of
 * their own; a function is asked only for a request about another project, as reading them costs
 * a git process) and the lane a configured one (the config is the truth, not the spec's v1 example).
 * A plainly valid request is taken without the schema; any other is the schema's to judge (its
 * notes name each problem), which is loaded then.
 */
export async function checkRequest(
  value: unknown,
  config: Config,
  now: Date = new Date(),
  projects: Projects = [config.project_id],
): Promise<RequestCheck> {
  const request_id = requestIdOf(value);
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    return {
      ok: false,
      request_id,
      notes: [
        `$: expected a kai_request_v1 JSON object, got ${value === null ? "null" : Array.isArray(value) ? "an array" : typeof value}`,
      ],
    };
  }
  let request = plainRequest(value);
  if (request === null) {
    const parsed = (await kaiSchemas()).KaiRequestSchema.safeParse(value, { reportInput: true });
    if (!parsed.success) {
      return { ok: false, request_id, notes: parsed.error.issues.flatMap((i) => issueNote(i).split("\n")) };
    }
    request = parsed.data;
  }
  const notes: string[] = [];
  // The configured project is always known; the repository's others are read only when asked about.
  const others =
    request.project_id === config.project_id ? [] : typeof projects === "function" ? await projects() : projects;
  const known = [...new Set([config.project_id, ...others])];
  if (!known.includes(request.project_id)) {
    notes.push(
      known.length > 1
        ? `$.project_id: unknown project "${request.project_id}"; projects in this repository: ${known.map((p) => `"${p}"`).join(", ")}`
        : `$.project_id: unknown project "${request.project_id}"; this project is "${config.project_id}" (another project needs its STATE/<project_id>/current_state.md committed)`,
    );
  }
  if (!findLane(config, request.lane.layer, request.lane.name)) {
    const known = config.lanes.map((l) => `${l.layer}/${l.name}`).join(", ");
    notes.push(`$.lane: unknown lane ${request.lane.layer}/${request.lane.name}; configured lanes: ${known}`);
  }
  if (request.params.as_of !== undefined && Date.parse(request.params.as_of) > now.getTime()) {
    notes.push(
      `$.params.as_of: ${request.params.as_of} is in the future (now is ${now.toISOString()}); ask about the past or leave as_of out`,
    );
  }
  return notes.length > 0 ? { ok: false, request_id, notes } : { ok: true, request };
}

/** Parse request text (a file or stdin) and check it; invalid JSON is reported like any other error. */
export async function checkRequestText(
  text: string,
  config: Config,
  now: Date = new Date(),
  projects: Projects = [config.project_id],
): Promise<RequestCheck> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { ok: false, request_id: null, notes: [`the request is not valid JSON: ${(err as Error).message}`] };
  }
  return checkRequest(value, config, now, projects);
}
