import type { Command } from "./commander.js";
import { UnavailableError, UsageError } from "../core/index.js";
import { buildServer, DEFAULT_PORT, reloadConfig } from "../server/index.js";
import { withStore } from "./context.js";
import { formatOption, intOption, print, type Format } from "./output.js";

/** A listen failure as an error that says what to do, not a stack trace. */
export function listenError(err: unknown, host: string, port: number): unknown {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  const other = `pick another with --port N (or --port 0 for any free port)`;
  switch (code) {
    case "EADDRINUSE":
      return new UnavailableError(
        "port_in_use",
        `port ${port} on ${host} is already in use (another pmagent serve?): ${other}`,
      );
    case "EACCES":
      return new UnavailableError(
        "port_not_permitted",
        `not allowed to listen on port ${port} on ${host} (ports below 1024 need privileges): ${other}`,
      );
    case "EADDRNOTAVAIL":
      return new UsageError(
        "invalid_host",
        `--host ${host} is not an address of this machine: give one of its addresses, e.g. 127.0.0.1`,
      );
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return new UsageError(
        "invalid_host",
        `--host ${host} does not resolve to an address: give an IP address or a known host name, e.g. 127.0.0.1`,
      );
    default:
      return err;
  }
}

export function registerServe(program: Command): void {
  program
    .command("serve")
    .description(
      'HTTP API (OpenAPI at /openapi.json), live run events (SSE), MCP at /mcp and the web console at /; bearer tokens from server.tokens or PMAGENT_TOKENS="TOKEN=Actor,…" (required beyond loopback). Workers started from the console or POST /v1/workers run in this process and stop with it; SIGHUP (or POST /v1/config/reload) re-reads pmagent.config.json',
    )
    .option(
      "--port <port>",
      `port to listen on (0: any free port; default ${DEFAULT_PORT})`,
      intOption("--port", 0, 65535),
    )
    .option("--host <host>", "address to listen on", "127.0.0.1")
    .addOption(formatOption())
    .action(async (opts: { port?: number; host: string; format: Format }, cmd: Command) => {
      // Every route must go on answering while a worker or run holds the SQLite write lock.
      await withStore(
        cmd,
        async (project, store) => {
          const port = opts.port ?? DEFAULT_PORT;
          const server = await buildServer({ project, store, host: opts.host, port });
          // The handlers go in before the URL is printed: a script that stops the server as soon as
          // it reads the URL must not find the default action (an abrupt exit) still in place.
          let stop = () => {};
          const stopped = new Promise<void>((resolve) => (stop = resolve));
          process.once("SIGINT", stop);
          process.once("SIGTERM", stop);
          // SIGHUP re-reads the config (as POST /v1/config/reload does); a broken one is reported and the old one kept.
          const reload = () => {
            try {
              const r = reloadConfig(project);
              process.stderr.write(
                `pmagent serve: ${r.changed ? "config reloaded" : "config unchanged"} from ${r.config_path}: roles ${r.lanes.flatMap((l) => l.roles).join(", ")}\n`,
              );
            } catch (err) {
              process.stderr.write(`pmagent serve: config not reloaded: ${(err as Error).message}\n`);
            }
          };
          process.on("SIGHUP", reload);
          let url: string;
          try {
            url = await server.listen();
          } catch (err) {
            process.off("SIGINT", stop);
            process.off("SIGTERM", stop);
            process.off("SIGHUP", reload);
            await server.close().catch(() => undefined);
            throw listenError(err, opts.host, port);
          }
          const where = { url, console: `${url}/`, openapi: `${url}/openapi.json`, mcp: `${url}/mcp` };
          print(
            opts.format,
            where,
            () =>
              `pmagent serve: listening on ${url} (console ${where.console}, API ${where.openapi}, MCP ${where.mcp})`,
          );
          await stopped;
          process.off("SIGHUP", reload);
          // Hosted workers stop first, as a CLI worker stops on SIGTERM: runs stopped, entries left for another worker.
          await server.close();
        },
        { yieldWhileBusy: true },
      );
    });
}
