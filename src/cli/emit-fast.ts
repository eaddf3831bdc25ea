/**
 * `pmagent emit`'s fast path, tried before commander and the command groups load: a shell sprite
 * emits once per event, and the full command (commander, zod, the sprite SDK) cost several times a
 * bare node start. It reads the common command line (TYPE and field flags, each value in its own
 * argument), checks the event with the hand-compiled envelope check, appends it to the outbox and
 * prints it: the same line, byte for byte, as the full command.
 *
 * Anything else — help, `--flag=value`, a value starting with "-", --payload-json/--payload-file,
 * --exit-code, a missing LATTICE_* variable, a payload the check leaves to zod, any error — returns
 * undefined and the full command runs, which refuses with its own message. Nothing is written
 * before the event is known to be valid.
 */
import { nowIso, Redactor, secretsFromEnv } from "../core/index.js";
import {
  appendOutbox,
  envelopeValid,
  EVENT_PREFIX,
  outboxPath,
  PAYLOAD_KEYS,
  PROTOCOL_VERSION,
  type EventType,
} from "../lattice/wire/index.js";
import { eventTypeArg, FLAGS, payloadFromFlags, type Opts } from "./emit-flags.js";

const BOOLEAN_FLAGS = new Set(["--success", "--failure", "--blocking"]);
const REPEATABLE_FLAGS = new Set(["--param", "--expect", "--evidence"]);
/** Flags whose value commander turns into something else first (intOption): the full command's. */
const NOT_HERE = new Set(["--exit-code"]);
/** The sprite SDK's default when LATTICE_WORKSPACE is unset (lattice/sprite). */
const DEFAULT_WORKSPACE = "/workspace";

/** TYPE and the field flags as commander would give them to the command, or undefined. */
function readArgv(argv: readonly string[]): { type: EventType; opts: Opts } | undefined {
  let type: EventType;
  try {
    type = eventTypeArg(argv[0] ?? "");
  } catch {
    return undefined;
  }
  const opts: Opts = {};
  for (const f of FLAGS) if (REPEATABLE_FLAGS.has(f.flag)) opts[f.key] = [];
  for (let i = 1; i < argv.length; i++) {
    const flag = FLAGS.find((f) => f.flag === argv[i]);
    if (!flag || NOT_HERE.has(flag.flag)) return undefined;
    if (BOOLEAN_FLAGS.has(flag.flag)) {
      opts[flag.key] = true;
      continue;
    }
    const value = argv[++i];
    if (value === undefined || value.startsWith("-")) return undefined;
    if (REPEATABLE_FLAGS.has(flag.flag)) (opts[flag.key] as string[]).push(value);
    // A "__proto__" key would be set differently by zod's record parse: leave such JSON to zod.
    else if (flag.flag.endsWith("-json") && value.includes("__proto__")) return undefined;
    else opts[flag.key] = value; // the last one wins, as with commander
  }
  return { type, opts };
}

/** The payload's fields in its schema's order (zod's output order), or undefined if it has others. */
function inSchemaOrder(type: EventType, payload: Record<string, unknown>): Record<string, unknown> | undefined {
  const keys = PAYLOAD_KEYS[type];
  if (Object.keys(payload).some((k) => !keys.includes(k))) return undefined;
  const out: Record<string, unknown> = {};
  for (const k of keys) if (Object.hasOwn(payload, k)) out[k] = payload[k];
  return out;
}

/** The exit code when the fast path emitted the event; undefined: run the full command. */
export async function emitFast(
  argv: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<number | undefined> {
  const read = readArgv(argv);
  const spriteId = env.LATTICE_SPRITE_ID;
  const workItemId = env.LATTICE_WORK_ITEM_ID;
  if (!read || !spriteId || !workItemId) return undefined;
  let built: Record<string, unknown>;
  try {
    built = payloadFromFlags(read.type, read.opts);
  } catch {
    return undefined;
  }
  const payload = inSchemaOrder(read.type, built);
  if (!payload) return undefined;
  const event = {
    protocol_version: PROTOCOL_VERSION,
    event_type: read.type,
    sprite_id: spriteId,
    work_item_id: workItemId,
    timestamp: nowIso(),
    payload,
  };
  if (!envelopeValid(event)) return undefined;
  // As the SDK does: the payload is checked as given, then secrets of this environment are masked.
  const secrets = secretsFromEnv(env);
  const written = secrets.length > 0 ? { ...event, payload: new Redactor(secrets).redactValue(payload) } : event;
  if (written !== event && !envelopeValid(written)) return undefined;
  try {
    appendOutbox(outboxPath(env.LATTICE_WORKSPACE || DEFAULT_WORKSPACE), written);
  } catch (err) {
    // Reported as the full command reports it (it would fail the same way).
    const { reportError } = await import("./program.js");
    return await reportError(err, ["emit", ...argv]);
  }
  process.stdout.write(`${EVENT_PREFIX}${JSON.stringify(written)}\n`);
  return 0;
}
