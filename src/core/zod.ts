// Types only: core is imported by commands that never parse with zod (`pmagent emit`), and zod
// costs more to load than node takes to start.
import type { z } from "zod";
import type { CodeOf } from "./error-codes.js";
import { UsageError } from "./errors.js";
import { jsonTooDeep, tooDeepMessage } from "./json-limits.js";

/** `$.a.b[0]` style JSON path of a zod issue. */
export function jsonPath(path: ReadonlyArray<PropertyKey>): string {
  let out = "$";
  for (const p of path) out += typeof p === "number" ? `[${p}]` : `.${String(p)}`;
  return out;
}

/** One line per issue: `$.path: message`. */
export function formatZodIssues(error: z.ZodError): string[] {
  return error.issues.map((i) => `${jsonPath(i.path)}: ${i.message}`);
}

/**
 * Validate `value` against `schema`, or throw a UsageError whose message names `source`
 * (a file, a flag, "request body"), each JSON path and what was expected.
 */
export function parseWith<S extends z.ZodType>(
  schema: S,
  value: unknown,
  source: string,
  code: CodeOf<"usage"> = "invalid_input",
): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issues = formatZodIssues(result.error);
  throw new UsageError(code, `${source} is invalid:\n  ${issues.join("\n  ")}`, { issues });
}

/** JSON.parse with a usage error naming the source and the position. */
export function parseJsonText(text: string, source: string, code: CodeOf<"usage"> = "invalid_json"): unknown {
  // Refused before parsing: whatever handles the value next recurses over it.
  if (jsonTooDeep(text)) throw new UsageError(code, `${source} ${tooDeepMessage()}`);
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new UsageError(code, `${source} is not valid JSON: ${(err as Error).message}`);
  }
}

/** JSON Schema (draft 2020-12) of a zod schema, as published in `schemas/`. */
export function toJsonSchema(schema: z.ZodType, options: { io?: "input" | "output" } = {}): Record<string, unknown> {
  return schema.toJSONSchema({ io: options.io ?? "output", unrepresentable: "any" }) as Record<string, unknown>;
}
