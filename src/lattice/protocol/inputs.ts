/**
 * The `expected_inputs` type vocabulary of a WAITING event (`string`, `integer`, `boolean`, `map`,
 * `array<T>` with T from the same vocabulary) and the check of a resume's `inputs` against it.
 */
import { UsageError } from "../../core/index.js";

export type InputType =
  { kind: "string" } | { kind: "integer" } | { kind: "boolean" } | { kind: "map" } | { kind: "array"; of: InputType };

export const INPUT_TYPE_HINT = "expected one of string, integer, boolean, map, array<T> (T from the same list)";

const SCALARS = new Set(["string", "integer", "boolean", "map"]);

export function parseInputType(value: string): { ok: true; type: InputType } | { ok: false; error: string } {
  const s = value.trim();
  if (SCALARS.has(s)) return { ok: true, type: { kind: s } as InputType };
  const m = /^array\s*<(.*)>$/.exec(s);
  if (m) {
    const inner = parseInputType(m[1] ?? "");
    if (!inner.ok) return { ok: false, error: `"${value}" has an invalid element type: ${inner.error}` };
    return { ok: true, type: { kind: "array", of: inner.type } };
  }
  return { ok: false, error: `"${value}" is not an input type` };
}

export function formatInputType(type: InputType): string {
  return type.kind === "array" ? `array<${formatInputType(type.of)}>` : type.kind;
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  if (typeof value === "object") return "map";
  return typeof value;
}

function checkValue(value: unknown, type: InputType, path: string, errors: string[]): void {
  const ok =
    (type.kind === "string" && typeof value === "string") ||
    (type.kind === "integer" && typeof value === "number" && Number.isInteger(value)) ||
    (type.kind === "boolean" && typeof value === "boolean") ||
    (type.kind === "map" && value !== null && typeof value === "object" && !Array.isArray(value)) ||
    (type.kind === "array" && Array.isArray(value));
  if (!ok) {
    errors.push(`${path}: expected ${formatInputType(type)}, got ${describe(value)}`);
    return;
  }
  if (type.kind === "array")
    (value as unknown[]).forEach((item, i) => checkValue(item, type.of, `${path}[${i}]`, errors));
}

export interface InputsCheckOptions {
  /** Accept keys that `expected_inputs` does not name (default false: they are reported). */
  allowExtra?: boolean;
}

/**
 * Check a resume's `inputs` against a WAITING event's `expected_inputs`. Every expected key is
 * required. Returns one message per problem, each starting with the input's path
 * (`inputs.comments[1]: expected string, got integer`); an empty list means the inputs fit.
 */
export function checkInputs(
  inputs: unknown,
  expected: Record<string, string>,
  options: InputsCheckOptions = {},
): string[] {
  const errors: string[] = [];
  if (inputs === null || typeof inputs !== "object" || Array.isArray(inputs))
    return [`inputs: expected a map, got ${describe(inputs)}`];
  const given = inputs as Record<string, unknown>;
  for (const [key, typeName] of Object.entries(expected)) {
    const parsed = parseInputType(typeName);
    if (!parsed.ok) {
      errors.push(`expected_inputs.${key}: ${parsed.error}; ${INPUT_TYPE_HINT}`);
      continue;
    }
    if (!(key in given) || given[key] === undefined)
      errors.push(`inputs.${key}: missing (expected ${formatInputType(parsed.type)})`);
    else checkValue(given[key], parsed.type, `inputs.${key}`, errors);
  }
  if (!options.allowExtra) {
    const names = Object.keys(expected);
    for (const key of Object.keys(given)) {
      if (!(key in expected))
        errors.push(
          `inputs.${key}: not in expected_inputs (expected ${names.length ? names.join(", ") : "no inputs"})`,
        );
    }
  }
  return errors;
}

/** `checkInputs`, throwing a usage error (code `invalid_resume_inputs`) that lists every problem. */
export function assertInputs(
  inputs: unknown,
  expected: Record<string, string>,
  options: InputsCheckOptions = {},
): void {
  const errors = checkInputs(inputs, expected, options);
  if (errors.length > 0) {
    throw new UsageError(
      "invalid_resume_inputs",
      `resume inputs do not match the WAITING event's expected_inputs:\n  ${errors.join("\n  ")}`,
      { issues: errors },
    );
  }
}
