import type { Command } from "./commander.js";
import { formatZodIssues, jsonPath, UsageError } from "../core/index.js";
import { EVENT_TYPES, PAYLOAD_SCHEMAS, Sprite, type EventType } from "../lattice/sprite/index.js";
import { collect, eventTypeArg, FLAGS, given, jsonObject, payloadFromFlags, type Opts } from "./emit-flags.js";
import { intOption, readInput } from "./output.js";

export { eventTypeArg };

/** Build the payload from the field flags, refusing flags the type does not take. */
async function buildPayload(type: EventType, opts: Opts): Promise<Record<string, unknown>> {
  const used = FLAGS.filter((f) => given(opts, f.key));
  if (opts.payloadJson !== undefined || opts.payloadFile !== undefined) {
    if (opts.payloadJson !== undefined && opts.payloadFile !== undefined)
      throw new UsageError("invalid_option", "give --payload-json or --payload-file, not both");
    if (used.length > 0)
      throw new UsageError(
        "invalid_option",
        `${used.map((f) => f.flag).join(", ")} cannot be combined with --payload-json/--payload-file (put the field in the payload)`,
      );
    const source = opts.payloadJson !== undefined ? "--payload-json" : `--payload-file ${opts.payloadFile}`;
    const text = opts.payloadJson ?? (await readInput(opts.payloadFile!));
    return jsonObject(text, source);
  }
  return payloadFromFlags(type, opts);
}

/** Name the flag that sets a payload path, so the message says what to pass. */
function flagFor(type: EventType, path: ReadonlyArray<PropertyKey>): string | undefined {
  const p = path.map(String).join(".");
  return FLAGS.find((f) => {
    const fp = f.paths[type]?.join(".");
    return (
      fp !== undefined && (p === fp || p.startsWith(`${fp}.`)) && f.flag !== "--failure" && f.flag !== "--params-json"
    );
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
    .description(
      "emit a Lattice event from a sprite: print it on stdout with the LATTICE_EVENT prefix and append it to $LATTICE_WORKSPACE/.lattice/outbox.jsonl (uses LATTICE_SPRITE_ID, LATTICE_WORK_ITEM_ID)",
    )
    .argument("<type>", `event type: ${EVENT_TYPES.join(", ")}`, eventTypeArg)
    .option("--message <text>", "INFO, ERROR: the message")
    .option(
      "--kind <kind>",
      "INFO: progress|observation|assumption|note|…; ARTIFACT: branch|commit|file|pr_url|issue_url|…",
    )
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
    .option(
      "--expect <key=type>",
      "WAITING: an expected input, type string|integer|boolean|map|array<T> (repeatable)",
      collect,
      [],
    )
    .option("--status <status>", "COMPLETED: success or failure")
    .option("--summary <text>", "COMPLETED: summary")
    .option(
      "--outcome <name>",
      "COMPLETED: the outcome the lane routes on (e.g. approved, changes_requested; config on_outcome)",
    )
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
        throw new UsageError("invalid_event", `${type} event is invalid:\n  ${issues.join("\n  ")}`, {
          issues: formatZodIssues(checked.error),
        });
      }
      new Sprite().emit(type, payload as never);
    });
}
