/**
 * A local stand-in for the OpenAI Responses API (`POST /v1/responses`) on 127.0.0.1, for tests that
 * drive the real `openai` SDK. Replies are scripted in order; each request is recorded.
 *
 *   const fake = await startFakeOpenAI();
 *   fake.reply({ text: "hello" }, { status: 429 }, { json: { ok: true } });
 *   new OpenAI({ apiKey: "test", baseURL: fake.baseURL });
 *   fake.requests[0].body; await fake.close();
 *
 * A text reply is sent as plain JSON, or as server-sent events when the request has
 * `stream: true`, in the documented order: response.created, response.in_progress,
 * response.output_item.added, response.content_part.added, response.output_text.delta…,
 * response.output_text.done, response.content_part.done, response.output_item.done,
 * response.completed (with usage). A `calls` reply answers with function calls instead
 * (response.output_item.added, response.function_call_arguments.delta…/done,
 * response.output_item.done per call). Failures are scripted too: HTTP errors, a failed or incomplete
 * response, an `error` event mid-stream, a connection dropped before the end, a stream that is not JSON.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";
import { bodyText, listenLoopback } from "./loopback.js";

export interface FakeUsage {
  input_tokens: number;
  output_tokens: number;
  /** Of the input, cached (input_tokens_details.cached_tokens; default 0). */
  cached_tokens?: number;
  /** Of the output, reasoning (output_tokens_details.reasoning_tokens; default 0). */
  reasoning_tokens?: number;
}

/**
 * How an answer ends: `incomplete` (with a reason) stops early; `truncated` drops the connection
 * before the end; `stall` stops sending after the text deltas and keeps the connection open.
 */
export interface FakeAnswerEnd {
  usage?: FakeUsage;
  incomplete?: string;
  truncated?: boolean;
  stall?: boolean;
}

export type FakeReply =
  /** An assistant message with this text (or this value as JSON text). */
  | ({ text: string } & FakeAnswerEnd)
  | ({ json: unknown } & FakeAnswerEnd)
  /**
   * Function calls (`function_call` output items); `arguments` that is not a string is sent as JSON
   * text; `namespace`: the call is to a tool of a namespace tool (as MCP servers' tools are offered). `bareCompleted`: streaming, response.completed has an empty `output`, as some compatible
   * servers send it (the items came in response.output_item.done). `text`: an assistant message
   * before the calls (the model saying what it is about to do).
   */
  | ({
      calls: Array<{ name: string; arguments: unknown; call_id?: string; namespace?: string }>;
      bareCompleted?: boolean;
      text?: string;
    } & FakeAnswerEnd)
  /** The model refuses (an output `refusal` part). */
  | ({ refusal: string } & FakeAnswerEnd)
  /** The response fails (`status: "failed"`, `response.failed` when streaming). */
  | { failed: string }
  /** Streaming: an `error` event after `response.created`; plain JSON: a 500 with this message. */
  | { streamError: string }
  /** An HTTP error with the API's error body; `retryAfter` (seconds) sets the Retry-After header. */
  | { status: number; message?: string; retryAfter?: number }
  /** Accept the request and never answer (client timeouts). */
  | { hang: true }
  /** Hold the request until `until` settles, then answer it with `then` (a test sees the agent mid-turn). */
  | { until: Promise<unknown>; then: FakeReply }
  /** A 200 event stream whose only event is not JSON. */
  | { malformed: true };

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The parsed JSON body. */
  body: Record<string, unknown>;
}

export interface FakeOpenAI {
  /** Base URL for the SDK (`…/v1`). */
  baseURL: string;
  requests: RecordedRequest[];
  /** Settles once `count` requests have arrived (a test waits on the agent's request, not a timer). */
  requested(count: number): Promise<void>;
  /** Queue replies, answered in order; a request with nothing queued gets a 500 saying so. */
  reply(...replies: FakeReply[]): void;
  /** Replies still queued. */
  pending(): number;
  close(): Promise<void>;
}

export async function startFakeOpenAI(): Promise<FakeOpenAI> {
  const queue: FakeReply[] = [];
  const requests: RecordedRequest[] = [];
  const hanging = new Set<ServerResponse>();
  const waiters: Array<{ count: number; resolve: () => void }> = [];
  let counter = 0;

  const server = createServer((req, res) => {
    void handle(req, res);
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await bodyText(req);
    let body: Record<string, unknown>;
    try {
      body = raw === "" ? {} : (JSON.parse(raw) as Record<string, unknown>);
    } catch {
      return sendError(res, 400, "We could not parse the JSON body of your request.");
    }
    requests.push({ method: req.method ?? "", path: req.url ?? "", headers: req.headers, body });
    for (const w of waiters.filter((w) => requests.length >= w.count)) {
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve();
    }
    if (req.method !== "POST" || req.url !== "/v1/responses")
      return sendError(res, 404, `Invalid URL (${req.method} ${req.url})`);
    let reply = queue.shift();
    if (reply === undefined) return sendError(res, 500, "fake-openai: no scripted reply left for this request");
    while ("until" in reply) {
      await reply.until;
      reply = reply.then;
    }
    if ("hang" in reply) {
      hanging.add(res);
      return;
    }
    if ("malformed" in reply) {
      res.writeHead(200, { "content-type": "text/event-stream" });
      return void res.end("event: response.created\ndata: {this is not json\n\n");
    }
    if ("status" in reply) {
      const headers: Record<string, string> =
        reply.retryAfter === undefined ? {} : { "retry-after": String(reply.retryAfter) };
      return sendError(res, reply.status, reply.message ?? defaultMessage(reply.status), headers);
    }
    counter += 1;
    const ids = { response: `resp_fake${counter}`, message: `msg_fake${counter}` };
    const stream = body.stream === true;
    if ("streamError" in reply) {
      if (!stream) return sendError(res, 500, reply.streamError);
      const send = openStream(res);
      send("response.created", { response: responseObject(body, ids.response, "in_progress", [], null) });
      send("error", { code: "server_error", message: reply.streamError, param: null });
      return void res.end();
    }
    if ("failed" in reply) {
      const failed = {
        ...responseObject(body, ids.response, "failed", [], null),
        error: { code: "server_error", message: reply.failed },
      };
      if (!stream) return sendJson(res, 200, failed);
      const send = openStream(res);
      send("response.created", { response: responseObject(body, ids.response, "in_progress", [], null) });
      send("response.failed", { response: failed });
      return void res.end();
    }
    if ("calls" in reply) {
      const calls = reply.calls.map((c, i) => ({
        id: `fc_fake${counter}_${i}`,
        type: "function_call",
        status: "completed",
        call_id: c.call_id ?? `call_fake${counter}_${i}`,
        name: c.name,
        ...(c.namespace === undefined ? {} : { namespace: c.namespace }),
        arguments: typeof c.arguments === "string" ? c.arguments : JSON.stringify(c.arguments),
      }));
      const said =
        reply.text === undefined
          ? []
          : [
              messageItem(ids.message, "completed", [
                { type: "output_text", text: reply.text, annotations: [], logprobs: [] },
              ]),
            ];
      const items: Array<Record<string, unknown>> = [...said, ...calls];
      const usage = reply.usage ?? {
        input_tokens: Math.ceil(raw.length / 4),
        output_tokens: calls.reduce((n, it) => n + Math.ceil(it.arguments.length / 4), 0),
      };
      if (!stream) return sendJson(res, 200, responseObject(body, ids.response, "completed", items, usage));
      const send = openStream(res);
      send("response.created", { response: responseObject(body, ids.response, "in_progress", [], null) });
      send("response.in_progress", { response: responseObject(body, ids.response, "in_progress", [], null) });
      if (said[0]) {
        const part = (said[0].content as unknown[])[0];
        send("response.output_item.added", { output_index: 0, item: messageItem(ids.message, "in_progress", []) });
        send("response.content_part.added", {
          output_index: 0,
          item_id: ids.message,
          content_index: 0,
          part: { type: "output_text", text: "", annotations: [], logprobs: [] },
        });
        send("response.output_text.delta", {
          output_index: 0,
          item_id: ids.message,
          content_index: 0,
          delta: reply.text,
          logprobs: [],
        });
        send("response.output_text.done", {
          output_index: 0,
          item_id: ids.message,
          content_index: 0,
          text: reply.text,
          logprobs: [],
        });
        send("response.content_part.done", { output_index: 0, item_id: ids.message, content_index: 0, part });
        send("response.output_item.done", { output_index: 0, item: said[0] });
      }
      calls.forEach((item, i) => {
        const output_index = said.length + i;
        send("response.output_item.added", { output_index, item: { ...item, status: "in_progress", arguments: "" } });
        for (let k = 0; k < item.arguments.length; k += 11)
          send("response.function_call_arguments.delta", {
            output_index,
            item_id: item.id,
            delta: item.arguments.slice(k, k + 11),
          });
        send("response.function_call_arguments.done", {
          output_index,
          item_id: item.id,
          name: item.name,
          arguments: item.arguments,
        });
        send("response.output_item.done", { output_index, item });
      });
      send("response.completed", {
        response: responseObject(body, ids.response, "completed", reply.bareCompleted ? [] : items, usage),
      });
      return void res.end();
    }
    const part =
      "refusal" in reply
        ? { type: "refusal", refusal: reply.refusal }
        : {
            type: "output_text",
            text: "text" in reply ? reply.text : JSON.stringify(reply.json),
            annotations: [],
            logprobs: [],
          };
    const produced = part.type === "refusal" ? (part.refusal as string) : (part.text as string);
    const usage = reply.usage ?? {
      input_tokens: Math.ceil(raw.length / 4),
      output_tokens: Math.ceil(produced.length / 4),
    };
    if (reply.stall) hanging.add(res);
    if (stream) return streamResponse(res, { body, part, ids, usage, end: reply });
    if (reply.stall) return;
    if (reply.truncated) return void res.destroy();
    const status = reply.incomplete === undefined ? "completed" : "incomplete";
    const response = responseObject(body, ids.response, status, [messageItem(ids.message, status, [part])], usage);
    sendJson(
      res,
      200,
      reply.incomplete === undefined ? response : { ...response, incomplete_details: { reason: reply.incomplete } },
    );
  }

  const { origin, close } = await listenLoopback(server, hanging);
  return {
    baseURL: `${origin}/v1`,
    requests,
    requested: (count) =>
      requests.length >= count ? Promise.resolve() : new Promise((resolve) => waiters.push({ count, resolve })),
    reply: (...replies) => void queue.push(...replies),
    pending: () => queue.length,
    close,
  };
}

function defaultMessage(status: number): string {
  if (status === 429) return "Rate limit reached for requests. Please try again later.";
  if (status >= 500) return "The server had an error while processing your request. Sorry about that!";
  return `Request failed with status ${status}.`;
}

function sendJson(res: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "content-type": "application/json", "x-request-id": `req_fake_${Date.now()}`, ...headers });
  res.end(JSON.stringify(value));
}

function sendError(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
  const type = status === 429 ? "requests" : status >= 500 ? "server_error" : "invalid_request_error";
  const code = status === 429 ? "rate_limit_exceeded" : null;
  sendJson(res, status, { error: { message, type, param: null, code } }, headers);
}

function messageItem(
  id: string,
  status: "in_progress" | "completed" | "incomplete",
  content: unknown[],
): Record<string, unknown> {
  return { id, type: "message", status, role: "assistant", content };
}

function usageObject(usage: FakeUsage): Record<string, unknown> {
  return {
    input_tokens: usage.input_tokens,
    input_tokens_details: { cached_tokens: usage.cached_tokens ?? 0 },
    output_tokens: usage.output_tokens,
    output_tokens_details: { reasoning_tokens: usage.reasoning_tokens ?? 0 },
    total_tokens: usage.input_tokens + usage.output_tokens,
  };
}

function responseObject(
  body: Record<string, unknown>,
  id: string,
  status: string,
  output: unknown[],
  usage: FakeUsage | null,
): Record<string, unknown> {
  return {
    id,
    object: "response",
    created_at: Math.floor(Date.now() / 1000),
    status,
    error: null,
    incomplete_details: null,
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    model: body.model ?? null,
    output,
    parallel_tool_calls: true,
    previous_response_id: null,
    reasoning: { effort: null, summary: null },
    store: body.store ?? true,
    temperature: 1,
    text: body.text ?? { format: { type: "text" } },
    tool_choice: "auto",
    tools: [],
    top_p: 1,
    truncation: "disabled",
    usage: usage === null ? null : usageObject(usage),
    metadata: {},
  };
}

/** Start a server-sent event stream; the returned function sends one event with its sequence number. */
function openStream(res: ServerResponse): (type: string, data: Record<string, unknown>) => void {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
  let sequence = 0;
  return (type, data) => {
    res.write(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence++, ...data })}\n\n`);
  };
}

/** One answer to stream: the request's body, the message's content part, its ids and usage, and how it ends. */
interface StreamedAnswer {
  body: Record<string, unknown>;
  part: Record<string, unknown>;
  ids: { response: string; message: string };
  usage: FakeUsage;
  end: FakeAnswerEnd;
}

function streamResponse(res: ServerResponse, answer: StreamedAnswer): void {
  const { body, part, ids, usage, end } = answer;
  const send = openStream(res);
  const at = { output_index: 0, item_id: ids.message, content_index: 0 };
  send("response.created", { response: responseObject(body, ids.response, "in_progress", [], null) });
  send("response.in_progress", { response: responseObject(body, ids.response, "in_progress", [], null) });
  send("response.output_item.added", { output_index: 0, item: messageItem(ids.message, "in_progress", []) });
  if (part.type === "refusal") {
    send("response.content_part.added", { ...at, part: { type: "refusal", refusal: "" } });
    send("response.refusal.delta", { ...at, delta: part.refusal });
    send("response.refusal.done", { ...at, refusal: part.refusal });
  } else {
    const text = part.text as string;
    send("response.content_part.added", {
      ...at,
      part: { type: "output_text", text: "", annotations: [], logprobs: [] },
    });
    // Several deltas, split mid-token as real streams are.
    for (let i = 0; i < text.length; i += 7)
      send("response.output_text.delta", { ...at, delta: text.slice(i, i + 7), logprobs: [] });
    send("response.output_text.done", { ...at, text, logprobs: [] });
  }
  if (end.stall) return;
  if (end.truncated) return void res.end();
  send("response.content_part.done", { ...at, part });
  const status = end.incomplete === undefined ? "completed" : "incomplete";
  const item = messageItem(ids.message, status, [part]);
  send("response.output_item.done", { output_index: 0, item });
  const response = responseObject(body, ids.response, status, [item], usage);
  if (end.incomplete === undefined) send("response.completed", { response });
  else send("response.incomplete", { response: { ...response, incomplete_details: { reason: end.incomplete } } });
  res.end();
}
