/** pmagent serve (HTTP API, SSE, OpenAPI, console) and pmagent mcp (MCP over stdio and HTTP). */
export { buildServer, DEFAULT_PORT, type ServerOptions, type PmagentServer } from "./app.js";
export { SESSION_COOKIE, HostPolicy } from "./access.js";
export { Auth, UnauthorizedError, tokenTable, assertMayListen } from "./auth.js";
export { serverContext, type ServerContext } from "./context.js";
export { httpError, type ErrorBody } from "./errors.js";
export { mcpServer, stdioActor, MCP_TOOL_NAMES } from "./mcp/index.js";
export { openApiDocument } from "./openapi.js";
export { apiRoutes } from "./routes.js";
export type { Route, Call } from "./route.js";

export { reloadConfig, type ConfigReload } from "./config-reload.js";
export type * from "./error-codes.js"; // the codes this module raises, merged into core's ErrorCodes
