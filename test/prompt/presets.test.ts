import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  OUTPUT_PRESETS,
  PRESET_NAMES,
  AGENT_ROLES,
  assertStrictJsonSchema,
  checkAnswer,
  outputSchemaFromJson,
  outputSchemaFromZod,
  parsePresetName,
  presetOutputSchema,
  textFormat,
} from "../../src/prompt/index.js";
import { toJsonSchema } from "../../src/core/index.js";

const validAnswers = {
  orchestrator: {
    summary: "s",
    plan: [{ step: "a", owner: "executor", status: "pending" }],
    doc_edits: [],
    open_questions: [],
  },
  reviewer: {
    level: "hard_gate",
    decision: "approve",
    summary: "ok",
    claims: [{ claim: "tests pass", evidence: null, verdict: "unsupported" }],
    planning_feedback: [],
  },
  executor: {
    status: "completed",
    summary: "s",
    claims: [{ claim: "c", evidence: ["e"] }],
    changed_files: ["a.ts"],
    commands: [{ command: "npm test", exit_code: 0 }],
    remaining: [],
  },
  searcher: { answer: "a", findings: [{ source: "docs/x.md:3", excerpt: "x", relevance: "r" }], gaps: [] },
};

describe("output schema presets", () => {
  it.each(AGENT_ROLES)(
    "the %s preset is a strict JSON Schema: every property required, no additional properties, at every depth",
    (role) => {
      const json = toJsonSchema(OUTPUT_PRESETS[role]);
      expect(() => assertStrictJsonSchema(json, role)).not.toThrow();
      expect(json).toMatchObject({ type: "object", additionalProperties: false });
      expect((json.required as string[]).sort()).toEqual(Object.keys(json.properties as object).sort());
    },
  );

  it.each(AGENT_ROLES)("the %s preset validates an answer with the same zod schema it was generated from", (role) => {
    const output = presetOutputSchema(role, "preset");
    expect(checkAnswer(output, JSON.stringify(validAnswers[role]))).toEqual({ ok: true, value: validAnswers[role] });
    const { summary: _drop, answer: _drop2, ...missing } = validAnswers[role] as Record<string, unknown>;
    const check = checkAnswer(output, JSON.stringify({ ...missing, extra: 1 }));
    expect(check.ok).toBe(false);
  });

  it("the reviewer preset carries the level and the decision", () => {
    const props = toJsonSchema(OUTPUT_PRESETS.reviewer).properties as Record<string, { enum?: string[] }>;
    expect(props.level?.enum).toEqual(["feedback", "soft_gate", "hard_gate"]);
    expect(props.decision?.enum).toEqual(["approve", "revise", "block"]);
  });

  it("reports answers that are not JSON or do not match, path by path", () => {
    const output = presetOutputSchema("searcher", "preset");
    expect(checkAnswer(output, "Sure! Here it is")).toEqual({
      ok: false,
      issues: [expect.stringMatching(/^the answer is not valid JSON: /)],
    });
    expect(checkAnswer(output, JSON.stringify({ answer: 1, findings: [], gaps: [], more: true }))).toEqual({
      ok: false,
      issues: ["$.answer: Invalid input: expected string, received number", '$: Unrecognized key: "more"'],
    });
  });

  it("knows the preset names and refuses others", () => {
    expect(PRESET_NAMES).toEqual(["orchestrator", "reviewer", "executor", "searcher", "none"]);
    expect(parsePresetName("none")).toBe("none");
    expect(() => parsePresetName("planner")).toThrow(
      'unknown output schema preset "planner": expected one of orchestrator, reviewer, executor, searcher, none',
    );
  });

  it("refuses a zod schema strict mode would reject: optional fields, records", () => {
    expect(() =>
      outputSchemaFromZod("x", z.object({ a: z.string().optional(), b: z.object({ c: z.number().optional() }) })),
    ).toThrow(
      "output schema x is not a strict output schema:\n  $: every property must be required (make it nullable instead of optional): a\n  $.properties.b: every property must be required (make it nullable instead of optional): c",
    );
    expect(() => outputSchemaFromZod("x", z.object({ m: z.record(z.string(), z.string()) }))).toThrow(
      '$.properties.m: object must set "additionalProperties": false',
    );
    expect(() => outputSchemaFromZod("bad name", z.object({}))).toThrow(
      "output schema name \"bad name\" must be 1-64 letters, digits, '_' or '-'",
    );
  });
});

describe("explicit JSON Schema files", () => {
  const strict = {
    type: "object",
    properties: { ok: { type: "boolean" }, note: { type: ["string", "null"] } },
    required: ["ok", "note"],
    additionalProperties: false,
  };

  it("turns a strict JSON Schema into zod and validates answers with it", () => {
    const output = outputSchemaFromJson(
      "answer",
      { $schema: "https://json-schema.org/draft/2020-12/schema", ...strict },
      "s.json",
    );
    expect(output.jsonSchema).toEqual(strict);
    expect(checkAnswer(output, '{"ok":true,"note":null}')).toEqual({ ok: true, value: { ok: true, note: null } });
    expect(checkAnswer(output, '{"ok":"yes","note":null}').ok).toBe(false);
    expect(checkAnswer(output, '{"ok":true,"note":null,"x":1}').ok).toBe(false);
    expect(checkAnswer(output, '{"ok":true}').ok).toBe(false);
  });

  it("sends a loose schema with strict: false and a note saying why; a strict-valid one stays strict", () => {
    const loose = outputSchemaFromJson("a", { type: "object" }, "loose.json");
    expect(loose).toMatchObject({
      strict: false,
      note: 'loose.json is not a strict output schema, so it is sent with strict: false:\n  $: object must set "additionalProperties": false',
    });
    expect(textFormat(loose)).toEqual({ type: "json_schema", strict: false, name: "a", schema: { type: "object" } });
    expect(checkAnswer(loose, '{"anything": 1}')).toEqual({ ok: true, value: { anything: 1 } });
    const optional = outputSchemaFromJson("a", { ...strict, required: ["ok"] }, "s.json");
    expect(optional.note).toBe(
      "s.json is not a strict output schema, so it is sent with strict: false:\n  $: every property must be required (make it nullable instead of optional): note",
    );
    const valid = outputSchemaFromJson("a", strict, "s.json");
    expect(valid).toMatchObject({ strict: true });
    expect(valid.note).toBeUndefined();
    expect(textFormat(valid).strict).toBe(true);
  });

  it("refuses what is not an object schema, saying what to change", () => {
    expect(() => outputSchemaFromJson("a", [1], "s.json")).toThrow(
      's.json is not a JSON Schema: expected an object with "type": "object"',
    );
    expect(() => outputSchemaFromJson("a", { type: "string" }, "s.json")).toThrow(
      's.json: the root of an output schema must have "type": "object"',
    );
    expect(() =>
      outputSchemaFromJson("a", { ...strict, properties: { ok: { type: "wat" }, note: { type: "null" } } }, "s.json"),
    ).toThrow(/^s\.json is not a usable JSON Schema: /);
  });
});
