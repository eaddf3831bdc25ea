/**
 * `pmagent emit`'s flags and how they make a payload: shared by the command (emit.ts) and its
 * fast path (emit-fast.ts), so both read a command line the same way. No zod and no commander here.
 */
import { parseJsonText, UsageError } from "../core/index.js";
import { EVENT_TYPES, isEventType, type EventType } from "../lattice/wire/index.js";

/** A field flag: which event types take it and where its value goes in their payload. */
export interface FieldFlag {
  flag: string;
  /** commander's camelCase key. */
  key: string;
  paths: Partial<Record<EventType, string[]>>;
}

export const FLAGS: FieldFlag[] = [
  { flag: "--message", key: "message", paths: { INFO: ["message"], ERROR: ["message"] } },
  { flag: "--kind", key: "kind", paths: { INFO: ["kind"], ARTIFACT: ["kind"] } },
  { flag: "--metadata-json", key: "metadataJson", paths: { INFO: ["metadata"], ARTIFACT: ["metadata"] } },
  {
    flag: "--phase",
    key: "phase",
    paths: { PHASE_STARTED: ["phase"], PHASE_FINISHED: ["phase"], ENVIRONMENT_PROPOSAL: ["observed_failure", "phase"] },
  },
  { flag: "--success", key: "success", paths: { PHASE_FINISHED: ["success"] } },
  { flag: "--failure", key: "failure", paths: { PHASE_FINISHED: ["success"] } },
  { flag: "--action", key: "action", paths: { ACTION_REQUEST: ["action"] } },
  { flag: "--param", key: "param", paths: { ACTION_REQUEST: ["parameters"] } },
  { flag: "--params-json", key: "paramsJson", paths: { ACTION_REQUEST: ["parameters"] } },
  { flag: "--blocking", key: "blocking", paths: { ACTION_REQUEST: ["blocking"] } },
  { flag: "--ref", key: "ref", paths: { ARTIFACT: ["ref"] } },
  { flag: "--url", key: "url", paths: { ARTIFACT: ["url"] } },
  { flag: "--reason", key: "reason", paths: { WAITING: ["reason"] } },
  { flag: "--checkpoint", key: "checkpoint", paths: { WAITING: ["checkpoint_id"] } },
  { flag: "--expect", key: "expect", paths: { WAITING: ["expected_inputs"] } },
  { flag: "--status", key: "status", paths: { COMPLETED: ["status"] } },
  { flag: "--summary", key: "summary", paths: { COMPLETED: ["summary"] } },
  { flag: "--outcome", key: "outcome", paths: { COMPLETED: ["outcome"] } },
  {
    flag: "--details-json",
    key: "detailsJson",
    paths: { ERROR: ["details"], ENVIRONMENT_PROPOSAL: ["suggested_adjustment", "details"] },
  },
  { flag: "--exit-code", key: "exitCode", paths: { ENVIRONMENT_PROPOSAL: ["observed_failure", "exit_code"] } },
  { flag: "--stderr-hint", key: "stderrHint", paths: { ENVIRONMENT_PROPOSAL: ["observed_failure", "stderr_hint"] } },
  { flag: "--adjustment", key: "adjustment", paths: { ENVIRONMENT_PROPOSAL: ["suggested_adjustment", "type"] } },
  { flag: "--confidence", key: "confidence", paths: { ENVIRONMENT_PROPOSAL: ["confidence"] } },
  { flag: "--evidence", key: "evidence", paths: { ENVIRONMENT_PROPOSAL: ["evidence"] } },
  { flag: "--scope", key: "scope", paths: { ENVIRONMENT_PROPOSAL: ["scope"] } },
];

export type Opts = Record<string, unknown> & { payloadJson?: string; payloadFile?: string };

export const collect = (value: string, previous: string[]) => [...previous, value];

export function given(opts: Opts, key: string): boolean {
  const v = opts[key];
  return Array.isArray(v) ? v.length > 0 : v !== undefined;
}

/** `TYPE` as the spec spells it; `info`, `phase-started` and `phase_started` are accepted too. */
export function eventTypeArg(value: string): EventType {
  const t = value.toUpperCase().replace(/-/g, "_");
  if (!isEventType(t))
    throw new UsageError(
      "invalid_event_type",
      `unknown event type "${value}" (expected one of ${EVENT_TYPES.join(", ")})`,
    );
  return t;
}

export function jsonObject(text: string, flag: string): Record<string, unknown> {
  const value = parseJsonText(text, flag, "invalid_option");
  if (value === null || typeof value !== "object" || Array.isArray(value))
    throw new UsageError(
      "invalid_option",
      `${flag} must be a JSON object, got ${Array.isArray(value) ? "an array" : JSON.stringify(value)}`,
    );
  return value as Record<string, unknown>;
}

/** `k=v` pairs (repeatable flags) into an object; the key must be non-empty. */
function pairs(values: string[], flag: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const v of values) {
    const eq = v.indexOf("=");
    if (eq <= 0) throw new UsageError("invalid_option", `${flag} expects KEY=VALUE, got "${v}"`);
    out[v.slice(0, eq)] = v.slice(eq + 1);
  }
  return out;
}

function flagValue(f: FieldFlag, opts: Opts): unknown {
  const v = opts[f.key];
  switch (f.flag) {
    case "--metadata-json":
    case "--params-json":
    case "--details-json":
      return jsonObject(v as string, f.flag);
    case "--param":
      return pairs(v as string[], f.flag);
    case "--expect":
      return pairs(v as string[], f.flag);
    case "--failure":
      return false;
    case "--confidence": {
      const n = Number(v);
      if ((v as string).trim() === "" || Number.isNaN(n))
        throw new UsageError("invalid_option", `--confidence expects a number from 0.0 to 1.0, got "${v as string}"`);
      return n;
    }
    default:
      return v;
  }
}

function setPath(target: Record<string, unknown>, path: string[], value: unknown): void {
  let node = target;
  for (const key of path.slice(0, -1)) node = (node[key] ??= {}) as Record<string, unknown>;
  node[path[path.length - 1]!] = value;
}

/** The payload the field flags make, refusing flags the type does not take. */
export function payloadFromFlags(type: EventType, opts: Opts): Record<string, unknown> {
  const used = FLAGS.filter((f) => given(opts, f.key));
  const payload: Record<string, unknown> = {};
  if (given(opts, "success") && given(opts, "failure"))
    throw new UsageError("invalid_option", "give --success or --failure, not both");
  if (given(opts, "param") && given(opts, "paramsJson"))
    throw new UsageError("invalid_option", "give --param or --params-json, not both");
  for (const f of used) {
    const path = f.paths[type];
    if (!path) {
      const takers = Object.keys(f.paths).join(", ");
      throw new UsageError("invalid_option", `${f.flag} does not apply to ${type} (it is for ${takers})`);
    }
    setPath(payload, path, flagValue(f, opts));
  }
  return payload;
}
