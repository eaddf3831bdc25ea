import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { ErrorCode } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { isPmagentError } from "../../core/index.js";
import type { ServerContext } from "../context.js";
import { validate, type Route } from "../route.js";
import { apiRoutes } from "../routes.js";

/** What a tool call reaches: the context, the authenticated actor, and the API's own routes. */
export interface ToolEnv {
  ctx: ServerContext;
  /** The bearer token's actor over HTTP, --as over stdio: never an argument. */
  actor: string;
  /**
   * Call an API route (`"GET /v1/runs/:id"`) with the API's own validation, permission rules and
   * handler, so both interfaces answer alike.
   */
  route(key: string, parts?: { params?: unknown; query?: unknown; body?: unknown }): Promise<unknown>;
}

/** The tool's result: structured content (checked against its output schema) and a compact text. */
export interface ToolAnswer<O> {
  structured: O;
  text: string;
}

/** Annotations said plainly; every tool states all three (openWorld only where Kai may read GitHub). */
export interface Hints {
  readOnly: boolean;
  destructive: boolean;
  idempotent: boolean;
  openWorld?: boolean;
}

export interface ToolDef {
  name: string;
  title: string;
  description: string;
  input: z.ZodObject;
  output: z.ZodObject;
  hints: Hints;
  run(args: Record<string, unknown>, env: ToolEnv): Promise<ToolAnswer<Record<string, unknown>>>;
}

/** Declare a tool with its arguments typed from its input schema. */
export function tool<I extends z.ZodObject, O extends z.ZodObject>(def: {
  name: string;
  title: string;
  description: string;
  input: I;
  output: O;
  hints: Hints;
  run(args: z.output<I>, env: ToolEnv): Promise<ToolAnswer<z.output<O>>>;
}): ToolDef {
  return def as unknown as ToolDef;
}

export const READ: Hints = { readOnly: true, destructive: false, idempotent: true };

/** `detail: "full"` adds the whole record; the digest is the default so answers stay short. */
export const Detail = z
  .enum(["digest", "full"])
  .default("digest")
  .describe('"digest" (default): the key fields; "full": the whole record as the HTTP API returns it');

export const Limit = (byDefault: number, max: number, what: string) =>
  z
    .number()
    .int("limit must be a whole number")
    .min(1, "limit must be at least 1")
    .max(max, `limit must be at most ${max}`)
    .default(byDefault)
    .describe(`how many ${what} to return (1–${max}, default ${byDefault})`);

export const Cursor = z
  .string()
  .min(1, "cursor must be the next_cursor of a previous call")
  .max(2048, "cursor must be the next_cursor of a previous call")
  .optional()
  .describe("next_cursor of the previous call, to get the next page; omit for the first page");

export const Id = (what: string, example: string) =>
  z.string().min(1, `expected a non-empty ${what} id`).describe(`the ${what} id, e.g. ${example}`);

export const PageFields = {
  next_cursor: z.string().nullable().describe("pass as cursor to get the next page; null on the last page"),
};

/** The line a list ends with: how much is shown and how to get more. */
export function pageLine(shown: number, next: string | null, noun: string): string {
  if (shown === 0 && next === null) return `no ${noun}`;
  return next === null ? `${shown} ${noun} shown (no more)` : `${shown} ${noun} shown; more with cursor "${next}"`;
}

/** `text` cut to `max` characters, marked when cut. */
export function clip(text: string, max = 160): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** What the tools, resources and prompts of one MCP session reach, acting as `actor`. */
export function toolEnv(ctx: ServerContext, actor: string): ToolEnv {
  const byKey = new Map<string, Route>(apiRoutes(ctx).map((r) => [`${r.method} ${r.url}`, r]));
  return {
    ctx,
    actor,
    async route(key, parts = {}) {
      const r = byKey.get(key);
      if (!r) throw new Error(`MCP tool refers to a missing API route ${key}`);
      const input = validate(r, { params: parts.params ?? {}, query: parts.query ?? {}, body: parts.body });
      return r.handler({ actor, ...input });
    },
  };
}

/** The MCP spec's code for a resource that does not exist. */
const RESOURCE_NOT_FOUND = -32002;

/**
 * A JSON-RPC error as sent: the SDK sends `code` and `message` as they are (its McpError would put
 * "MCP error N:" into the message, and the client adds that prefix again).
 */
class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Run a resource read or prompt: pmagent's typed errors become MCP errors `code: message`
 * (-32002 when something is not found), redacted; anything else is the SDK's to report.
 */
export async function orMcpError<T>(env: ToolEnv, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (!isPmagentError(err)) throw err;
    throw new RpcError(
      err.kind === "not_found" ? RESOURCE_NOT_FOUND : ErrorCode.InvalidParams,
      env.ctx.redactor.redact(`${err.code}: ${err.message}`),
    );
  }
}

/**
 * Register the tools: structured content and text both redacted; pmagent's typed errors become tool
 * errors `code: message` (the model reads them and can fix its call); anything else is the SDK's.
 */
export function registerTools(server: McpServer, tools: readonly ToolDef[], env: ToolEnv): void {
  const ctx = env.ctx;
  for (const t of tools) {
    const annotations = {
      title: t.title,
      readOnlyHint: t.hints.readOnly,
      destructiveHint: t.hints.destructive,
      idempotentHint: t.hints.idempotent,
      openWorldHint: t.hints.openWorld ?? false,
    };
    server.registerTool(
      t.name,
      { title: t.title, description: t.description, inputSchema: t.input, outputSchema: t.output, annotations },
      async (args: Record<string, unknown>) => {
        try {
          const answer = await t.run(args, env);
          return {
            structuredContent: ctx.redactor.redactValue(answer.structured),
            content: [{ type: "text" as const, text: ctx.redactor.redact(answer.text) }],
          };
        } catch (err) {
          if (!isPmagentError(err)) throw err;
          return {
            isError: true,
            content: [{ type: "text" as const, text: ctx.redactor.redact(`${err.code}: ${err.message}`) }],
          };
        }
      },
    );
  }
}
