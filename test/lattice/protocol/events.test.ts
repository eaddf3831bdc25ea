import { describe, expect, it } from "vitest";
import {
  LatticeEventSchema,
  PAYLOAD_SCHEMAS,
  ResumeSchema,
  parseEventJson,
  EVENT_TYPES,
  ADJUSTMENT_TYPES,
} from "../../../src/lattice/index.js";
import { SPEC_ENVELOPE_TEMPLATE, SPEC_EVENTS, SPEC_RESUME, SPEC_STDOUT_LINE } from "../fixtures/spec-examples.js";

const base = {
  protocol_version: "v1",
  sprite_id: "sprite-42",
  work_item_id: "issue-17",
  timestamp: "2026-01-15T10:30:00Z",
};

function reason(value: unknown): string {
  const r = parseEventJson(JSON.stringify(value));
  if (r.ok) throw new Error("expected the event to be refused");
  return r.reason;
}

describe("protocol schemas", () => {
  it("accept every example event of the spec, verbatim", () => {
    expect(SPEC_EVENTS.map((e) => e.type)).toEqual([
      "INFO",
      "PHASE_STARTED",
      "PHASE_FINISHED",
      "ACTION_REQUEST",
      "ACTION_REQUEST",
      "ARTIFACT",
      "WAITING",
      "COMPLETED",
      "ERROR",
      "ENVIRONMENT_PROPOSAL",
    ]);
    for (const example of SPEC_EVENTS) {
      const r = parseEventJson(example.text);
      expect(r.ok, `${example.type}: ${r.ok ? "" : r.reason}`).toBe(true);
      if (r.ok) expect(r.event.event_type).toBe(example.type);
    }
    const line = parseEventJson(SPEC_STDOUT_LINE.slice("LATTICE_EVENT ".length));
    expect(line.ok).toBe(true);
  });

  it("cover all nine event types and the eight adjustment types", () => {
    expect(EVENT_TYPES).toHaveLength(9);
    expect(Object.keys(PAYLOAD_SCHEMAS).sort()).toEqual([...EVENT_TYPES].sort());
    expect(ADJUSTMENT_TYPES).toHaveLength(8);
    for (const type of ADJUSTMENT_TYPES) {
      expect(
        PAYLOAD_SCHEMAS.ENVIRONMENT_PROPOSAL.safeParse({
          observed_failure: { phase: "p", exit_code: 1, stderr_hint: "" },
          suggested_adjustment: { type, details: {} },
          confidence: 0,
          evidence: [],
          scope: "global_candidate",
        }).success,
      ).toBe(true);
    }
  });

  it("refuse the envelope template with its placeholders, naming the discriminator", () => {
    expect(reason(JSON.parse(SPEC_ENVELOPE_TEMPLATE))).toContain(
      "$.event_type: Invalid discriminator value. Expected 'INFO' | 'PHASE_STARTED'",
    );
  });

  it("accept the spec's resume payload", () => {
    const r = ResumeSchema.parse(JSON.parse(SPEC_RESUME));
    expect(r).toMatchObject({ checkpoint_id: "chk_abc123", inputs: { approved: true } });
  });

  it("default ACTION_REQUEST parameters and blocking", () => {
    const r = LatticeEventSchema.parse({ ...base, event_type: "ACTION_REQUEST", payload: { action: "NOTIFY_USER" } });
    expect(r.payload).toEqual({ action: "NOTIFY_USER", parameters: {}, blocking: false });
  });

  it("keep unknown payload fields (so identity does not depend on the reader)", () => {
    const r = LatticeEventSchema.parse({ ...base, event_type: "INFO", payload: { message: "m", extra: 1 } });
    expect(r.payload).toEqual({ message: "m", extra: 1 });
  });

  const refusals: Array<[string, unknown, string]> = [
    [
      "an unknown envelope field",
      { ...base, event_type: "INFO", payload: { message: "m" }, extra: true },
      'Unrecognized key: "extra"',
    ],
    [
      "protocol v2",
      { ...base, protocol_version: "v2", event_type: "INFO", payload: { message: "m" } },
      '$.protocol_version: Invalid input: expected "v1"',
    ],
    [
      "a timestamp without a zone",
      { ...base, timestamp: "2026-01-15T10:30:00", event_type: "INFO", payload: { message: "m" } },
      "$.timestamp: expected an ISO-8601 date-time with a zone",
    ],
    [
      "a numeric work item",
      { ...base, work_item_id: 17, event_type: "INFO", payload: { message: "m" } },
      "$.work_item_id: Invalid input: expected string, received number",
    ],
    [
      "an empty sprite id",
      { ...base, sprite_id: "", event_type: "INFO", payload: { message: "m" } },
      "$.sprite_id: must be a non-empty string",
    ],
    [
      "INFO without message",
      { ...base, event_type: "INFO", payload: { kind: "note" } },
      "$.payload.message: Invalid input: expected string, received undefined",
    ],
    ["PHASE_STARTED without phase", { ...base, event_type: "PHASE_STARTED", payload: {} }, "$.payload.phase"],
    [
      "PHASE_FINISHED with success as a string",
      { ...base, event_type: "PHASE_FINISHED", payload: { phase: "test", success: "yes" } },
      "$.payload.success: Invalid input: expected boolean, received string",
    ],
    [
      "ACTION_REQUEST with blocking as a string",
      { ...base, event_type: "ACTION_REQUEST", payload: { action: "OPEN_PR", blocking: "true" } },
      "$.payload.blocking: Invalid input: expected boolean",
    ],
    [
      "ACTION_REQUEST with array parameters",
      { ...base, event_type: "ACTION_REQUEST", payload: { action: "OPEN_PR", parameters: [] } },
      "$.payload.parameters: Invalid input: expected record",
    ],
    [
      "ARTIFACT with a bad url",
      { ...base, event_type: "ARTIFACT", payload: { kind: "pr_url", url: "not a url" } },
      "$.payload.url: Invalid URL",
    ],
    [
      "WAITING without checkpoint",
      { ...base, event_type: "WAITING", payload: { reason: "PR_REVIEW" } },
      "$.payload.checkpoint_id: Invalid input: expected string, received undefined",
    ],
    [
      "WAITING with a bad checkpoint id",
      { ...base, event_type: "WAITING", payload: { reason: "r", checkpoint_id: "../etc" } },
      "$.payload.checkpoint_id: expected a checkpoint id like chk_abc123",
    ],
    [
      "WAITING with an unknown input type",
      {
        ...base,
        event_type: "WAITING",
        payload: { reason: "r", checkpoint_id: "chk_1", expected_inputs: { n: "number" } },
      },
      '$.payload.expected_inputs.n: "number" is not an input type',
    ],
    [
      "WAITING with a bad array element type",
      {
        ...base,
        event_type: "WAITING",
        payload: { reason: "r", checkpoint_id: "chk_1", expected_inputs: { n: "array<float>" } },
      },
      '"array<float>" has an invalid element type',
    ],
    [
      "COMPLETED with status ok",
      { ...base, event_type: "COMPLETED", payload: { status: "ok" } },
      '$.payload.status: Invalid option: expected one of "success"|"failure"',
    ],
    ["ERROR without message", { ...base, event_type: "ERROR", payload: { details: {} } }, "$.payload.message"],
    [
      "a proposal with confidence 1.2",
      {
        ...base,
        event_type: "ENVIRONMENT_PROPOSAL",
        payload: {
          observed_failure: { phase: "b", exit_code: 1, stderr_hint: "" },
          suggested_adjustment: { type: "runtime_install", details: {} },
          confidence: 1.2,
          evidence: [],
          scope: "repo_specific",
        },
      },
      "$.payload.confidence: must be between 0.0 and 1.0",
    ],
    [
      "a proposal with an unknown adjustment",
      {
        ...base,
        event_type: "ENVIRONMENT_PROPOSAL",
        payload: {
          observed_failure: { phase: "b", exit_code: 1, stderr_hint: "" },
          suggested_adjustment: { type: "reboot", details: {} },
          confidence: 1,
          evidence: [],
          scope: "repo_specific",
        },
      },
      '$.payload.suggested_adjustment.type: Invalid option: expected one of "runtime_install"',
    ],
    [
      "a proposal with an unknown scope",
      {
        ...base,
        event_type: "ENVIRONMENT_PROPOSAL",
        payload: {
          observed_failure: { phase: "b", exit_code: 1, stderr_hint: "" },
          suggested_adjustment: { type: "runtime_install", details: {} },
          confidence: 1,
          evidence: [],
          scope: "everywhere",
        },
      },
      '$.payload.scope: Invalid option: expected one of "repo_specific"|"global_candidate"',
    ],
    [
      "a proposal missing evidence and observed_failure",
      {
        ...base,
        event_type: "ENVIRONMENT_PROPOSAL",
        payload: {
          suggested_adjustment: { type: "runtime_install", details: {} },
          confidence: 1,
          scope: "repo_specific",
        },
      },
      "$.payload.observed_failure: Invalid input: expected object, received undefined; $.payload.evidence",
    ],
    [
      "a proposal with a fractional exit code",
      {
        ...base,
        event_type: "ENVIRONMENT_PROPOSAL",
        payload: {
          observed_failure: { phase: "b", exit_code: 1.5, stderr_hint: "" },
          suggested_adjustment: { type: "runtime_install", details: {} },
          confidence: 1,
          evidence: [],
          scope: "repo_specific",
        },
      },
      "$.payload.observed_failure.exit_code: Invalid input: expected int",
    ],
  ];

  it.each(refusals)("refuse %s with a reason naming the field", (_name, value, expected) => {
    const r = reason(value);
    expect(r.startsWith("schema violation: ")).toBe(true);
    expect(r).toContain(expected);
  });

  it("refuse JSON that is not an object", () => {
    expect(reason([1, 2])).toBe("schema violation: $: expected a JSON object (the event envelope)");
    const bad = parseEventJson("{not json");
    expect(bad.ok === false && bad.reason.startsWith("invalid JSON: ")).toBe(true);
  });
});
