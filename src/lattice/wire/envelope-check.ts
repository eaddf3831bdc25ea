/**
 * The event envelope's check compiled by hand: the schema of events.ts written out as plain tests
 * on the parsed value, for the ingest path (a zod parse per event cost more than the JSON parse).
 *
 * It answers only "certainly valid, and zod would give back the same event" (true) or "ask zod"
 * (false): it never refuses an event itself, so an invalid event's reason is always zod's, word for
 * word, and what it does not know by heart (a URL, `expected_inputs`, a defaulted field, the rare
 * ENVIRONMENT_PROPOSAL) goes to zod too. Kept beside the schema; a test runs both on the same
 * events, valid and not, and requires that this never says true where zod refuses.
 */
import { isIsoWithZone } from "../../core/index.js";
import { CHECKPOINT_ID, PROTOCOL_VERSION } from "./constants.js";

const ENVELOPE_KEYS = new Set(["protocol_version", "event_type", "sprite_id", "work_item_id", "timestamp", "payload"]);

type Obj = Record<string, unknown>;

const isObject = (v: unknown): v is Obj =>
  typeof v === "object" && v !== null && !Array.isArray(v) && Object.getPrototypeOf(v) === Object.prototype;
const text = (v: unknown): boolean => typeof v === "string" && v.length > 0;
const optString = (v: unknown): boolean => v === undefined || typeof v === "string";
const optRecord = (v: unknown): boolean => v === undefined || isObject(v);

const PAYLOAD_CHECKS: Record<string, (p: Obj) => boolean> = {
  INFO: (p) => text(p.message) && optString(p.kind) && optRecord(p.metadata),
  PHASE_STARTED: (p) => text(p.phase),
  PHASE_FINISHED: (p) => text(p.phase) && typeof p.success === "boolean",
  // Defaults (parameters, blocking) are zod's to apply.
  ACTION_REQUEST: (p) => text(p.action) && isObject(p.parameters) && typeof p.blocking === "boolean",
  // A URL is zod's to judge.
  ARTIFACT: (p) =>
    text(p.kind) &&
    (p.ref === undefined || p.ref === null || typeof p.ref === "string") &&
    (p.url === undefined || p.url === null) &&
    optRecord(p.metadata),
  WAITING: (p) =>
    text(p.reason) &&
    typeof p.checkpoint_id === "string" &&
    CHECKPOINT_ID.test(p.checkpoint_id) &&
    p.expected_inputs === undefined,
  // An outcome is zod's to judge (its pattern).
  COMPLETED: (p) =>
    (p.status === "success" || p.status === "failure") && optString(p.summary) && p.outcome === undefined,
  ERROR: (p) => text(p.message) && optRecord(p.details),
};

/**
 * True when `value` (a parsed event line) is a valid event whose zod parse would give back the
 * same content (no default to fill in): it can be used as it is. False: parse it with zod.
 */
export function envelopeValid(value: Obj): boolean {
  let keys = 0;
  for (const key in value) {
    if (!ENVELOPE_KEYS.has(key)) return false;
    keys++;
  }
  if (
    keys !== ENVELOPE_KEYS.size ||
    value.protocol_version !== PROTOCOL_VERSION ||
    !text(value.sprite_id) ||
    !text(value.work_item_id)
  )
    return false;
  const { timestamp, payload, event_type } = value;
  if (
    typeof timestamp !== "string" ||
    !isIsoWithZone(timestamp) ||
    !isObject(payload) ||
    typeof event_type !== "string"
  )
    return false;
  const check = Object.hasOwn(PAYLOAD_CHECKS, event_type) ? PAYLOAD_CHECKS[event_type] : undefined;
  return check !== undefined && check(payload);
}
