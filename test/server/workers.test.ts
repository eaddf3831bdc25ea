/**
 * Workers hosted by `pmagent serve` (GET/POST /v1/workers, DELETE /v1/workers/{id}), on the
 * server's one supervisor: a worker started over the API claims a posted entry and runs it; stopping
 * it stops its run under way and leaves the entry for another worker, as `pmagent worker` does on
 * SIGTERM. Bad inputs are refused with messages that say what to fix.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { WORKER_STOPPED } from "../../src/lattice/index.js";
import { availableStoreKinds, type TestStore } from "../helpers/stores.js";
import { scenarioSprite } from "../lattice/helpers.js";
import { eventually, startServer, type TestServer } from "./helpers.js";

const kinds = await availableStoreKinds();

describe.each(kinds)("workers hosted by serve on $name", (kind) => {
  let ts: TestStore;
  let s: TestServer;
  let dir: string;

  beforeEach(async () => {
    ts = await kind.open();
    dir = mkdtempSync(join(tmpdir(), "pmagent-hosted-workers-"));
    const ok = scenarioSprite(dir, "ok", {
      steps: [
        { log: "built by a hosted worker" },
        { emit: "COMPLETED", payload: { status: "success", summary: "built" } },
      ],
    });
    const slow = scenarioSprite(dir, "slow", {
      steps: [
        { log: "working" },
        { sleep: 60_000 },
        { emit: "COMPLETED", payload: { status: "success", summary: "late" } },
      ],
    });
    const lanes = [
      {
        layer: "test",
        name: "build",
        roles: [
          { name: "Builder", allowed_kinds: ["build_request"], runner: { command: ok } },
          { name: "Slow", allowed_kinds: ["slow_request"], runner: { command: slow } },
          {
            name: "Coder",
            allowed_kinds: ["code_request"],
            runner: { agent: "codex", model: "gpt-test" },
            credentials: ["OPENAI_API_KEY"],
          },
        ],
      },
    ];
    s = await startServer(ts, { config: { lanes, oa: { gate: false } } });
  });
  afterEach(async () => {
    await s.close();
    await ts.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  it("a human starts a worker for a role: it runs a posted entry to success on the server's supervisor; stopped, it says so", async () => {
    expect((await s.call("GET", "/v1/workers")).body).toEqual({ items: [] });
    const started = await s.call("POST", "/v1/workers", { body: { role: "Builder", concurrency: 2 } });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    expect(started.body).toMatchObject({
      role: "Builder",
      concurrency: 2,
      agent: null,
      state: "running",
      started_by: "Human",
      current: [],
      finished: {},
    });
    const id = started.body.id as string;

    await s.call("POST", "/v1/entries", {
      body: { id: "e-1", to: "Builder", kind: "build_request", payload: { summary: "build it" } },
    });
    const run = await eventually(
      async () =>
        (await s.call("GET", "/v1/runs?entry=e-1")).body.items.find((r: { state: string }) => r.state === "succeeded"),
      "the hosted worker's run of e-1 succeeds",
    );
    // Claimed and run by the hosted worker, in this process: the server's own supervisor ran it.
    expect(run.worker).toMatch(new RegExp(`^${id}@`));
    expect(run.supervisor_pid).toBe(process.pid);
    expect((await s.server.ctx.supervisor.runs.logs(run.id, {})).map((l) => l.text)).toEqual([
      "built by a hosted worker",
    ]);
    await eventually(async () => (await s.call("GET", "/v1/entries/e-1")).body.entry.status === "done", "e-1 is done");
    const listed = await eventually(
      async () =>
        (await s.call("GET", "/v1/workers")).body.items.find(
          (w: { finished: Record<string, number> }) => w.finished.succeeded === 1,
        ),
      "the worker counts its run",
    );
    expect(listed).toMatchObject({ id, state: "running", current: [] });

    const refused = await s.call("DELETE", `/v1/workers/${id}`, { as: "Builder" });
    expect([refused.status, refused.body.error.code, refused.body.error.message]).toEqual([
      403,
      "permission_refused",
      "Builder may not stop a worker: only a human (Human) may",
    ]);
    const stopped = await s.call("DELETE", `/v1/workers/${id}`);
    expect([stopped.status, stopped.body.state, stopped.body.finished]).toEqual([200, "stopped", { succeeded: 1 }]);
    expect(stopped.body.stopped_at).toEqual(expect.any(String));
    // Stopped, it claims nothing more.
    await s.call("POST", "/v1/entries", { body: { id: "e-2", to: "Builder", kind: "build_request" } });
    expect((await s.call("GET", "/v1/entries/e-2")).body).toMatchObject({
      entry: { status: "open" },
      claimed_by: null,
    });
    const missing = await s.call("DELETE", "/v1/workers/serve-nope");
    expect([missing.status, missing.body.error.code, missing.body.error.message]).toEqual([
      404,
      "worker_not_found",
      "no worker serve-nope in this server: GET /v1/workers lists them",
    ]);
  });

  it("stopping a worker stops its run under way and leaves the entry in progress for another worker, as SIGTERM stops pmagent worker", async () => {
    const { body: w } = await s.call("POST", "/v1/workers", { body: { role: "Slow" } });
    await s.call("POST", "/v1/entries", { body: { id: "s-1", to: "Slow", kind: "slow_request" } });
    const running = await eventually(
      async () => (await s.call("GET", "/v1/workers")).body.items[0].current[0],
      "the worker shows the run in its slot",
    );
    expect(running).toMatchObject({ entry_id: "s-1", run_id: expect.any(String) });
    await eventually(
      async () => (await s.server.ctx.supervisor.runs.logs(running.run_id, {})).some((l) => l.text === "working"),
      "the sprite says it works",
    );
    const stopped = await s.call("DELETE", `/v1/workers/${w.id}`);
    expect([stopped.status, stopped.body.state, stopped.body.current, stopped.body.finished]).toEqual([
      200,
      "stopped",
      [],
      { canceled: 1 },
    ]);
    const run = (await s.call("GET", `/v1/runs/${running.run_id}`)).body;
    expect([run.state, run.reason]).toEqual(["canceled", WORKER_STOPPED]);
    expect((await s.call("GET", "/v1/entries/s-1")).body.entry.status).toBe("in_progress");
  });

  it("bad inputs are refused, each saying what to fix", async () => {
    const post = (body: unknown, as?: "Builder") => s.call("POST", "/v1/workers", { body, ...(as ? { as } : {}) });
    const cases: Array<[unknown, number, string, string | RegExp]> = [
      [
        { role: "Nobody" },
        400,
        "unknown_role",
        'role "Nobody" is not configured in any lane (configured roles: Builder, Slow, Coder)',
      ],
      [{ role: "Builder", concurrency: 0 }, 400, "invalid_body", /concurrency must be at least 1/],
      [{ role: "Builder", concurrency: 999 }, 400, "invalid_body", /concurrency must be at most 64/],
      [{ role: "Builder", concurrency: 1.5 }, 400, "invalid_body", /concurrency must be a whole number from 1 to 64/],
      [
        { role: "Builder", agent: "gpt" },
        400,
        "unknown_agent",
        'agent "gpt" is not configured: pick one of codex (as role Coder runs it), or leave it out to run Builder\'s own runner',
      ],
      [
        { role: "Builder", agent: "codex" },
        403,
        "agent_key_not_allowed",
        'role Builder may not run agent codex: its model key OPENAI_API_KEY is not among the role\'s credentials; add "OPENAI_API_KEY" to Builder\'s "credentials" in pmagent.config.json',
      ],
      [{}, 400, "invalid_body", /role/],
      [{ role: "Builder", extra: 1 }, 400, "invalid_body", /extra/],
    ];
    for (const [body, status, code, message] of cases) {
      const r = await post(body);
      expect([r.status, r.body.error.code], JSON.stringify(body)).toEqual([status, code]);
      expect(r.body.error.message, JSON.stringify(body)).toMatch(
        typeof message === "string" ? new RegExp(`^${message.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`) : message,
      );
    }
    const robot = await post({ role: "Builder" }, "Builder");
    expect([robot.status, robot.body.error.code, robot.body.error.message]).toEqual([
      403,
      "permission_refused",
      "Builder may not start a worker: only a human (Human) may",
    ]);
    expect((await s.call("GET", "/v1/workers")).body.items).toEqual([]);
    // The agents to choose from: each one a role of the config runs.
    expect((await s.call("GET", "/v1/agents")).body).toEqual({
      items: [{ name: "codex", role: "Coder", model: "gpt-test" }],
    });
    // Every route in the OpenAPI document with its errors.
    const doc = (await s.call("GET", "/openapi.json")).body as {
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
    };
    expect(Object.keys(doc.paths["/v1/workers"]!.post!.responses)).toEqual(
      expect.arrayContaining(["201", "400", "401", "403"]),
    );
    expect(Object.keys(doc.paths["/v1/workers/{id}"]!.delete!.responses)).toEqual(
      expect.arrayContaining(["200", "403", "404"]),
    );
    expect(Object.keys(doc.paths["/v1/workers"]!.get!.responses)).toEqual(expect.arrayContaining(["200", "401"]));
  });
});
