import { isIsoWithZone } from "../../core/index.js";
import type { KaiRequest } from "./schema.js";

/**
 * The Kai-0 I/O spec v1's constants, and the request check that needs no zod: `pmagent kai status`
 * answers without loading zod or building the schemas (schema.ts), which only a request this check
 * does not take, and the server, load.
 */

export const KAI_VERSION = "0.1.0";
export const REQUEST_TYPES = ["lane_status", "what_changed"] as const;
export const TIME_WINDOW_DAYS = { min: 1, max: 365, default: 7 } as const;
export const MAX_HIGHLIGHTS = { min: 1, max: 50, default: 5 } as const;
const ACTOR_TYPES: readonly unknown[] = ["chatgpt", "human", "workflow"];

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => v !== null && typeof v === "object" && !Array.isArray(v);
/** Own keys only, each of them known, none undefined (an undefined value is left to the schema). */
const onlyKeys = (o: Obj, known: readonly string[]): boolean =>
  Object.keys(o).every((k) => known.includes(k) && o[k] !== undefined);
const text = (v: unknown): v is string => typeof v === "string" && v.length > 0;
const within = (v: unknown, range: { min: number; max: number }): v is number =>
  Number.isInteger(v) && (v as number) >= range.min && (v as number) <= range.max;

/**
 * The request as kai_request_v1's schema gives it (defaults filled in), for a request that is
 * plainly valid; null otherwise, and the schema then decides and says what is wrong. It takes
 * nothing the schema refuses (test/kai/request.test.ts holds the two to the same answers).
 */
export function plainRequest(value: unknown): KaiRequest | null {
  if (!isObject(value) || !onlyKeys(value, ["version", "request_id", "from", "project_id", "type", "lane", "params"]))
    return null;
  const { version, request_id, from, project_id, type, lane, params = {} } = value;
  if (version !== "kai_request_v1" || !text(request_id) || !text(project_id)) return null;
  if (!(REQUEST_TYPES as readonly unknown[]).includes(type)) return null;
  if (!isObject(from) || !onlyKeys(from, ["actor_type", "actor_id"]) || !ACTOR_TYPES.includes(from.actor_type))
    return null;
  if (from.actor_id !== undefined && typeof from.actor_id !== "string") return null;
  if (!isObject(lane) || !onlyKeys(lane, ["layer", "name"]) || !text(lane.layer) || !text(lane.name)) return null;
  if (!isObject(params) || !onlyKeys(params, ["time_window_days", "max_highlights", "as_of"])) return null;
  const { time_window_days = TIME_WINDOW_DAYS.default, max_highlights = MAX_HIGHLIGHTS.default, as_of } = params;
  if (!within(time_window_days, TIME_WINDOW_DAYS) || !within(max_highlights, MAX_HIGHLIGHTS)) return null;
  if (as_of !== undefined && (typeof as_of !== "string" || !isIsoWithZone(as_of))) return null;
  return {
    version,
    request_id,
    from: {
      actor_type: from.actor_type as KaiRequest["from"]["actor_type"],
      ...(from.actor_id === undefined ? {} : { actor_id: from.actor_id }),
    },
    project_id,
    type: type as KaiRequest["type"],
    lane: { layer: lane.layer, name: lane.name },
    params: { time_window_days, max_highlights, ...(as_of === undefined ? {} : { as_of }) },
  };
}
