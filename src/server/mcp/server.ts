/**
 * The MCP server: the HTTP API's surface as tools (each with argument descriptions, an output
 * schema, structured results and read-only/destructive/idempotent annotations), entries, runs,
 * events and Kai answers as resources, and the common asks as prompts. Served over stdio by
 * `pmagent mcp` and over streamable HTTP at /mcp, acting as the authenticated actor.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { localActor } from "../../config/index.js";
import type { ServerContext } from "../context.js";
import { ENTRY_TOOLS } from "./entries.js";
import { FORGE_TOOLS } from "./forge.js";
import { KAI_TOOLS } from "./kai.js";
import { OA_TOOLS } from "./oa.js";
import { registerPrompts } from "./prompts.js";
import { registerResources } from "./resources.js";
import { RUN_TOOLS } from "./runs.js";
import { registerTools, toolEnv } from "./tool.js";

const TOOLS = [...KAI_TOOLS, ...ENTRY_TOOLS, ...RUN_TOOLS, ...FORGE_TOOLS, ...OA_TOOLS];

export const MCP_TOOL_NAMES = TOOLS.map((t) => t.name);

const INSTRUCTIONS =
  "pmagent: the blackboard (bb_*), runs of sprites (runs_*), pull requests and environment proposals, Kai's digests (kai_*) and the OA kernel (oa_*). " +
  'Answers are digests: ask for detail "full" when you need the whole record; lists are newest first, paged with limit and cursor (events and logs with after). ' +
  "Everything acts as the authenticated actor. The prompts what_waits_for_me and what_changed_this_week are good starting points.";

/** An MCP server whose tools act as `actor` (the bearer token's over HTTP, --as over stdio). */
export function mcpServer(ctx: ServerContext, actor: string, version: string): McpServer {
  const server = new McpServer({ name: "pmagent", version }, { instructions: INSTRUCTIONS });
  const env = toolEnv(ctx, actor);
  registerTools(server, TOOLS, env);
  registerResources(server, env);
  registerPrompts(server, env);
  return server;
}

/** The actor of a stdio MCP session: --as, else PMAGENT_ACTOR, else the first human. */
export function stdioActor(ctx: ServerContext, as: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  return localActor(ctx.project.config, as, env);
}
