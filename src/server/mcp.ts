import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { EntryInputSchema } from "../blackboard/index.js";
import { isPmagentError } from "../core/index.js";
import { localActor } from "../config/index.js";
import { KaiRequestSchema } from "../kai/index.js";
import type { ServerContext } from "./context.js";
import type { Call, Route } from "./route.js";
import { apiRoutes } from "./routes.js";
import { EmptyQuery, EntryListQuery, GuardQuery, IdParams, ResumeBody, RunListQuery, StatusChangeBody } from "./schemas.js";

type Parts = Omit<Call<unknown, unknown, unknown>, "actor">;

interface ToolDef {
  name: string;
  description: string;
  input: z.ZodObject;
  /** The API route the tool calls, so both interfaces share one implementation and one rule set. */
  route: string;
  parts(args: Record<string, unknown>, ctx: ServerContext): Parts;
}

const LaneArg = z.string().regex(/^[^/\s]+\/[^/\s]+$/, "expected LAYER/NAME, e.g. layer_b/doc_update").optional();

function kaiRequest(ctx: ServerContext, type: "lane_status" | "what_changed", args: Record<string, unknown>): Record<string, unknown> {
  const first = ctx.project.config.lanes[0]!;
  const [layer, name] = typeof args.lane === "string" ? args.lane.split("/") : [first.layer, first.name];
  const params: Record<string, unknown> = {};
  for (const k of ["time_window_days", "max_highlights"]) if (args[k] !== undefined) params[k] = args[k];
  return { version: "kai_request_v1", request_id: `mcp-${new Date().toISOString()}`, from: { actor_type: "chatgpt", actor_id: "mcp" }, project_id: ctx.project.config.project_id, type, lane: { layer, name }, params };
}

const none = (): Parts => ({ params: {}, query: {}, body: undefined });

const TOOLS: ToolDef[] = [
  { name: "kai_ask", description: "Ask Kai with a full kai_request_v1 (lane_status or what_changed); answers a kai_response_v1", input: z.object({ request: KaiRequestSchema }), route: "POST /v1/kai", parts: (a) => ({ params: {}, query: {}, body: a.request }) },
  {
    name: "kai_lane_status", description: "Kai: where the lane's current cycle stands (steps, latest entries, suggested actions)",
    input: z.object({ lane: LaneArg, time_window_days: z.number().int().min(1).max(365).optional() }), route: "POST /v1/kai",
    parts: (a, ctx) => ({ params: {}, query: {}, body: kaiRequest(ctx, "lane_status", a) }),
  },
  {
    name: "kai_what_changed", description: "Kai: what changed in the last N days (merged PRs, STATE/docs changes, highlights with evidence)",
    input: z.object({ lane: LaneArg, time_window_days: z.number().int().min(1).max(365).optional(), max_highlights: z.number().int().min(1).max(50).optional() }), route: "POST /v1/kai",
    parts: (a, ctx) => ({ params: {}, query: {}, body: kaiRequest(ctx, "what_changed", a) }),
  },
  { name: "bb_list", description: "List blackboard entries (status may list several, comma-separated)", input: EntryListQuery, route: "GET /v1/entries", parts: (a) => ({ params: {}, query: a, body: undefined }) },
  { name: "bb_show", description: "Show one blackboard entry with its version", input: IdParams, route: "GET /v1/entries/:id", parts: (a) => ({ params: a, query: {}, body: undefined }) },
  { name: "bb_post", description: "Post a blackboard entry as the authenticated actor", input: z.object({ entry: EntryInputSchema }), route: "POST /v1/entries", parts: (a) => ({ params: {}, query: {}, body: a.entry }) },
  {
    name: "bb_change_status", description: "Change an entry's status as the authenticated actor (lifecycle and permission rules apply)",
    input: IdParams.extend(StatusChangeBody.shape), route: "POST /v1/entries/:id/status",
    parts: ({ id, ...body }) => ({ params: { id }, query: {}, body }),
  },
  { name: "runs_list", description: "List runs of sprites", input: RunListQuery, route: "GET /v1/runs", parts: (a) => ({ params: {}, query: a, body: undefined }) },
  { name: "runs_show", description: "Show one run (state, waiting checkpoint and expected_inputs, errors)", input: IdParams, route: "GET /v1/runs/:id", parts: (a) => ({ params: a, query: {}, body: undefined }) },
  { name: "runs_resume", description: "Resume a waiting run with inputs matching its expected_inputs", input: IdParams.extend(ResumeBody.shape), route: "POST /v1/runs/:id/resume", parts: ({ id, ...body }) => ({ params: { id }, query: {}, body }) },
  { name: "oa_boot", description: "OA boot envelope: kernel mode, allowed and forbidden actions", input: EmptyQuery, route: "GET /v1/oa/boot", parts: none },
  { name: "oa_guard", description: "OA coherence guard over the kernel surfaces (STRICT or HINT)", input: GuardQuery, route: "GET /v1/oa/guard", parts: (a) => ({ params: {}, query: a, body: undefined }) },
  { name: "oa_snapshot", description: "OA normalized state from the kernel surfaces (read-only)", input: EmptyQuery, route: "GET /v1/oa/snapshot", parts: none },
];

export const MCP_TOOL_NAMES = TOOLS.map((t) => t.name);

/** An MCP server whose tools act as `actor` (the bearer token's over HTTP, --as over stdio). */
export function mcpServer(ctx: ServerContext, actor: string, version: string): McpServer {
  const server = new McpServer({ name: "pmagent", version });
  const byKey = new Map<string, Route>(apiRoutes(ctx).map((r) => [`${r.method} ${r.url}`, r]));
  for (const tool of TOOLS) {
    const r = byKey.get(tool.route)!;
    server.registerTool(tool.name, { description: tool.description, inputSchema: tool.input }, async (args: Record<string, unknown>) => {
      try {
        const result = await r.handler({ actor, ...tool.parts(args, ctx) });
        return { content: [{ type: "text" as const, text: ctx.redactor.redact(JSON.stringify(result, null, 2)) }] };
      } catch (err) {
        if (!isPmagentError(err)) throw err;
        return { isError: true, content: [{ type: "text" as const, text: ctx.redactor.redact(`${err.code}: ${err.message}`) }] };
      }
    });
  }
  return server;
}

/** The actor of a stdio MCP session: --as, else PMAGENT_ACTOR, else the first human. */
export function stdioActor(ctx: ServerContext, as: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  return localActor(ctx.project.config, as, env);
}
