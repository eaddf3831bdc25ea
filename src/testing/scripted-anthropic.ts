/**
 * A local stand-in for the Anthropic Messages API (`POST /v1/messages`, streaming) on 127.0.0.1,
 * for tests that drive the real Claude Code CLI. Replies are scripted in order; each request is
 * recorded. A reply streams as the API documents: message_start, then per content block
 * content_block_start, content_block_delta (text_delta, or input_json_delta for a tool_use),
 * content_block_stop, then message_delta (stop_reason end_turn or tool_use, usage) and message_stop.
 *
 *   const fake = await startFakeAnthropic();
 *   fake.reply({ tool: { name: "Bash", input: { command: "ls" } } }, { text: "done" });
 *   // ANTHROPIC_BASE_URL=fake.baseURL
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";
import { bodyText, listenLoopback } from "./loopback.js";

/** The usage a reply reports (default 25 input, 12 output tokens): message_start carries the input side, message_delta the output. */
export interface FakeAnthropicUsage {
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens?: number;
  cache_creation_input_tokens?: number;
}

/** `stall`: message_start, then nothing, the connection kept open; `malformed`: a 200 stream whose event is not JSON. */
export type FakeAnthropicReply =
  | (({ text: string } | { tool: { name: string; input: Record<string, unknown> } }) & { usage?: FakeAnthropicUsage })
  | { status: number; message?: string }
  | { stall: true }
  | { malformed: true };

export interface RecordedAnthropicRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: Record<string, unknown>;
}

export interface FakeAnthropic {
  /** For ANTHROPIC_BASE_URL (no /v1: the client adds it). */
  baseURL: string;
  /** The recorded POST /v1/messages requests (other calls are answered 404 and not kept). */
  requests: RecordedAnthropicRequest[];
  reply(...replies: FakeAnthropicReply[]): void;
  close(): Promise<void>;
}

export async function startFakeAnthropic(): Promise<FakeAnthropic> {
  const queue: FakeAnthropicReply[] = [];
  const requests: RecordedAnthropicRequest[] = [];
  let counter = 0;
  const hanging = new Set<ServerResponse>();
  const server = createServer((req, res) => void handle(req, res));

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await bodyText(req);
    const path = (req.url ?? "").split("?")[0];
    if (req.method !== "POST" || path !== "/v1/messages")
      return sendError(res, 404, "not_found_error", `Not found: ${req.method} ${req.url}`);
    const body = JSON.parse(raw || "{}") as Record<string, unknown>;
    requests.push({ method: req.method, path: req.url ?? "", headers: req.headers, body });
    const reply = queue.shift();
    if (!reply) return sendError(res, 500, "api_error", "fake-anthropic: no scripted reply left for this request");
    if ("status" in reply)
      return sendError(
        res,
        reply.status,
        reply.status === 400 ? "invalid_request_error" : "api_error",
        reply.message ?? `status ${reply.status}`,
      );
    counter += 1;
    res.writeHead(200, {
      "content-type": "text/event-stream",
      "cache-control": "no-cache",
      "request-id": `req_fake${counter}`,
    });
    if ("malformed" in reply) return void res.end("event: message_start\ndata: {this is not json\n\n");
    const send = (type: string, data: Record<string, unknown>) =>
      res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
    const { output_tokens: outputTokens, ...inputSide } = ("usage" in reply ? reply.usage : undefined) ?? {
      input_tokens: 25,
      output_tokens: 12,
    };
    send("message_start", {
      message: {
        id: `msg_fake${counter}`,
        type: "message",
        role: "assistant",
        model: body.model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { ...inputSide, output_tokens: 1 },
      },
    });
    if ("stall" in reply) {
      hanging.add(res);
      return;
    }
    if ("text" in reply) {
      send("content_block_start", { index: 0, content_block: { type: "text", text: "" } });
      for (let i = 0; i < reply.text.length; i += 7)
        send("content_block_delta", { index: 0, delta: { type: "text_delta", text: reply.text.slice(i, i + 7) } });
    } else {
      send("content_block_start", {
        index: 0,
        content_block: { type: "tool_use", id: `toolu_fake${counter}`, name: reply.tool.name, input: {} },
      });
      const json = JSON.stringify(reply.tool.input);
      for (let i = 0; i < json.length; i += 11)
        send("content_block_delta", {
          index: 0,
          delta: { type: "input_json_delta", partial_json: json.slice(i, i + 11) },
        });
    }
    send("content_block_stop", { index: 0 });
    send("message_delta", {
      delta: { stop_reason: "text" in reply ? "end_turn" : "tool_use", stop_sequence: null },
      usage: { output_tokens: outputTokens },
    });
    send("message_stop", {});
    res.end();
  }

  const { origin, close } = await listenLoopback(server, hanging);
  return {
    baseURL: `${origin}`,
    requests,
    reply: (...replies) => void queue.push(...replies),
    close,
  };
}

function sendError(res: ServerResponse, status: number, type: string, message: string): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify({ type: "error", error: { type, message } }));
}
