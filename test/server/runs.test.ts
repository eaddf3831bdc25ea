import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Blackboard } from "../../src/blackboard/index.js";
import { appendFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redactor } from "../../src/core/index.js";
import { appendOutbox, RunIngestor, RunStore, type RunRecord } from "../../src/lattice/index.js";
import { SPEC_EVENTS } from "../lattice/helpers.js";
import { openSqliteTestStore, type TestStore } from "../helpers/stores.js";
import { TOKENS, readSse, startServer, type SseFrame, type TestServer } from "./helpers.js";
import { newRun } from "../helpers/runs.js";

const auth = (actor: keyof typeof TOKENS) => ({ authorization: `Bearer ${TOKENS[actor]}` });
const types = (frames: SseFrame[]) =>
  frames.filter((f) => f.event === "lattice_event").map((f) => (f.data as { event_type: string }).event_type);

describe("runs over HTTP: list, show, live events, resume, cancel", () => {
  let ts: TestStore;
  let s: TestServer;
  let waiting: RunRecord;

  beforeEach(async () => {
    ts = await openSqliteTestStore();
    s = await startServer(ts);
    const board = new Blackboard(ts.store, { projectId: "demo", humans: ["Human"] });
    await board.post("Human", { id: "w-1", to: "Builder", kind: "build_request" });
    const command = s.tp.sprite("wait", {
      steps: [
        { emit: "PHASE_STARTED", payload: { phase: "implement" } },
        { emit: "ARTIFACT", payload: { kind: "branch", ref: "sprite/w-1" } },
        { log: "working on it" },
        { waiting: { reason: "PR_REVIEW", expected_inputs: { approved: "boolean", comments: "array<string>" } } },
      ],
      on_resume: [{ emit: "COMPLETED", payload: { status: "success", summary: "resumed and done" } }],
    });
    waiting = await s.tp.supervisor().startRun({ role: "Builder", entryId: "w-1", command });
  });
  afterEach(async () => {
    await s.close();
    await ts.cleanup();
  });

  it("shows an event's identity that is not the run's as a protocol warning naming both values", async () => {
    const command = s.tp.sprite("other-id", {
      steps: [{ event: SPEC_EVENTS.info }, { emit: "COMPLETED", payload: { status: "success" } }],
    });
    const run = await s.tp.supervisor().startRun({ role: "Builder", command });
    expect(run.state).toBe("succeeded");
    const shown = await s.call("GET", `/v1/runs/${run.id}`);
    expect(shown.body.protocol_errors).toEqual([]);
    expect(shown.body.protocol_warnings.map((w: { reason: string }) => w.reason)).toEqual([
      `event sprite_id "sprite-42" differs from the run's sprite_id "${run.sprite_id}" (LATTICE_SPRITE_ID); the event is stored under this run`,
      `event work_item_id "issue-17" differs from the run's work_item_id "${run.work_item_id}" (LATTICE_WORK_ITEM_ID); the event is stored under this run`,
    ]);
    expect((await s.call("GET", `/v1/runs/${waiting.id}`)).body.protocol_warnings).toEqual([]);
  });

  it("shows a run's token usage and its cost by the config's prices", async () => {
    s.tp.project.config.prices = { m: { input_per_mtok: 4, output_per_mtok: 20, cached_input_per_mtok: 1 } };
    const command = s.tp.sprite("usage", {
      steps: [
        {
          emit: "INFO",
          payload: {
            message: "usage",
            kind: "token_usage",
            metadata: {
              model: "m",
              input_tokens: 2000,
              cached_input_tokens: 1000,
              output_tokens: 500,
              reasoning_tokens: 100,
            },
          },
        },
        { emit: "COMPLETED", payload: { status: "success" } },
      ],
    });
    const run = await s.tp.supervisor().startRun({ role: "Builder", command });
    const shown = await s.call("GET", `/v1/runs/${run.id}`);
    // 1000 uncached at 4, 1000 cached at 1, 500 out at 20 (per million).
    expect(shown.body.usage).toEqual({
      input_tokens: 2000,
      cached_input_tokens: 1000,
      output_tokens: 500,
      reasoning_tokens: 100,
      total_tokens: 2500,
      cost: 0.015,
      unpriced: [],
      models: [
        {
          model: "m",
          input_tokens: 2000,
          cached_input_tokens: 1000,
          output_tokens: 500,
          reasoning_tokens: 100,
          total_tokens: 2500,
          reports: 1,
          cost: 0.015,
        },
      ],
    });
    expect((await s.call("GET", `/v1/runs/${waiting.id}`)).body.usage).toMatchObject({
      total_tokens: 0,
      cost: 0,
      models: [],
    });
  });

  it("lists and shows runs, their events and logs", async () => {
    expect(waiting.state).toBe("waiting");
    expect((await s.call("GET", "/v1/runs?state=waiting")).body.items.map((r: { id: string }) => r.id)).toEqual([
      waiting.id,
    ]);
    expect((await s.call("GET", "/v1/runs?state=failed")).body).toEqual({ items: [], next: null });
    const shown = await s.call("GET", `/v1/runs/${waiting.id}`);
    expect(shown.body).toMatchObject({
      id: waiting.id,
      state: "waiting",
      protocol_errors: [],
      violations: [],
      waiting: { expected_inputs: { approved: "boolean", comments: "array<string>" } },
    });
    const events = await s.call("GET", `/v1/runs/${waiting.id}/events`);
    expect(events.body.items.map((e: { event_type: string }) => e.event_type)).toEqual([
      "PHASE_STARTED",
      "ARTIFACT",
      "WAITING",
    ]);
    const firstPage = (await s.call("GET", `/v1/runs/${waiting.id}/events?limit=1`)).body;
    expect(firstPage.items).toHaveLength(1);
    expect((await s.call("GET", `/v1/runs/${waiting.id}/events?cursor=${firstPage.next}`)).body.items).toHaveLength(2);
    expect(
      (await s.call("GET", `/v1/runs/${waiting.id}/logs?stream=stdout`)).body.map((l: { text: string }) => l.text),
    ).toContain("working on it");
    expect((await s.call("GET", `/v1/runs/${waiting.id}/logs?stream=nope`)).body.error.message).toContain("$.stream");
    const bad = async (query: string) => {
      const r = await s.call("GET", `/v1/runs/${waiting.id}/events?${query}`);
      expect(r.status).toBe(400);
      return r.body.error.message as string;
    };
    expect(await bad("order=seq")).toContain("$.order: order must be one of newest, oldest");
    expect(await bad("order=newest&limit=0")).toContain("$.limit: limit must be at least 1");
    expect(await bad("limit=501")).toContain("$.limit: limit must be at most 500");
    expect(await bad("cursor=xyz")).toContain("cursor is not valid for this list");
    expect(await bad("after=1")).toContain("Unrecognized key");
  });

  it("streams events as SSE with id = seq, and resumes after Last-Event-ID", async () => {
    const url = `${s.url}/v1/runs/${waiting.id}/events/stream`;
    const all = await readSse(url, auth("Human"), (f) => types(f).length === 3);
    expect(types(all)).toEqual(["PHASE_STARTED", "ARTIFACT", "WAITING"]);
    const ids = all.filter((f) => f.event === "lattice_event").map((f) => f.id);
    expect(ids).toEqual(["1", "2", "3"]);
    const rest = await readSse(url, { ...auth("Human"), "last-event-id": "1" }, (f) =>
      f.some((x) => x.event === "run"),
    );
    expect(types(rest)).toEqual(["ARTIFACT", "WAITING"]);
    const bad = await fetch(url, { headers: { ...auth("Human"), "last-event-id": "abc" } });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { message: string } }).error.message).toBe(
      'Last-Event-ID / after must be an event seq (a whole number), got "abc"',
    );
    expect((await fetch(url)).status).toBe(401);
    expect((await fetch(`${s.url}/v1/runs/nope/events/stream`, { headers: auth("Human") })).status).toBe(404);
  });

  it("streams the run's log lines with ?logs=1 (not without), each with its seq", async () => {
    const url = `${s.url}/v1/runs/${waiting.id}/events/stream`;
    const withLogs = await readSse(`${url}?logs=1`, auth("Human"), (f) => f.some((x) => x.event === "logs"));
    const lines = withLogs
      .filter((f) => f.event === "logs")
      .flatMap((f) => f.data as unknown as Array<{ seq: number; stream: string; text: string }>);
    expect(lines.map((l) => [l.seq, l.stream, l.text])).toEqual([[1, "stdout", "working on it"]]);
    const without = await readSse(url, auth("Human"), (f) => f.some((x) => x.event === "run"));
    expect(without.some((f) => f.event === "logs")).toBe(false);
  });

  /**
   * A finished run whose events `feed` stores through a real ingestor (its outbox path given), in
   * a directory removed afterwards.
   */
  async function storedRun(
    id: string,
    feed: (ing: RunIngestor, outbox: string) => Promise<void>,
    check: (run: RunRecord, runs: RunStore) => Promise<void>,
  ): Promise<void> {
    const dir = mkdtempSync(join(tmpdir(), "pmagent-sse-"));
    try {
      const runs = new RunStore(ts.store, "demo");
      const run = await runs.create(newRun(id, dir));
      const outbox = join(dir, "outbox.jsonl");
      const ing = new RunIngestor({
        store: ts.store,
        runId: run.id,
        attempt: 1,
        outboxPath: outbox,
        violationsPath: join(dir, "violations.log"),
        outbox: run.outbox,
        stdoutOffset: 0,
        stderrOffset: 0,
        logBytes: 0,
        logTruncated: false,
        redactor: new Redactor(),
      });
      await feed(ing, outbox);
      await ing.finish();
      await runs.update(run.id, { state: "succeeded", finished: true });
      await check(run, runs);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  const streamed = (runId: string, headers: Record<string, string> = {}) =>
    readSse(`${s.url}/v1/runs/${runId}/events/stream`, { ...auth("Human"), ...headers }, (f) =>
      f.some((x) => x.event === "end"),
    );

  it("streams in stored order, each event once, when the outbox order differs (an event seen on stdout first)", async () => {
    await storedRun(
      "run_order",
      async (ing, outbox) => {
        // B is stored from stdout first (seq 1); the outbox then shows A before B (A gets seq 2).
        ing.pushStdout(Buffer.from(`LATTICE_EVENT ${JSON.stringify(SPEC_EVENTS.phaseStarted)}\n`));
        await ing.poll();
        await ing.settle();
        appendOutbox(outbox, SPEC_EVENTS.info);
        appendOutbox(outbox, SPEC_EVENTS.phaseStarted);
        appendOutbox(outbox, SPEC_EVENTS.completed);
      },
      async (run, runs) => {
        // (seq 3 went to B's outbox copy, which was not stored again)
        expect((await runs.events(run.id)).map((e) => [e.seq, e.event_type])).toEqual([
          [2, "INFO"],
          [1, "PHASE_STARTED"],
          [4, "COMPLETED"],
        ]);
        const frames = await streamed(run.id);
        expect(frames.filter((f) => f.event === "lattice_event").map((f) => f.id)).toEqual(["1", "2", "4"]);
        expect(types(frames)).toEqual(["PHASE_STARTED", "INFO", "COMPLETED"]);
        // The API pages in stored order (seq); the outbox order is the run store's (and the stream's).
        const seqs = async (query: string) =>
          (await s.call("GET", `/v1/runs/${run.id}/events${query}`)).body.items.map((e: { seq: number }) => e.seq);
        expect(await seqs("")).toEqual([1, 2, 4]);
        expect(await seqs("?order=newest")).toEqual([4, 2, 1]);
      },
    );
  });

  it("streams a long run's backlog page by page, every event once, then ends", async () => {
    const n = 1234;
    await storedRun(
      "run_long",
      async (_ing, outbox) => {
        const lines = Array.from({ length: n }, (_, i) =>
          JSON.stringify({
            ...SPEC_EVENTS.info,
            timestamp: new Date(Date.parse("2026-01-15T10:30:00Z") + i).toISOString(),
          }),
        );
        appendFileSync(outbox, `${lines.join("\n")}\n`);
      },
      async (run) => {
        const ids = (await streamed(run.id, { "last-event-id": "10" }))
          .filter((f) => f.event === "lattice_event")
          .map((f) => Number(f.id));
        expect(ids).toEqual(Array.from({ length: n - 10 }, (_, i) => i + 11));
        // The same backlog over plain GET, page by page: cursor = the next of the page before.
        const paged: number[] = [];
        for (let cursor = "", pages = 1; ; pages++) {
          const page = (await s.call("GET", `/v1/runs/${run.id}/events?limit=500${cursor}`)).body as {
            items: Array<{ seq: number }>;
            next: string | null;
          };
          expect(page.items.length).toBeLessThanOrEqual(500);
          paged.push(...page.items.map((e) => e.seq));
          if (page.next === null) {
            expect(pages).toBe(3);
            break;
          }
          cursor = `&cursor=${page.next}`;
        }
        expect(paged).toEqual(Array.from({ length: n }, (_, i) => i + 1));
      },
    );
  });

  it("resumes a waiting run: 403 for another role, 400 for inputs that do not match, 202, then a no-op; the stream ends", async () => {
    const path = `/v1/runs/${waiting.id}/resume`;
    const other = await s.call("POST", path, { as: "Reviewer", body: { inputs: { approved: true, comments: [] } } });
    expect(other.status).toBe(403);
    expect(other.body.error.message).toMatch(/^Reviewer may not resume run /);
    const bad = await s.call("POST", path, { as: "Builder", body: { inputs: { approved: "yes" } } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain("inputs.approved: expected boolean, got string");
    const empty = await s.call("POST", path, {
      as: "Builder",
      body: { inputs: { approved: true, comments: ["lgtm"] }, message: " " },
    });
    expect([empty.status, empty.body.error]).toEqual([
      400,
      {
        code: "resume_message_empty",
        message: "the follow-up message is empty: write what the agent should be told, or give no message",
      },
    ]);
    const ok = await s.call("POST", path, {
      as: "Builder",
      body: { inputs: { approved: true, comments: ["lgtm"] }, message: "ship it" },
    });
    expect(ok.status).toBe(202);
    expect(ok.body.noop).toBe(false);
    const frames = await readSse(`${s.url}/v1/runs/${waiting.id}/events/stream`, auth("Human"), (f) =>
      f.some((x) => x.event === "end"),
    );
    expect(types(frames)).toEqual(["PHASE_STARTED", "ARTIFACT", "WAITING", "INFO", "COMPLETED"]);
    expect(frames.at(-1)).toEqual({ id: "5", event: "end", data: { state: "succeeded" } });
    // The follow-up message reached the sprite in its resume's context.
    const ack = (await s.call("GET", `/v1/runs/${waiting.id}/events?type=INFO`)).body.items[0].event.payload;
    expect(ack.metadata).toEqual({ inputs: { approved: true, comments: ["lgtm"] }, context: { message: "ship it" } });
    // A reconnect (Last-Event-ID = the end's id) to the finished run: 204 tells EventSource to stop.
    const url = `${s.url}/v1/runs/${waiting.id}/events/stream`;
    const reconnect = await fetch(url, { headers: { ...auth("Human"), "last-event-id": "5" } });
    expect([reconnect.status, await reconnect.text()]).toEqual([204, ""]);
    // A client that is behind still gets what it missed, then the end.
    expect(
      types(await readSse(url, { ...auth("Human"), "last-event-id": "3" }, (f) => f.some((x) => x.event === "end"))),
    ).toEqual(["INFO", "COMPLETED"]);
    const again = await s.call("POST", path, {
      as: "Builder",
      body: { inputs: { approved: true, comments: ["lgtm"] }, message: "ship it" },
    });
    expect(again.body.noop).toBe(true);
    const told = await s.call("POST", path, { body: { inputs: {}, message: "one more thing" } });
    expect([told.status, told.body.error.code]).toEqual([409, "run_not_waiting"]);
    expect(told.body.error.message).toBe(
      `run ${waiting.id} is succeeded, not waiting: only a waiting run can be resumed`,
    );
    const later = await s.call("POST", path, { body: { inputs: { approved: false, comments: [] } } });
    expect(later.status).toBe(409);
    expect(later.body.error.code).toBe("run_not_waiting");
    const cancel = await s.call("POST", `/v1/runs/${waiting.id}/cancel`);
    expect(cancel.status).toBe(409);
    expect(cancel.body.error.message).toBe(`run ${waiting.id} is already succeeded: nothing to cancel`);
    expect((await s.call("GET", "/v1/entries/w-1")).body.entry.status).toBe("done");
  });

  it("cancels a waiting run as a human; 403 for an actor outside the run", async () => {
    const refused = await s.call("POST", `/v1/runs/${waiting.id}/cancel`, { as: "Reviewer", body: {} });
    expect(refused.status).toBe(403);
    const canceled = await s.call("POST", `/v1/runs/${waiting.id}/cancel`, { body: { reason: "not needed" } });
    expect(canceled.body).toMatchObject({ state: "canceled", reason: "not needed" });
    expect(
      (await s.call("POST", `/v1/runs/${waiting.id}/cancel`, { body: { reason: "" } })).body.error.message,
    ).toContain("$.reason");
  });
});
