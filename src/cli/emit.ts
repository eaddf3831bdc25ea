import type { Command } from "commander";
import { formatZodIssues, jsonPath, parseJsonText, UsageError } from "../core/index.js";
import { EVENT_TYPES, isEventType, PAYLOAD_SCHEMAS, Sprite, type EventType } from "../lattice/sprite/index.js";
import { intOption, readInput } from "./output.js";

/** A field flag: which event types take it and where its value goes in their payload. */
interface FieldFlag {
  flag: string;
  /** commander's camelCase key. */
  key: string;
  paths: Partial<Record<EventType, string[]>>;
}

const FLAGS: FieldFlag[] = [
  { flag: "--message", key: "message", paths: { INFO: ["message"], ERROR: ["message"] } },
  { flag: "--kind", key: "kind", paths: { INFO: ["kind"], ARTIFACT: ["kind"] } },
  { flag: "--metadata-json", key: "metadataJson", paths: { INFO: ["metadata"], ARTIFACT: ["metadata"] } },
  { flag: "--phase", key: "phase", paths: { PHASE_STARTED: ["phase"], PHASE_FINISHED: ["phase"], ENVIRONMENT_PROPOSAL: ["observed_failure", "phase"] } },
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
  { flag: "--details-json", key: "detailsJson", paths: { ERROR: ["details"], ENVIRONMENT_PROPOSAL: ["suggested_adjustment", "details"] } },
  { flag: "--exit-code", key: "exitCode", paths: { ENVIRONMENT_PROPOSAL: ["observed_failure", "exit_code"] } },
  { flag: "--stderr-hint", key: "stderrHint", paths: { ENVIRONMENT_PROPOSAL: ["observed_failure", "stderr_hint"] } },
  { flag: "--adjustment", key: "adjustment", paths: { ENVIRONMENT_PROPOSAL: ["suggested_adjustment", "type"] } },
  { flag: "--confidence", key: "confidence", paths: { ENVIRONMENT_PROPOSAL: ["confidence"] } },
  { flag: "--evidence", key: "evidence", paths: { ENVIRONMENT_PROPOSAL: ["evidence"] } },
  { flag: "--scope", key: "scope", paths: { ENVIRONMENT_PROPOSAL: ["scope"] } },
];

type Opts = Record<string, unknown> & { payloadJson?: string; payloadFile?: string };

const collect = (value: string, previous: string[]) => [...previous, value];

function given(opts: Opts, key: string): boolean {
  const v = opts[key];
  return Array.isArray(v) ? v.length > 0 : v !== undefined;
}

/** `TYPE` as the spec spells it; `info`, `phase-started` and `phase_started` are accepted too. */
export function eventTypeArg(value: string): EventType {
  const t = value.toUpperCase().replace(/-/g, "_");
  if (!isEventType(t)) throw new UsageError("invalid_event_type", `unknown event type "${value}" (expected one of ${EVENT_TYPES.join(", ")})`);
  return t;
}

function jsonObject(text: string, flag: string): Record<string, unknown> {
  const value = parseJsonText(text, flag, "invalid_option");
  if (value === null || typeof value !== "object" || Array.isArray(value)) throw new UsageError("invalid_option", `${flag} must be a JSON object, got ${Array.isArray(value) ? "an array" : JSON.stringify(value)}`);
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
      if ((v as string).trim() === "" || Number.isNaN(n)) throw new UsageError("invalid_option", `--confidence expects a number from 0.0 to 1.0, got "${v as string}"`);
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

/** Build the payload from the field flags, refusing flags the type does not take. */
async function buildPayload(type: EventType, opts: Opts): Promise<Record<string, unknown>> {
  const used = FLAGS.filter((f) => given(opts, f.key));
  if (opts.payloadJson !== undefined || opts.payloadFile !== undefined) {
    if (opts.payloadJson !== undefined && opts.payloadFile !== undefined) throw new UsageError("invalid_option", "give --payload-json or --payload-file, not both");
    if (used.length > 0) throw new UsageError("invalid_option", `${used.map((f) => f.flag).join(", ")} cannot be combined with --payload-json/--payload-file (put the field in the payload)`);
    const source = opts.payloadJson !== undefined ? "--payload-json" : `--payload-file ${opts.payloadFile}`;
    const text = opts.payloadJson ?? (await readInput(opts.payloadFile!));
    return jsonObject(text, source);
  }
  const payload: Record<string, unknown> = {};
  if (given(opts, "success") && given(opts, "failure")) throw new UsageError("invalid_option", "give --success or --failure, not both");
  if (given(opts, "param") && given(opts, "paramsJson")) throw new UsageError("invalid_option", "give --param or --params-json, not both");
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

/** Name the flag that sets a payload path, so the message says what to pass. */
function flagFor(type: EventType, path: ReadonlyArray<PropertyKey>): string | undefined {
  const p = path.map(String).join(".");
  return FLAGS.find((f) => {
    const fp = f.paths[type]?.join(".");
    return fp !== undefined && (p === fp || p.startsWith(`${fp}.`)) && f.flag !== "--failure" && f.flag !== "--params-json";
  })?.flag;
}

const EXAMPLES = `
Examples (a shell sprite):
  pmagent emit INFO --message "Running test suite" --kind progress
  pmagent emit ACTION_REQUEST --action OPEN_PR --param title="Fix cache" --param head=sprite/fix-cache --blocking
  chk=$(pmagent checkpoint create)
  pmagent emit WAITING --reason PR_REVIEW --checkpoint "$chk" --expect approved=boolean --expect "comments=array<string>"
  pmagent emit COMPLETED --status success --summary "Implemented cache invalidation"`;

export function registerEmit(program: Command): void {
  program
    .command("emit")
    .description("emit a Lattice event from a sprite: print it on stdout with the LATTICE_EVENT prefix and append it to $LATTICE_WORKSPACE/.lattice/outbox.jsonl (uses LATTICE_SPRITE_ID, LATTICE_WORK_ITEM_ID)")
    .argument("<type>", `event type: ${EVENT_TYPES.join(", ")}`, eventTypeArg)
    .option("--message <text>", "INFO, ERROR: the message")
    .option("--kind <kind>", "INFO: progress|observation|assumption|note|…; ARTIFACT: branch|commit|file|pr_url|issue_url|…")
    .option("--metadata-json <json>", "INFO, ARTIFACT: metadata object")
    .option("--phase <name>", "PHASE_STARTED, PHASE_FINISHED; ENVIRONMENT_PROPOSAL: the failing phase")
    .option("--success", "PHASE_FINISHED: the phase succeeded")
    .option("--failure", "PHASE_FINISHED: the phase failed")
    .option("--action <name>", "ACTION_REQUEST: OPEN_PR, POST_COMMENT, LABEL_ISSUE, NOTIFY_USER, FETCH_CREDENTIAL")
    .option("--param <key=value>", "ACTION_REQUEST: a parameter (repeatable)", collect, [])
    .option("--params-json <json>", "ACTION_REQUEST: all parameters as a JSON object")
    .option("--blocking", "ACTION_REQUEST: you need the result (follow with checkpoint create and WAITING)")
    .option("--ref <ref>", "ARTIFACT: branch, SHA, file path or PR number")
    .option("--url <url>", "ARTIFACT: URL")
    .option("--reason <text>", "WAITING: why you are waiting")
    .option("--checkpoint <id>", "WAITING: the checkpoint you created (pmagent checkpoint create)")
    .option("--expect <key=type>", "WAITING: an expected input, type string|integer|boolean|map|array<T> (repeatable)", collect, [])
    .option("--status <status>", "COMPLETED: success or failure")
    .option("--summary <text>", "COMPLETED: summary")
    .option("--outcome <name>", "COMPLETED: the outcome the lane routes on (e.g. approved, changes_requested; config on_outcome)")
    .option("--details-json <json>", "ERROR: details object; ENVIRONMENT_PROPOSAL: the adjustment's details")
    .option("--exit-code <n>", "ENVIRONMENT_PROPOSAL: exit code of the failure", intOption("--exit-code"))
    .option("--stderr-hint <text>", "ENVIRONMENT_PROPOSAL: the telling stderr line")
    .option("--adjustment <type>", "ENVIRONMENT_PROPOSAL: runtime_install, runtime_version_adjust, …")
    .option("--confidence <0..1>", "ENVIRONMENT_PROPOSAL: confidence from 0.0 to 1.0")
    .option("--evidence <text>", "ENVIRONMENT_PROPOSAL: a piece of evidence (repeatable)", collect, [])
    .option("--scope <scope>", "ENVIRONMENT_PROPOSAL: repo_specific or global_candidate")
    .option("--payload-json <json>", "the whole payload as JSON, instead of the field flags")
    .option("--payload-file <file>", "read the whole payload from FILE (- for stdin)")
    .addHelpText("after", EXAMPLES)
    .action(async (type: EventType, opts: Opts) => {
      const payload = await buildPayload(type, opts);
      const fromFlags = opts.payloadJson === undefined && opts.payloadFile === undefined;
      const checked = PAYLOAD_SCHEMAS[type].safeParse(payload);
      if (!checked.success) {
        const issues = checked.error.issues.map((i) => {
          // Flag hints only help when the payload came from the field flags.
          const flag = fromFlags ? flagFor(type, i.path) : undefined;
          const missing = i.code === "invalid_type" && i.message.endsWith("received undefined");
          return `${jsonPath(i.path).replace(/^\$/, "payload")}${flag ? ` (${flag})` : ""}: ${missing ? `required (${i.message.replace(/^Invalid input: (.*), received undefined$/, "$1")})` : i.message}`;
        });
        throw new UsageError("invalid_event", `${type} event is invalid:\n  ${issues.join("\n  ")}`, { issues: formatZodIssues(checked.error) });
      }
      new Sprite().emit(type, payload as never);
    });
}
