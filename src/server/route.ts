import type { z } from "zod";
import { parseWith } from "../core/index.js";

export type Method = "GET" | "POST" | "DELETE";

/** What a handler sees: the caller (from the token, never the body) and the validated inputs. */
export interface Call<P, Q, B> {
  actor: string;
  params: P;
  query: Q;
  body: B;
}

/** One API route: its schemas drive both validation and the OpenAPI document. */
export interface Route {
  method: Method;
  /** Fastify path, e.g. `/v1/entries/:id`. */
  url: string;
  summary: string;
  tag: string;
  params?: z.ZodType;
  query?: z.ZodType;
  body?: z.ZodType;
  response?: z.ZodType;
  /** Success status (200 unless said). */
  status?: number;
  /** Statuses this route can answer besides 400/401/413/500 (documented in OpenAPI). */
  errors?: number[];
  handler(call: Call<unknown, unknown, unknown>): Promise<unknown>;
}

/** Declare a route with typed inputs inferred from its zod schemas. */
export function route<
  P extends z.ZodType = z.ZodUnknown,
  Q extends z.ZodType = z.ZodUnknown,
  B extends z.ZodType = z.ZodUnknown,
>(def: {
  method: Method;
  url: string;
  summary: string;
  tag: string;
  params?: P;
  query?: Q;
  body?: B;
  response?: z.ZodType;
  status?: number;
  errors?: number[];
  handler(call: Call<z.output<P>, z.output<Q>, z.output<B>>): Promise<unknown>;
}): Route {
  return def as unknown as Route;
}

/** Validate each part of a request, naming it in the error (`request body is invalid: $.to: …`). */
export function validate(
  r: Route,
  raw: { params: unknown; query: unknown; body: unknown },
): { params: unknown; query: unknown; body: unknown } {
  return {
    params: r.params ? parseWith(r.params, raw.params, "path", "invalid_params") : raw.params,
    query: r.query ? parseWith(r.query, raw.query ?? {}, "query string", "invalid_query") : raw.query,
    body: r.body ? parseWith(r.body, raw.body, "request body", "invalid_body") : raw.body,
  };
}
