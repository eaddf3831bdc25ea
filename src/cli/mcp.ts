import type { Command } from "./commander.js";
import { readFileSync } from "node:fs";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { mcpServer, serverContext, stdioActor } from "../server/index.js";
import { withProject } from "./context.js";

const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };

export function registerMcp(program: Command): void {
  program
    .command("mcp")
    .description(
      "Model Context Protocol server on stdio: tools for the blackboard, runs, PRs, environment proposals, Kai and OA; entries, runs and Kai answers as resources; prompts; acting as --as (default $PMAGENT_ACTOR, else the first human)",
    )
    .option("--as <actor>", "the actor the tools act as")
    .action(async (opts: { as?: string }, cmd: Command) => {
      await withProject(cmd, async (opened) => {
        const ctx = await serverContext(opened);
        const server = mcpServer(ctx, stdioActor(ctx, opts.as), pkg.version);
        const transport = new StdioServerTransport();
        const closed = new Promise<void>((resolve) => (transport.onclose = resolve));
        await server.connect(transport);
        // stdin ending (the client went away) closes the transport.
        process.stdin.once("end", () => void server.close());
        await closed;
        await Promise.all([...ctx.inFlight]);
      });
    });
}
