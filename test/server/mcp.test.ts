import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { MCP_TOOL_NAMES } from "../../src/server/index.js";
import { CLI } from "../helpers/proc.js";
import { openSqliteTestStore, type TestStore } from "../helpers/stores.js";
import { TOKENS, startServer, type TestServer } from "./helpers.js";

type ToolResult = { isError?: boolean; content: Array<{ type: string; text: string }> };
const text = (r: unknown) => (r as ToolResult).content[0]!.text;
const json = (r: unknown) => JSON.parse(text(r)) as Record<string, unknown>;

async function httpClient(s: TestServer, token: string): Promise<Client> {
  const client = new Client({ name: "pmagent-test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  return client;
}

describe("MCP server", () => {
  let ts: TestStore;
  let s: TestServer;

  beforeEach(async () => {
    ts = await openSqliteTestStore();
    s = await startServer(ts);
  });
  afterEach(async () => {
    await s.close();
    await ts.cleanup();
  });

  it("over streamable HTTP at /mcp: every tool, input schemas from the zod schemas, acting as the token's actor", async () => {
    const client = await httpClient(s, TOKENS.Builder);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual([...MCP_TOOL_NAMES].sort());
      const change = tools.find((t) => t.name === "bb_change_status")!;
      expect(Object.keys(change.inputSchema.properties ?? {}).sort()).toEqual(["expected_version", "id", "note", "status"]);
      expect(change.inputSchema.required).toEqual(["id", "status"]);
      const posted = json(await client.callTool({ name: "bb_post", arguments: { entry: { id: "m-1", to: "Reviewer", kind: "review_request" } } }));
      expect(posted).toMatchObject({ entry: { id: "m-1", from: "Builder", to: "Reviewer" } });
      const forged = await client.callTool({ name: "bb_post", arguments: { entry: { id: "m-2", from: "Human", to: "Reviewer", kind: "review_request" } } });
      expect(forged.isError).toBe(true);
      expect(text(forged)).toMatch(/^permission_refused: /);
      const listed = json(await client.callTool({ name: "bb_show", arguments: { id: "m-1" } }));
      expect(listed).toMatchObject({ version: 1 });
      const moved = json(await client.callTool({ name: "bb_change_status", arguments: { id: "m-1", status: "canceled", expected_version: 1 } }));
      expect(moved).toMatchObject({ entry: { status: "canceled" } });
      const bad = await client.callTool({ name: "bb_change_status", arguments: { id: "m-1", status: "finished" } });
      expect(bad.isError).toBe(true);
      expect(text(bad)).toContain("status");
      const missing = await client.callTool({ name: "bb_show", arguments: { id: "nope" } });
      expect(text(missing)).toBe("entry_not_found: entry nope does not exist in project demo");
      const boot = json(await client.callTool({ name: "oa_boot", arguments: {} }));
      expect((boot.oa_boot_envelope as { kernel: { mode: string } }).kernel.mode).toBe("DEGRADED");
      expect(json(await client.callTool({ name: "oa_guard", arguments: { mode: "HINT" } }))).toMatchObject({ mode: "HINT" });
      expect(json(await client.callTool({ name: "oa_snapshot", arguments: {} }))).toMatchObject({ kernel_mode: "DEGRADED" });
      const lane = json(await client.callTool({ name: "kai_lane_status", arguments: { lane: "test/build" } }));
      expect(lane).toMatchObject({ status: "ok", payload: { kind: "lane_status_v1" } });
      expect(lane.notes).toContain("Evidence: 0 runs");
      const changed = json(await client.callTool({ name: "kai_what_changed", arguments: { time_window_days: 3 } }));
      expect(changed).toMatchObject({ status: "ok", payload: { kind: "what_changed_v1" } });
      const badLane = await client.callTool({ name: "kai_lane_status", arguments: { lane: "nolayer" } });
      expect(text(badLane)).toContain("expected LAYER/NAME, e.g. layer_b/doc_update");
      expect(json(await client.callTool({ name: "runs_list", arguments: {} }))).toEqual([]);
      const run = await client.callTool({ name: "runs_show", arguments: { id: "nope" } });
      expect(text(run)).toMatch(/^run_not_found: /);
    } finally {
      await client.close();
    }
  });

  it("over HTTP refuses a missing token (401) and a foreign Host header (DNS rebinding protection)", async () => {
    const client = new Client({ name: "pmagent-test", version: "1.0.0" });
    await expect(client.connect(new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`)))).rejects.toThrow(/401|bearer token/);
    const init = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-03-26", capabilities: {}, clientInfo: { name: "x", version: "1" } } };
    const { request } = await import("node:http");
    const port = new URL(s.url).port;
    const status = await new Promise<number>((resolve, reject) => {
      const req = request({ host: "127.0.0.1", port, path: "/mcp", method: "POST", headers: { host: `evil.example:${port}`, authorization: `Bearer ${TOKENS.Human}`, "content-type": "application/json", accept: "application/json, text/event-stream" } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on("error", reject);
      req.end(JSON.stringify(init));
    });
    expect(status).toBe(403);
  });

  it("over stdio (pmagent mcp --as): the same tools acting as that actor", async () => {
    const transport = new StdioClientTransport({ command: process.execPath, args: [CLI, "mcp", "--as", "Reviewer"], cwd: s.tp.root, env: { PATH: process.env.PATH ?? "", HOME: s.tp.root, ...ts.env }, stderr: "pipe" });
    const client = new Client({ name: "pmagent-test", version: "1.0.0" });
    await client.connect(transport);
    try {
      expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual([...MCP_TOOL_NAMES].sort());
      const posted = json(await client.callTool({ name: "bb_post", arguments: { entry: { id: "s-1", to: "Builder", kind: "build_request" } } }));
      expect(posted).toMatchObject({ entry: { id: "s-1", from: "Reviewer" } });
      // Written to the same store the HTTP server reads.
      expect((await s.call("GET", "/v1/entries/s-1")).body.entry.from).toBe("Reviewer");
      const listed = JSON.parse(text(await client.callTool({ name: "bb_list", arguments: { status: "open,in_progress" } }))) as unknown[];
      expect(listed).toHaveLength(1);
    } finally {
      await client.close();
    }
  });
});
