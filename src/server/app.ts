import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from "fastify";
import { readFileSync } from "node:fs";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { Project } from "../config/index.js";
import { createLogger, type Logger } from "../core/index.js";
import { openProject, type ProjectSupervisorOptions } from "../app/index.js";
import { waitingAtMost, type Store } from "../store/index.js";
import { authorize, HostPolicy, PUBLIC, SESSION_COOKIE } from "./access.js";
import { Auth, assertMayListen, tokenTable } from "./auth.js";
import { serverContext, type ServerContext } from "./context.js";
import { httpError } from "./errors.js";
import { mcpServer } from "./mcp/index.js";
import { openApiDocument } from "./openapi.js";
import { validate, type Route } from "./route.js";
import { apiRoutes } from "./routes.js";
import { streamEntries, streamRunEvents } from "./sse.js";
import { consoleFile } from "./static.js";

const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };

export const DEFAULT_PORT = 7420;
const FAVICON =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#1f2430"/><path d="M4 12V4h4a2.5 2.5 0 0 1 0 5H4" stroke="#fff" stroke-width="2" fill="none"/></svg>';
export const DEFAULT_BODY_LIMIT = 1024 * 1024;
/**
 * How long a request's write waits for another process's SQLite write lock before it is answered
 * 503 store_busy with Retry-After (a store opened with yieldWhileBusy: other requests are served
 * meanwhile). Writes of work a request started that outlive it wait the store's own timeout.
 */
export const STORE_BUSY_WAIT_MS = 1_000;

export interface ServerOptions {
  project: Project;
  store: Store;
  host?: string;
  /** The port the server will listen on (for the MCP allowed Host list); 0 = learn it at listen. */
  port?: number;
  env?: NodeJS.ProcessEnv;
  bodyLimit?: number;
  logger?: Logger;
  /** Where the built console is (default: dist/console beside this module). */
  consoleDir?: string;
  /** Supervisor settings for runs this server relaunches (resume), e.g. how sprites call pmagent. */
  supervisor?: Partial<ProjectSupervisorOptions>;
}

export interface PmagentServer {
  app: FastifyInstance;
  ctx: ServerContext;
  auth: Auth;
  routes: Route[];
  /** Every route the server answers (HEAD ones included), and whether it is public. */
  endpoints: ReadonlyArray<{ method: string; url: string; public: boolean }>;
  openapi: Record<string, unknown>;
  /** Listen and return the base URL (`http://127.0.0.1:7420`). */
  listen(): Promise<string>;
  close(): Promise<void>;
}

/** Build (not start) the HTTP server: API, SSE, OpenAPI, MCP at /mcp and the console at /. */
export async function buildServer(options: ServerOptions): Promise<PmagentServer> {
  const env = options.env ?? process.env;
  const host = options.host ?? "127.0.0.1";
  const tokens = tokenTable(options.project.config, env);
  assertMayListen(host, tokens);
  const auth = new Auth(tokens, options.project.config.humans[0]!);
  const logger = options.logger ?? createLogger("pmagent-serve");
  const opened = await openProject({
    project: options.project,
    store: options.store,
    env,
    secrets: tokens.keys(),
    logger,
  });
  const ctx = await serverContext(opened, { supervisor: options.supervisor });
  let port = options.port ?? DEFAULT_PORT;
  const limits = options.project.config.server;
  const hosts = new HostPolicy(host, limits.allowed_hosts, () => port);
  const app = Fastify({
    bodyLimit: options.bodyLimit ?? DEFAULT_BODY_LIMIT,
    logger: false,
    return503OnClosing: true,
    // A client that sends its request slowly (or not at all) is cut off with 408, and an idle
    // keep-alive connection closed, so slow clients cannot hold connections (file descriptors) open.
    // Node checks the headers and request timeouts every connectionsCheckingInterval.
    requestTimeout: limits.request_timeout_ms,
    keepAliveTimeout: limits.keep_alive_timeout_ms,
    http: {
      headersTimeout: limits.headers_timeout_ms,
      connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(limits.headers_timeout_ms / 4))),
    },
    // A path the router cannot even decode gets no route and no hooks: refuse a foreign Host here
    // too, and answer in the API's error shape.
    frameworkErrors: (err, req, reply) => {
      let failure: unknown = err;
      try {
        hosts.check(req, auth.required);
      } catch (refusal) {
        failure = refusal;
      }
      const { status, body, headers } = httpError(failure);
      void (reply as FastifyReply)
        .code(status)
        .headers(headers ?? {})
        .send(body);
    },
  });
  // Beyond this many connections a new one is closed at once, before it costs more than its socket.
  app.server.maxConnections = limits.max_connections;
  const routes = apiRoutes(ctx);
  const openapi = openApiDocument(routes, { title: "pmagent API", version: pkg.version });
  const endpoints: Array<{ method: string; url: string; public: boolean }> = [];

  app.decorateRequest("actor", "");
  app.setErrorHandler((err, _req, reply) => {
    const { status, body, headers } = httpError(err);
    if (status >= 500) logger.error({ err: (err as Error).message }, "request failed");
    void reply
      .code(status)
      .headers(headers ?? {})
      .send(body);
  });
  app.setNotFoundHandler((req, reply) => {
    void reply.code(404).send({
      error: {
        code: "route_not_found",
        message: `no route ${req.method} ${req.url.split("?")[0]}: see /openapi.json`,
      },
    });
  });
  app.addHook("onRoute", (r) => {
    for (const method of [r.method].flat()) endpoints.push({ method, url: r.url, public: r.config?.public === true });
  });
  // Every request acts as the actor of its token (or session cookie), never a body field; decided on
  // the matched route, so no spelling of a path (percent-encoded, other case, …) skips it.
  app.addHook("onRequest", async (req) => authorize(req, auth, hosts));
  app.addHook("onSend", async (_req, reply, payload) => {
    const type = String(reply.getHeader("content-type") ?? "");
    return typeof payload === "string" && type.startsWith("application/json") ? ctx.redactor.redact(payload) : payload;
  });

  for (const r of routes) {
    app.route({
      method: r.method,
      url: r.url,
      handler: async (req: FastifyRequest, reply: FastifyReply) => {
        const input = validate(r, { params: req.params, query: req.query, body: req.body });
        const result = await waitingAtMost(STORE_BUSY_WAIT_MS, () => r.handler({ actor: req.actor, ...input }));
        return reply.code(r.status ?? 200).send(result);
      },
    });
  }

  const sseHeaders = (): Record<string, string> => ({});
  // No HEAD: a stream never ends, so a HEAD of it would hold the connection and its poll loop open.
  app.get("/v1/runs/:id/events/stream", { exposeHeadRoute: false }, async (req, reply) => {
    await streamRunEvents(ctx, req, reply, (req.params as { id: string }).id, sseHeaders());
  });
  app.get("/v1/entries/stream", { exposeHeadRoute: false }, async (req, reply) => {
    await streamEntries(ctx, req, reply, sseHeaders());
  });
  app.get("/v1/whoami", async (req) => ({
    actor: req.actor,
    humans: options.project.config.humans,
    project_id: options.project.config.project_id,
    lanes: options.project.config.lanes.map((l) => ({
      layer: l.layer,
      name: l.name,
      roles: l.roles.map((x) => x.name),
      kinds: Object.fromEntries(l.roles.map((x) => [x.name, x.allowed_kinds])),
    })),
    auth_required: auth.required,
  }));
  // The console's sign-in: the token goes into an HttpOnly cookie so EventSource can authenticate.
  app.post("/v1/session", { config: PUBLIC }, async (req, reply) => {
    const token = (req.body as { token?: unknown } | undefined)?.token;
    const actor = auth.actorFor(typeof token === "string" ? `Bearer ${token}` : undefined);
    void reply.header(
      "set-cookie",
      `${SESSION_COOKIE}=${encodeURIComponent(String(token ?? ""))}; HttpOnly; SameSite=Strict; Path=/`,
    );
    return { actor };
  });
  // Signing out forgets the cookie (the token itself stays valid: it is the config's to revoke).
  app.delete("/v1/session", { config: PUBLIC }, async (_req, reply) => {
    void reply.header("set-cookie", `${SESSION_COOKIE}=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0`);
    return { signed_out: true };
  });
  app.get("/openapi.json", { config: PUBLIC }, async () => openapi);
  // Browsers ask for it on every page: a small mark instead of a 404 in every console session.
  app.get("/favicon.ico", { config: PUBLIC }, async (_req, reply) =>
    reply.type("image/svg+xml").header("cache-control", "max-age=86400").send(FAVICON),
  );

  // MCP over streamable HTTP, stateless: one server per request, acting as the token's actor.
  const mcp = async (req: FastifyRequest, reply: FastifyReply) => {
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
      enableDnsRebindingProtection: true,
      allowedHosts: hosts.hostList(),
    });
    const server = mcpServer(ctx, req.actor, pkg.version);
    reply.hijack();
    reply.raw.on("close", () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await waitingAtMost(STORE_BUSY_WAIT_MS, () => transport.handleRequest(req.raw, reply.raw, req.body));
  };
  app.post("/mcp", mcp);
  app.get("/mcp", mcp);
  app.delete("/mcp", mcp);

  app.get("/", { config: PUBLIC }, async (_req, reply) => {
    const f = await consoleFile("index.html", options.consoleDir);
    return reply.type(f.type).send(f.body);
  });
  app.get("/console/*", { config: PUBLIC }, async (req, reply) => {
    const f = await consoleFile((req.params as { "*": string })["*"], options.consoleDir);
    return reply.type(f.type).send(f.body);
  });

  return {
    app,
    ctx,
    auth,
    routes,
    endpoints,
    openapi,
    async listen() {
      const address = await app.listen({ host, port });
      port = (app.server.address() as { port: number }).port;
      return address.replace("[::1]", "127.0.0.1");
    },
    async close() {
      // Live board streams end first: an open stream would hold its connection through the close.
      ctx.boardFeed.close();
      // Hosted workers stop as a CLI worker does on SIGTERM: their runs stopped, entries left for another worker.
      await ctx.workers.stopAll();
      await app.close();
      await Promise.all([...ctx.inFlight]);
    },
  };
}
