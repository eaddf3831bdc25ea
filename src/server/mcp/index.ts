// The MCP sub-module of the server: the HTTP API's surface as MCP tools, resources and prompts.
export { mcpServer, stdioActor, MCP_TOOL_NAMES } from "./server.js";
