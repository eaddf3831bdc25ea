import { z } from "zod";
import { toJsonSchema } from "../core/index.js";
import type { Route } from "./route.js";

const ErrorSchema = z.object({
  error: z.object({ code: z.string(), message: z.string(), details: z.record(z.string(), z.unknown()).optional() }),
});

const REASONS: Record<number, string> = {
  400: "bad request (body, query or path parameters invalid)",
  401: "no or unknown bearer token",
  403: "the caller may not do this",
  404: "not found",
  409: "stale write or state conflict",
  413: "body too large",
  503: "a dependency is unavailable",
};

function schemaOf(s: z.ZodType, io: "input" | "output"): Record<string, unknown> {
  const json = toJsonSchema(s, { io });
  delete json.$schema;
  return json;
}

/** Query/path parameters of an object schema, one OpenAPI parameter per property. */
function parameters(s: z.ZodType | undefined, where: "path" | "query"): unknown[] {
  if (!s) return [];
  const json = schemaOf(s, "input") as { properties?: Record<string, Record<string, unknown>>; required?: string[] };
  return Object.entries(json.properties ?? {}).map(([name, schema]) => ({
    name,
    in: where,
    required: where === "path" || (json.required ?? []).includes(name),
    schema,
  }));
}

/** The OpenAPI 3.1 document of the route table (JSON Schema 2020-12 is OpenAPI 3.1's dialect). */
export function openApiDocument(
  routes: readonly Route[],
  info: { title: string; version: string },
): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes) {
    const path = r.url.replace(/:([A-Za-z_]+)/g, "{$1}");
    const responses: Record<string, unknown> = {
      [String(r.status ?? 200)]: {
        description: "success",
        content: r.response
          ? { "application/json": { schema: schemaOf(r.response, "output") } }
          : { "application/json": {} },
      },
    };
    for (const code of [400, 401, ...(r.body ? [413] : []), ...(r.errors ?? [])]) {
      responses[String(code)] = {
        description: REASONS[code] ?? "error",
        content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
      };
    }
    paths[path] ??= {};
    paths[path][r.method.toLowerCase()] = {
      summary: r.summary,
      tags: [r.tag],
      operationId: `${r.method.toLowerCase()}${path.replace(/[{}]/g, "").replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string | undefined) => (c ? c.toUpperCase() : ""))}`,
      parameters: [...parameters(r.params, "path"), ...parameters(r.query, "query")],
      ...(r.body
        ? { requestBody: { required: true, content: { "application/json": { schema: schemaOf(r.body, "input") } } } }
        : {}),
      responses,
      security: [{ bearer: [] }],
    };
  }
  return {
    openapi: "3.1.0",
    info,
    paths,
    components: {
      schemas: { Error: schemaOf(ErrorSchema, "output") },
      securitySchemes: {
        bearer: {
          type: "http",
          scheme: "bearer",
          description: "a token bound to an actor (server.tokens or PMAGENT_TOKENS)",
        },
      },
    },
  };
}
