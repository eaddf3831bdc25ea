import { describe, expect, it } from "vitest";
import { envelopeValid, LatticeEventSchema, parseEventJson } from "../../../src/lattice/index.js";
import { SPEC_EVENTS } from "../fixtures/spec-examples.js";

const base = {
  protocol_version: "v1",
  sprite_id: "sprite-42",
  work_item_id: "issue-17",
  timestamp: "2026-01-15T10:30:00.123Z",
};
const VALID: Array<Record<string, unknown>> = [
  { ...base, event_type: "INFO", payload: { message: "hi", kind: "progress", metadata: { i: 1 } } },
  { ...base, event_type: "PHASE_STARTED", payload: { phase: "build" } },
  { ...base, event_type: "PHASE_FINISHED", payload: { phase: "build", success: false } },
  { ...base, event_type: "ACTION_REQUEST", payload: { action: "OPEN_PR", parameters: {}, blocking: true } },
  { ...base, event_type: "ARTIFACT", payload: { kind: "file", ref: "a.txt", url: null, metadata: {} } },
  { ...base, event_type: "WAITING", payload: { reason: "input", checkpoint_id: "chk_1" } },
  { ...base, event_type: "COMPLETED", payload: { status: "success", summary: "done" } },
  { ...base, event_type: "ERROR", payload: { message: "boom", details: { code: 1 } } },
];

/** Ways to spoil a value (or leave it out, as undefined). */
const BAD_VALUES: unknown[] = [
  undefined,
  null,
  "",
  "x",
  0,
  1.5,
  true,
  [],
  {},
  ["a"],
  "2026-02-30T10:00:00Z",
  "chk_",
  "chk_ok",
  "v2",
  "success",
];

/** Every event with one field (at any depth, up to the payload's) replaced by each bad value, or an extra key added. */
function variants(event: Record<string, unknown>): Array<Record<string, unknown>> {
  const out: Array<Record<string, unknown>> = [];
  const payload = event.payload as Record<string, unknown>;
  const payloadKeys = [
    ...Object.keys(payload),
    "metadata",
    "details",
    "url",
    "expected_inputs",
    "parameters",
    "blocking",
    "ref",
    "kind",
    "summary",
  ];
  for (const bad of BAD_VALUES) {
    for (const key of [...Object.keys(event), "extra"]) out.push({ ...event, [key]: bad });
    for (const key of payloadKeys) out.push({ ...event, payload: { ...payload, [key]: bad } });
  }
  for (const type of ["INFO", "WAITING", "ENVIRONMENT_PROPOSAL", "NOPE", "constructor", "__proto__"])
    out.push({ ...event, event_type: type });
  return out.map((v) => JSON.parse(JSON.stringify(v)) as Record<string, unknown>);
}

describe("envelopeValid (the compiled envelope check)", () => {
  it("takes the usual events of every common type without zod", () => {
    for (const event of VALID) expect(envelopeValid(event), String(event.event_type)).toBe(true);
  });

  it("never takes an event zod refuses, nor one zod would change (a default filled in)", () => {
    let checked = 0;
    for (const event of [...VALID, ...SPEC_EVENTS.map((e) => JSON.parse(e.text) as Record<string, unknown>)]) {
      for (const v of [event, ...variants(event)]) {
        const zod = LatticeEventSchema.safeParse(v);
        if (envelopeValid(v)) {
          expect(zod.success, JSON.stringify(v)).toBe(true);
          if (zod.success) expect(zod.data).toEqual(v);
        }
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(3000);
  });

  it("leaves every refusal's reason to zod, word for word", () => {
    const bad = { ...base, event_type: "INFO", payload: { message: "", kind: 3 } };
    const r = parseEventJson(JSON.stringify(bad));
    expect(r).toEqual({
      ok: false,
      reason:
        "schema violation: $.payload.message: must be a non-empty string; $.payload.kind: Invalid input: expected string, received number",
    });
  });

  it("gives an event with a defaulted field zod's output (the default filled in)", () => {
    const r = parseEventJson(JSON.stringify({ ...base, event_type: "ACTION_REQUEST", payload: { action: "OPEN_PR" } }));
    expect(r.ok && r.event.payload).toEqual({ action: "OPEN_PR", parameters: {}, blocking: false });
  });
});
