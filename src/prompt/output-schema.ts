import { z } from "zod";
import { UsageError, formatZodIssues, toJsonSchema } from "../core/index.js";
import { OUTPUT_PRESETS, presetFormatName, type PresetName } from "./presets.js";
import type { AgentRole } from "./roles.js";

/**
 * A structured output contract: the zod schema answers are validated with, and the strict JSON
 * Schema generated from it that goes into `text.format`.
 */
export interface OutputSchema {
  /** `text.format.name`. */
  name: string;
  schema: z.ZodType;
  jsonSchema: Record<string, unknown>;
  /** Which rule of the precedence chose it. */
  source: "explicit" | "preset" | "role_default";
  /** Sent with `strict: false` when the schema is not strict-valid (a loose `{"type": "object"}`). */
  strict?: boolean;
  /** Why it is not strict, for the caller to say (a warning line, a field). */
  note?: string;
}

const FORMAT_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** Build an output schema from a zod schema; refuses one OpenAI strict mode would reject. */
export function outputSchemaFromZod(
  name: string,
  schema: z.ZodType,
  source: OutputSchema["source"] = "explicit",
): OutputSchema {
  checkFormatName(name, "output schema name");
  const { $schema: _ignored, ...jsonSchema } = toJsonSchema(schema);
  assertStrictJsonSchema(jsonSchema, `output schema ${name}`);
  return { name, schema, jsonSchema, source };
}

/**
 * Build an output schema from a JSON Schema (e.g. a `--schema FILE`): checked for strict mode,
 * then turned into zod so that answers go through the same validation as the presets. A schema
 * strict mode would reject (e.g. a loose `{"type": "object"}`) is sent with `strict: false` and a
 * note saying why, as the contract's origin does, rather than refused.
 */
export function outputSchemaFromJson(name: string, json: unknown, source: string): OutputSchema {
  checkFormatName(name, `${source}: output schema name`);
  if (json === null || typeof json !== "object" || Array.isArray(json)) {
    throw new UsageError(
      "invalid_output_schema",
      `${source} is not a JSON Schema: expected an object with "type": "object"`,
    );
  }
  const { $schema: _ignored, ...jsonSchema } = json as Record<string, unknown>;
  if (jsonSchema.type !== "object") {
    throw new UsageError(
      "invalid_output_schema",
      `${source}: the root of an output schema must have "type": "object" (OpenAI structured output answers with an object)`,
    );
  }
  const problems = strictProblems(jsonSchema);
  let schema: z.ZodType;
  try {
    schema = z.fromJSONSchema(jsonSchema as Parameters<typeof z.fromJSONSchema>[0]);
  } catch (err) {
    throw new UsageError("invalid_output_schema", `${source} is not a usable JSON Schema: ${(err as Error).message}`);
  }
  if (problems.length === 0) return { name, schema, jsonSchema, source: "explicit", strict: true };
  return {
    name,
    schema,
    jsonSchema,
    source: "explicit",
    strict: false,
    note: `${source} is not a strict output schema, so it is sent with strict: false:\n  ${problems.join("\n  ")}`,
  };
}

function checkFormatName(name: string, what: string): void {
  if (!FORMAT_NAME.test(name)) {
    throw new UsageError("invalid_output_schema", `${what} "${name}" must be 1-64 letters, digits, '_' or '-'`);
  }
}

/**
 * OpenAI strict mode: every object lists all its properties in `required` and has
 * `additionalProperties: false`, at every depth. Throws a UsageError listing each violation.
 */
export function assertStrictJsonSchema(schema: Record<string, unknown>, source: string): void {
  const problems = strictProblems(schema);
  if (problems.length > 0) {
    throw new UsageError(
      "output_schema_not_strict",
      `${source} is not a strict output schema:\n  ${problems.join("\n  ")}`,
      { problems },
    );
  }
}

/** What OpenAI strict mode would reject in a schema, one line each (empty: strict-valid). */
export function strictProblems(schema: Record<string, unknown>): string[] {
  const problems: string[] = [];
  visitSchema(schema, "$", problems);
  return problems;
}

function visitSchema(node: unknown, path: string, problems: string[]): void {
  if (node === null || typeof node !== "object" || Array.isArray(node)) return;
  const s = node as Record<string, unknown>;
  const types = Array.isArray(s.type) ? s.type : [s.type];
  if (types.includes("object") || "properties" in s) {
    const properties = (s.properties ?? {}) as Record<string, unknown>;
    const required = Array.isArray(s.required) ? (s.required as unknown[]) : [];
    if (s.additionalProperties !== false) problems.push(`${path}: object must set "additionalProperties": false`);
    const missing = Object.keys(properties).filter((k) => !required.includes(k));
    if (missing.length > 0)
      problems.push(
        `${path}: every property must be required (make it nullable instead of optional): ${missing.join(", ")}`,
      );
    for (const [key, child] of Object.entries(properties)) visitSchema(child, `${path}.properties.${key}`, problems);
  }
  if (Array.isArray(s.items)) s.items.forEach((child, i) => visitSchema(child, `${path}.items[${i}]`, problems));
  else visitSchema(s.items, `${path}.items`, problems);
  for (const key of ["anyOf", "oneOf", "allOf", "prefixItems"]) {
    if (Array.isArray(s[key]))
      (s[key] as unknown[]).forEach((child, i) => visitSchema(child, `${path}.${key}[${i}]`, problems));
  }
  for (const key of ["$defs", "definitions"]) {
    const defs = s[key];
    if (defs !== null && typeof defs === "object")
      for (const [name, child] of Object.entries(defs)) visitSchema(child, `${path}.${key}.${name}`, problems);
  }
}

/** The preset of a role, as an output schema. */
export function presetOutputSchema(role: AgentRole, source: OutputSchema["source"]): OutputSchema {
  return outputSchemaFromZod(presetFormatName(role), OUTPUT_PRESETS[role], source);
}

export interface OutputSchemaSelection {
  role: AgentRole;
  /** Explicit schema: highest priority (spec: `metadata.responsesOutputSchema`). */
  responsesOutputSchema?: OutputSchema;
  /** A preset, or `none` to turn structured output off (spec: `metadata.responsesOutputSchemaPreset`). */
  responsesOutputSchemaPreset?: PresetName;
  /** Use the role's preset when nothing else is chosen (spec: `metadata.responsesStructuredOutput`). */
  responsesStructuredOutput?: boolean;
}

/** Precedence: explicit > preset (`none` disables) > role default (only when structured output is on) > none. */
export function resolveOutputSchema(selection: OutputSchemaSelection): OutputSchema | undefined {
  if (selection.responsesOutputSchema) return selection.responsesOutputSchema;
  if (selection.responsesOutputSchemaPreset !== undefined) {
    return selection.responsesOutputSchemaPreset === "none"
      ? undefined
      : presetOutputSchema(selection.responsesOutputSchemaPreset, "preset");
  }
  if (selection.responsesStructuredOutput === true) return presetOutputSchema(selection.role, "role_default");
  return undefined;
}

export type AnswerCheck = { ok: true; value: unknown } | { ok: false; issues: string[] };

/** Parse a model's text answer as JSON and validate it with the output schema's zod schema. */
export function checkAnswer(output: OutputSchema, text: string): AnswerCheck {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    return { ok: false, issues: [`the answer is not valid JSON: ${(err as Error).message}`] };
  }
  const result = output.schema.safeParse(json);
  return result.success ? { ok: true, value: result.data } : { ok: false, issues: formatZodIssues(result.error) };
}
