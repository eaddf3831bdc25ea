import type { FastifyReply, FastifyRequest } from "fastify";
import type { StoredEntry } from "../blackboard/index.js";
import { UsageError } from "../core/index.js";
import { isTerminalRunState, runProgressWaker } from "../lattice/index.js";
import type { ServerContext } from "./context.js";

export const SSE_POLL_MS = 250;
/** Events read per poll of a run's stream; a full page is followed at once by the next. */
const SSE_PAGE = 500;
/** A comment line this often keeps an idle stream open through proxies and finds a client gone. */
export const SSE_KEEPALIVE_MS = 15_000;
/** A client this far behind in reading (bytes queued for it) is cut off: its EventSource reconnects. */
const SSE_MAX_QUEUED = 8 * 1024 * 1024;

interface EventStream {
  send(event: string, data: unknown, id?: number): void;
  /** `send` with `data` already JSON (one serialization for many clients). */
  sendJson(event: string, json: string, id?: number): void;
  closed(): boolean;
  /** Resolves when the client has gone. */
  gone: Promise<void>;
}

function open(request: FastifyRequest, reply: FastifyReply, extraHeaders: Record<string, string>): EventStream {
  reply.hijack();
  const res = reply.raw;
  res.writeHead(200, {
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-cache",
    connection: "keep-alive",
    "x-accel-buffering": "no",
    ...extraHeaders,
  });
  let closed = false;
  let left!: () => void;
  const gone = new Promise<void>((resolve) => (left = resolve));
  const keepAlive = setInterval(() => write(": keep-alive\n\n"), SSE_KEEPALIVE_MS);
  const stop = () => {
    closed = true;
    clearInterval(keepAlive);
    left();
  };
  // The client went away, or the response was ended here.
  request.raw.on("close", stop);
  res.on("close", stop);
  const write = (text: string) => {
    if (closed || res.destroyed) return;
    if (res.writableLength > SSE_MAX_QUEUED) {
      res.destroy();
      return;
    }
    res.write(text);
  };
  write("retry: 1000\n\n");
  const sendJson = (event: string, json: string, id?: number) =>
    write(`${id !== undefined ? `id: ${id}\n` : ""}event: ${event}\ndata: ${json}\n\n`);
  return {
    send: (event, data, id) => sendJson(event, JSON.stringify(data), id),
    sendJson,
    closed: () => closed || res.destroyed,
    gone,
  };
}

/**
 * Run a stream's loop; a failure (e.g. the database busy) ends the response with an `error` event,
 * so the client's EventSource reconnects (with Last-Event-ID) instead of hanging on a dead stream.
 */
async function untilError(
  sse: { send(event: string, data: unknown): void },
  reply: FastifyReply,
  loop: () => Promise<void>,
): Promise<void> {
  try {
    await loop();
  } catch (err) {
    sse.send("error", {
      code: (err as { code?: string }).code ?? "stream_failed",
      message: "the live stream failed; reconnecting resumes it",
    });
  } finally {
    reply.raw.end();
  }
}

/** `Last-Event-ID` (a reconnecting EventSource) or `?after=`: the last event seq the client has. */
export function lastSeq(request: FastifyRequest): number {
  const header = request.headers["last-event-id"];
  const raw = typeof header === "string" && header !== "" ? header : (request.query as { after?: string }).after;
  if (raw === undefined) return 0;
  if (!/^\d+$/.test(raw))
    throw new UsageError(
      "invalid_last_event_id",
      `Last-Event-ID / after must be an event seq (a whole number), got "${raw}"`,
    );
  return Number(raw);
}

/**
 * Live events of a run: every stored event after the client's last one, each with `id: seq`, then
 * new ones as they are stored, until the run has finished (`end`, whose id is the last seq sent).
 * With `?logs=1`, its log lines too (`logs`: an array of lines, each with its own seq; a client
 * that reconnects gets them all again and skips those it has). Woken by the store's notifications
 * of the run's writes (every process on PostgreSQL, this one on SQLite), and reads every
 * SSE_POLL_MS besides, so a worker process writing to SQLite is seen too. An EventSource
 * reconnects when a response ends: a reconnect (Last-Event-ID) to a finished run with nothing new
 * is answered 204 No Content, which tells the browser to stop, so a client that missed `end` does
 * not loop forever.
 */
export async function streamRunEvents(
  ctx: ServerContext,
  request: FastifyRequest,
  reply: FastifyReply,
  runId: string,
  headers: Record<string, string>,
): Promise<void> {
  let after = lastSeq(request);
  const withLogs = (request.query as { logs?: string }).logs === "1";
  const reconnect = typeof request.headers["last-event-id"] === "string" && request.headers["last-event-id"] !== "";
  const runs = ctx.supervisor.runs;
  const first = await runs.get(runId);
  if (
    reconnect &&
    isTerminalRunState(first.state) &&
    (await runs.events(runId, { afterSeq: after, order: "seq", limit: 1 })).length === 0
  ) {
    await reply.code(204).send();
    return;
  }
  const waker = await runProgressWaker(ctx.store, runId);
  const sse = open(request, reply, headers);
  let lastState = "";
  let logSeq = 0;
  void sse.gone.then(() => waker.close());
  await untilError(sse, reply, async () => {
    while (!sse.closed()) {
      // In stored order, a page at a time: the cursor (`after`, the client's Last-Event-ID) then
      // moves forward only, so no event is sent twice, and a long run's backlog is never read whole.
      const run = await runs.get(runId);
      const events = await runs.events(runId, { afterSeq: after, order: "seq", limit: SSE_PAGE });
      for (const e of events) {
        sse.send("lattice_event", ctx.redactor.redactValue(e), e.seq);
        after = e.seq;
      }
      const logs = withLogs ? await runs.logs(runId, { afterSeq: logSeq, limit: SSE_PAGE }) : [];
      if (logs.length > 0) {
        sse.send("logs", ctx.redactor.redactValue(logs));
        logSeq = logs[logs.length - 1]!.seq;
      }
      if (events.length === SSE_PAGE || logs.length === SSE_PAGE) continue;
      // The run was read before its events: one stored just before it finished is never missed.
      const state = `${run.state}/${run.updated_at}`;
      if (state !== lastState) {
        sse.send("run", ctx.redactor.redactValue(run));
        lastState = state;
      }
      if (isTerminalRunState(run.state)) {
        sse.send("end", { state: run.state }, after);
        break;
      }
      await waker.wait(SSE_POLL_MS);
    }
  });
  await waker.close();
}

/** Entries as sent, redacted and serialized once for every client (a feed hands them all the same array). */
const sentJson = new WeakMap<readonly StoredEntry[], string>();
function entriesJson(ctx: ServerContext, entries: readonly StoredEntry[]): string {
  let json = sentJson.get(entries);
  if (json === undefined) sentJson.set(entries, (json = JSON.stringify(ctx.redactor.redactValue(entries))));
  return json;
}

/**
 * Live board: `entries` (every entry of the project, in creation order) on connect, then `changes`
 * (the entries that changed, whole, each with its new version) as they happen, with the board's
 * history position as the event id. Served from the server's one BoardFeed: an idle board costs
 * one indexed read per poll whatever its size and however many watch, and each change is sent once
 * to each client. A reconnecting client gets the whole board again.
 */
export async function streamEntries(
  ctx: ServerContext,
  request: FastifyRequest,
  reply: FastifyReply,
  headers: Record<string, string>,
): Promise<void> {
  const sse = open(request, reply, headers);
  await untilError(sse, reply, async () => {
    // The feed ends a watch when it closes (the server stops) or fails (the stream then says so).
    let end!: (err: unknown) => void;
    const ended = new Promise<void>(
      (resolve, reject) => (end = (err) => (err === undefined ? resolve() : reject(err))),
    );
    const watch = await ctx.boardFeed.watch({
      changed: (entries, seq) => sse.sendJson("changes", entriesJson(ctx, entries), seq),
      ended: (err) => end(err),
    });
    try {
      sse.sendJson("entries", entriesJson(ctx, watch.entries), watch.seq);
      await Promise.race([sse.gone, ended]);
    } finally {
      watch.stop();
    }
  });
}
