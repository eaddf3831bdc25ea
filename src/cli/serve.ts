import type { Command } from "commander";
import { buildServer, DEFAULT_PORT } from "../server/index.js";
import { withStore } from "./context.js";
import { intOption } from "./output.js";

export function registerServe(program: Command): void {
  program
    .command("serve")
    .description("HTTP API (OpenAPI at /openapi.json), live run events (SSE), MCP at /mcp and the web console at /; bearer tokens from server.tokens or PMAGENT_TOKENS=\"TOKEN=Actor,…\" (required beyond loopback)")
    .option("--port <port>", `port to listen on (0: any free port; default ${DEFAULT_PORT})`, intOption("--port", 0, 65535))
    .option("--host <host>", "address to listen on", "127.0.0.1")
    .action(async (opts: { port?: number; host: string }, cmd: Command) => {
      await withStore(cmd, async (project, store) => {
        const server = buildServer({ project, store, host: opts.host, port: opts.port ?? DEFAULT_PORT });
        const url = await server.listen();
        process.stdout.write(`pmagent serve: listening on ${url} (console ${url}/, API ${url}/openapi.json, MCP ${url}/mcp)\n`);
        await new Promise<void>((resolve) => {
          const stop = () => resolve();
          process.once("SIGINT", stop);
          process.once("SIGTERM", stop);
        });
        await server.close();
      });
    });
}
