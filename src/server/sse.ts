import type { FastifyReply, FastifyRequest } from "fastify";
import { contentHash, UsageError } from "../core/index.js";
import { isTerminalRunState } from "../lattice/index.js";
import type { ServerContext } from "./context.js";

export const SSE_POLL_MS = 250;
/** Events read per poll of a run's stream; a full page is followed at once by the next. */
const SSE_PAGE = 500;

function open(request: FastifyRequest, reply: FastifyReply, extraHeaders: Record<string, string>): { send(event: string, data: unknown, id?: number): void; closed(): boolean } {
  reply.hijack();
  const res = reply.raw;
  res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache", connection: "keep-alive", "x-accel-buffering": "no", ...extraHeaders });
  let closed = false;
  request.raw.on("close", () => (closed = true));
  res.write("retry: 1000\n\n");
  return {
    send(event, data, id) {
      if (!closed) res.write(`${id !== undefined ? `id: ${id}\n` : ""}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    },
    closed: () => closed || res.destroyed,
  };
}

/**
 * Run a stream's loop; a failure (e.g. the database busy) ends the response with an `error` event,
 * so the client's EventSource reconnects (with Last-Event-ID) instead of hanging on a dead stream.
 */
async function untilError(sse: { send(event: string, data: unknown): void }, reply: FastifyReply, loop: () => Promise<void>): Promise<void> {
  try {
    await loop();
  } catch (err) {
    sse.send("error", { code: (err as { code?: string }).code ?? "stream_failed", message: "the live stream failed; reconnecting resumes it" });
  } finally {
    reply.raw.end();
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `Last-Event-ID` (a reconnecting EventSource) or `?after=`: the last event seq the client has. */
export function lastSeq(request: FastifyRequest): number {
  const header = request.headers["last-event-id"];
  const raw = typeof header === "string" && header !== "" ? header : (request.query as { after?: string }).after;
  if (raw === undefined) return 0;
  if (!/^\d+$/.test(raw)) throw new UsageError("invalid_last_event_id", `Last-Event-ID / after must be an event seq (a whole number), got "${raw}"`);
  return Number(raw);
}

/**
 * Live events of a run: every stored event after the client's last one, each with `id: seq`, then
 * new ones as they are stored, until the run has finished (`end`, whose id is the last seq sent).
 * Polls the store, so events stored by any worker process are seen. An EventSource reconnects when a
 * response ends: a reconnect (Last-Event-ID) to a finished run with nothing new is answered 204 No
 * Content, which tells the browser to stop, so a client that missed `end` does not loop forever.
 */
export async function streamRunEvents(ctx: ServerContext, request: FastifyRequest, reply: FastifyReply, runId: string, headers: Record<string, string>): Promise<void> {
  let after = lastSeq(request);
  const reconnect = typeof request.headers["last-event-id"] === "string" && request.headers["last-event-id"] !== "";
  const first = await ctx.supervisor.runs.get(runId);
  if (reconnect && isTerminalRunState(first.state) && (await ctx.supervisor.runs.events(runId, { afterSeq: after, order: "seq", limit: 1 })).length === 0) {
    await reply.code(204).send();
    return;
  }
  const sse = open(request, reply, headers);
  let lastState = "";
  await untilError(sse, reply, async () => {
    while (!sse.closed()) {
      // In stored order, a page at a time: the cursor (`after`, the client's Last-Event-ID) then
      // moves forward only, so no event is sent twice, and a long run's backlog is never read whole.
      const events = await ctx.supervisor.runs.events(runId, { afterSeq: after, order: "seq", limit: SSE_PAGE });
      for (const e of events) {
        sse.send("lattice_event", ctx.redactor.redactValue(e), e.seq);
        after = e.seq;
      }
      if (events.length === SSE_PAGE) continue;
      const run = await ctx.supervisor.runs.get(runId);
      const state = `${run.state}/${run.updated_at}`;
      if (state !== lastState) {
        sse.send("run", ctx.redactor.redactValue(run));
        lastState = state;
      }
      if (isTerminalRunState(run.state) && events.length === 0) {
        sse.send("end", { state: run.state }, after);
        break;
      }
      await sleep(SSE_POLL_MS);
    }
  });
}

/** Live board: every entry of the project, sent again whenever one changes (a new version). */
export async function streamEntries(ctx: ServerContext, request: FastifyRequest, reply: FastifyReply, headers: Record<string, string>): Promise<void> {
  const sse = open(request, reply, headers);
  let last = "";
  let n = 0;
  await untilError(sse, reply, async () => {
    while (!sse.closed()) {
      const list = await ctx.board.list();
      const hash = contentHash(list.map((s) => [s.entry.id, s.version]));
      if (hash !== last) {
        sse.send("entries", ctx.redactor.redactValue(list), ++n);
        last = hash;
      }
      await sleep(SSE_POLL_MS * 2);
    }
  });
}
