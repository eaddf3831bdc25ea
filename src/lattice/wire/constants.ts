/**
 * The wire format's constants: the protocol version, the stdout prefix, the event types, the
 * checkpoint id alphabet and the outbox's place in a workspace. No zod here (see index.ts).
 */
import { join } from "node:path";

export const PROTOCOL_VERSION = "v1";
/** Prefix of an event line on stdout (the space is part of it). */
export const EVENT_PREFIX = "LATTICE_EVENT ";

export const EVENT_TYPES = [
  "INFO",
  "PHASE_STARTED",
  "PHASE_FINISHED",
  "ACTION_REQUEST",
  "ARTIFACT",
  "WAITING",
  "COMPLETED",
  "ERROR",
  "ENVIRONMENT_PROPOSAL",
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export function isEventType(value: string): value is EventType {
  return (EVENT_TYPES as readonly string[]).includes(value);
}

/**
 * Each payload's known fields in the order of its zod schema (protocol/events.ts): a zod parse
 * gives them back in this order, so a payload checked without zod is written in it too (a test
 * holds this table to the schemas).
 */
export const PAYLOAD_KEYS: Readonly<Record<EventType, readonly string[]>> = {
  INFO: ["message", "kind", "metadata"],
  PHASE_STARTED: ["phase"],
  PHASE_FINISHED: ["phase", "success"],
  ACTION_REQUEST: ["action", "parameters", "blocking"],
  ARTIFACT: ["kind", "ref", "url", "metadata"],
  WAITING: ["reason", "checkpoint_id", "expected_inputs"],
  COMPLETED: ["status", "summary", "outcome"],
  ERROR: ["message", "details"],
  ENVIRONMENT_PROPOSAL: ["observed_failure", "suggested_adjustment", "confidence", "evidence", "scope"],
};

/** Checkpoint ids are file names in the checkpoint directory, so their alphabet is closed. */
export const CHECKPOINT_ID = /^chk_[A-Za-z0-9_-]{1,128}$/;

export const LATTICE_DIR = ".lattice";
export const OUTBOX_FILE = "outbox.jsonl";

export function latticeDir(workspace: string): string {
  return join(workspace, LATTICE_DIR);
}

export function outboxPath(workspace: string): string {
  return join(workspace, LATTICE_DIR, OUTBOX_FILE);
}
