/**
 * A local stand-in for the Gemini API's streaming generation (`POST
 * /v1beta/models/{model}:streamGenerateContent?alt=sse`) on 127.0.0.1, for tests that drive the
 * real Gemini CLI (GOOGLE_GEMINI_BASE_URL). Replies are scripted in order, each sent as the API
 * streams it: `data:` chunks of GenerateContentResponse (candidates[].content.parts: text, or a
 * functionCall), the last with finishReason STOP and usageMetadata. countTokens is answered too.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";
import { bodyText, listenLoopback } from "./loopback.js";

/** A reply's usageMetadata (default 30 prompt, 7 candidates, 37 total tokens). */
export interface FakeGeminiUsage {
  promptTokenCount: number;
  candidatesTokenCount: number;
  totalTokenCount: number;
  cachedContentTokenCount?: number;
  thoughtsTokenCount?: number;
}

/** `stall`: the first chunk of this text, then nothing, the connection kept open; `malformed`: a 200 stream whose chunk is not JSON. */
export type FakeGeminiReply =
  | (({ text: string; stall?: true } | { call: { name: string; args: Record<string, unknown> } }) & {
      usage?: FakeGeminiUsage;
    })
  | { status: number; message?: string }
  | { malformed: true };

export interface FakeGemini {
  baseURL: string;
  /** The recorded generation requests. */
  requests: Array<{ path: string; headers: IncomingHttpHeaders; body: Record<string, unknown> }>;
  reply(...replies: FakeGeminiReply[]): void;
  close(): Promise<void>;
}

export async function startFakeGemini(): Promise<FakeGemini> {
  const queue: FakeGeminiReply[] = [];
  const requests: FakeGemini["requests"] = [];
  const hanging = new Set<ServerResponse>();
  const server = createServer((req, res) => void handle(req, res));

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await bodyText(req);
    const url = req.url ?? "";
    const body = JSON.parse(raw || "{}") as Record<string, unknown>;
    if (req.method === "POST" && url.includes(":countTokens")) return sendJson(res, 200, { totalTokens: 10 });
    if (req.method !== "POST" || !url.includes(":streamGenerateContent"))
      return sendJson(res, 404, {
        error: { code: 404, message: `Not found: ${req.method} ${url}`, status: "NOT_FOUND" },
      });
    requests.push({ path: url, headers: req.headers, body });
    const reply = queue.shift();
    if (!reply)
      return sendJson(res, 500, {
        error: { code: 500, message: "fake-gemini: no scripted reply left for this request", status: "INTERNAL" },
      });
    if ("status" in reply)
      return sendJson(res, reply.status, {
        error: {
          code: reply.status,
          message: reply.message ?? `status ${reply.status}`,
          status: reply.status === 400 ? "INVALID_ARGUMENT" : "INTERNAL",
        },
      });
    res.writeHead(200, { "content-type": "text/event-stream" });
    if ("malformed" in reply) return void res.end("data: {this is not json\r\n\r\n");
    const send = (parts: unknown[], last: boolean) =>
      res.write(
        `data: ${JSON.stringify({ candidates: [{ content: { role: "model", parts }, index: 0, ...(last ? { finishReason: "STOP" } : {}) }], ...(last ? { usageMetadata: reply.usage ?? { promptTokenCount: 30, candidatesTokenCount: 7, totalTokenCount: 37 } } : {}), modelVersion: "fake" })}\r\n\r\n`,
      );
    if ("text" in reply) {
      const pieces = reply.text.match(/.{1,9}/gs) ?? [""];
      if (reply.stall) {
        send([{ text: pieces[0] }], false);
        hanging.add(res);
        return;
      }
      pieces.forEach((p, i) => send([{ text: p }], i === pieces.length - 1));
    } else {
      send([{ functionCall: { name: reply.call.name, args: reply.call.args } }], true);
    }
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

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(value));
}
