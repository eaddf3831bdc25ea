import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { TOKENS, type TestServer } from "./helpers.js";

export interface ToolResult {
  isError?: boolean;
  content: Array<{ type: string; text: string }>;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests inspect results freely
  structuredContent?: any;
}

/**
 * The official SDK client over streamable HTTP with `actor`'s token. Tools are listed first so the
 * client checks every structured result against the tool's output schema (it does so once listed).
 */
export async function httpClient(s: TestServer, actor: keyof typeof TOKENS): Promise<Client> {
  const client = new Client({ name: "pmagent-test", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${TOKENS[actor]}` } },
    }),
  );
  await client.listTools();
  return client;
}

export async function call(client: Client, name: string, args: Record<string, unknown> = {}): Promise<ToolResult> {
  return (await client.callTool({ name, arguments: args })) as ToolResult;
}

/** A tool call that must succeed: its result, or a failure naming the tool's error text. */
export async function ok(client: Client, name: string, args: Record<string, unknown> = {}): Promise<ToolResult> {
  const r = await call(client, name, args);
  if (r.isError) throw new Error(`${name} failed: ${r.content[0]?.text}`);
  return r;
}

/** A tool call that must fail: the error text the model reads. */
export async function refused(client: Client, name: string, args: Record<string, unknown> = {}): Promise<string> {
  const r = await call(client, name, args);
  if (!r.isError) throw new Error(`${name} succeeded but was expected to fail: ${r.content[0]?.text}`);
  return r.content[0]!.text;
}

export const text = (r: ToolResult): string => r.content[0]!.text;
