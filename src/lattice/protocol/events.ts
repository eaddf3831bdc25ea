/**
 * Wire format of the Lattice Communication Protocol v1: the event envelope, the nine event types
 * and their payload rules, and the resume file. The JSON Schemas in `schemas/lattice-*.schema.json`
 * are generated from these.
 *
 * The envelope is strict (the spec says "this exact structure"); payloads keep unknown fields so a
 * chatty sprite's extra detail is not a protocol error, and so an event's identity (the hash of its
 * canonical JSON) is the same whichever way it arrived.
 */
import { z } from "zod";
import { ISO_WITH_ZONE, isIsoWithZone } from "../../core/index.js";
import { INPUT_TYPE_HINT, parseInputType } from "./inputs.js";
// The zod-free part of the wire format (constants, the envelope check) lives in lattice/wire, so
// `pmagent emit` can load it without zod; protocol/index.ts re-exports it.
import { CHECKPOINT_ID, PROTOCOL_VERSION, type EventType } from "../wire/index.js";

/** Actions the spec names; the schema accepts any action name, the supervisor refuses unknown ones. */
export const KNOWN_ACTIONS = ["OPEN_PR", "POST_COMMENT", "LABEL_ISSUE", "NOTIFY_USER", "FETCH_CREDENTIAL"] as const;

export const ADJUSTMENT_TYPES = [
  "runtime_install",
  "runtime_version_adjust",
  "dependency_manager_switch",
  "add_preinstall_step",
  "adjust_smoke_command",
  "add_system_package",
  "enable_network_access",
  "escalate_to_human",
] as const;
export type AdjustmentType = (typeof ADJUSTMENT_TYPES)[number];

export const PROPOSAL_SCOPES = ["repo_specific", "global_candidate"] as const;

const text = z.string().min(1, "must be a non-empty string");
const record = z.record(z.string(), z.unknown());

const TIMESTAMP_HINT = "expected an ISO-8601 date-time with a zone, e.g. 2026-01-15T10:30:00Z";
export const Timestamp = z.string().regex(ISO_WITH_ZONE, TIMESTAMP_HINT).refine(isIsoWithZone, TIMESTAMP_HINT);

export const CheckpointId = z
  .string()
  .regex(CHECKPOINT_ID, "expected a checkpoint id like chk_abc123 (chk_ followed by letters, digits, '_' or '-')");

/** One `expected_inputs` type: string, integer, boolean, map or array<T>. */
export const InputTypeName = z
  .string()
  .superRefine((value, ctx) => {
    const parsed = parseInputType(value);
    if (!parsed.ok) ctx.addIssue({ code: "custom", message: `${parsed.error}; ${INPUT_TYPE_HINT}` });
  })
  .describe("string, integer, boolean, map or array<T> (T from the same list)");

export const ExpectedInputsSchema = z.record(z.string().min(1), InputTypeName);

export const InfoPayload = z.looseObject({
  message: text,
  /** progress, observation, assumption, note, or any free-form string. */
  kind: z.string().optional(),
  metadata: record.optional(),
});

export const PhaseStartedPayload = z.looseObject({ phase: text });

export const PhaseFinishedPayload = z.looseObject({ phase: text, success: z.boolean() });

export const ActionRequestPayload = z.looseObject({
  action: text,
  parameters: record.default({}),
  /** Blocking requests must be followed by a checkpoint and WAITING. */
  blocking: z.boolean().default(false),
});

export const ArtifactPayload = z.looseObject({
  /** branch, commit, file, pr_url, issue_url, … */
  kind: text,
  ref: z.string().nullable().optional(),
  url: z.url().nullable().optional(),
  metadata: record.optional(),
});

export const WaitingPayload = z.looseObject({
  reason: text,
  checkpoint_id: CheckpointId,
  expected_inputs: ExpectedInputsSchema.optional(),
});

export const CompletedPayload = z.looseObject({
  status: z.enum(["success", "failure"]),
  summary: z.string().optional(),
  /** pmagent's extension: the outcome a lane routes on (config `on_outcome`), e.g. `changes_requested`. */
  outcome: z
    .string()
    .regex(/^[a-z][a-z0-9_]*$/, "an outcome is a lowercase name, e.g. changes_requested")
    .optional(),
});

export const ErrorPayload = z.looseObject({ message: text, details: record.optional() });

export const EnvironmentProposalPayload = z.looseObject({
  observed_failure: z.looseObject({
    phase: text,
    exit_code: z.int(),
    stderr_hint: z.string(),
  }),
  suggested_adjustment: z.looseObject({
    type: z.enum(ADJUSTMENT_TYPES),
    details: record,
  }),
  confidence: z.number().min(0, "must be between 0.0 and 1.0").max(1, "must be between 0.0 and 1.0"),
  evidence: z.array(z.string()),
  scope: z.enum(PROPOSAL_SCOPES),
});

export const PAYLOAD_SCHEMAS = {
  INFO: InfoPayload,
  PHASE_STARTED: PhaseStartedPayload,
  PHASE_FINISHED: PhaseFinishedPayload,
  ACTION_REQUEST: ActionRequestPayload,
  ARTIFACT: ArtifactPayload,
  WAITING: WaitingPayload,
  COMPLETED: CompletedPayload,
  ERROR: ErrorPayload,
  ENVIRONMENT_PROPOSAL: EnvironmentProposalPayload,
} as const satisfies Record<EventType, z.ZodType>;

function envelope<T extends EventType>(type: T) {
  return z.strictObject({
    protocol_version: z.literal(PROTOCOL_VERSION),
    event_type: z.literal(type),
    sprite_id: text,
    /** Issue number, PR number or task id, as a string. */
    work_item_id: text,
    timestamp: Timestamp,
    payload: PAYLOAD_SCHEMAS[type],
  });
}

export const InfoEvent = envelope("INFO");
export const PhaseStartedEvent = envelope("PHASE_STARTED");
export const PhaseFinishedEvent = envelope("PHASE_FINISHED");
export const ActionRequestEvent = envelope("ACTION_REQUEST");
export const ArtifactEvent = envelope("ARTIFACT");
export const WaitingEvent = envelope("WAITING");
export const CompletedEvent = envelope("COMPLETED");
export const ErrorEvent = envelope("ERROR");
export const EnvironmentProposalEvent = envelope("ENVIRONMENT_PROPOSAL");

/** Any v1 event, discriminated by `event_type`. */
export const LatticeEventSchema = z.discriminatedUnion("event_type", [
  InfoEvent,
  PhaseStartedEvent,
  PhaseFinishedEvent,
  ActionRequestEvent,
  ArtifactEvent,
  WaitingEvent,
  CompletedEvent,
  ErrorEvent,
  EnvironmentProposalEvent,
]);

export type LatticeEvent = z.output<typeof LatticeEventSchema>;
export type LatticeEventInput = z.input<typeof LatticeEventSchema>;
export type PayloadOf<T extends EventType> = z.output<(typeof PAYLOAD_SCHEMAS)[T]>;
export type PayloadInputOf<T extends EventType> = z.input<(typeof PAYLOAD_SCHEMAS)[T]>;
export type EventOf<T extends EventType> = Extract<LatticeEvent, { event_type: T }>;

/** `.lattice/resume.json`, written by the supervisor before it relaunches a sprite. */
export const ResumeSchema = z.looseObject({
  work_item_id: text,
  checkpoint_id: CheckpointId,
  inputs: record.default({}),
  /** Free-form; pmagent's extension: a person's follow-up message to the sprite in `message` (see withFollowUp). */
  context: record
    .default({})
    .describe(
      "free-form context; `message`, when present, is a person's follow-up message to the sprite, given with the resume",
    ),
});
export type Resume = z.output<typeof ResumeSchema>;
export type ResumeInput = z.input<typeof ResumeSchema>;
