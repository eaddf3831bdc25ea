/**
 * Running a finished run's entry again over the API (POST /v1/runs/{id}/retry) and MCP
 * (runs_retry): the same command (a retry), or another agent a role of the config runs ("run again
 * with another agent", here the real Codex CLI against a scripted Responses server). The entry a
 * run finished is terminal, so it is re-opened as a new entry that the new run takes.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { availableStoreKinds, openSqliteTestStore, type TestStore } from "../helpers/stores.js";
import { startFakeOpenAI, type FakeOpenAI } from "../helpers/fake-openai.js";
import { scenarioSprite } from "../lattice/helpers.js";
import { eventually, startServer, type TestServer } from "./helpers.js";
import { httpClient, ok, refused } from "./mcp-helpers.js";

const kinds = await availableStoreKinds();

let ts: TestStore | undefined;
let s: TestServer | undefined;
let fake: FakeOpenAI | undefined;
let dir: string;

/** Builder runs a scripted sprite; Coder runs Codex (model gpt-test) at `modelUrl`; Builder may receive the Codex key. */
async function serve(store: TestStore, modelUrl = "http://127.0.0.1:9/v1"): Promise<TestServer> {
  ts = store;
  dir = mkdtempSync(join(tmpdir(), "pmagent-retry-"));
  const command = scenarioSprite(dir, "ok", {
    steps: [{ log: "built" }, { emit: "COMPLETED", payload: { status: "success", summary: "built" } }],
  });
  const slow = scenarioSprite(dir, "slow", { steps: [{ log: "working" }, { sleep: 60_000 }] });
  const lanes = [
    {
      layer: "test",
      name: "build",
      roles: [
        { name: "Builder", allowed_kinds: ["build_request"], runner: { command }, credentials: ["OPENAI_API_KEY"] },
        { name: "Slow", allowed_kinds: ["slow_request"], runner: { command: slow } },
        {
          name: "Coder",
          allowed_kinds: ["code_request"],
          runner: { agent: "codex", model: "gpt-test", timeout_s: 120 },
          credentials: ["OPENAI_API_KEY"],
        },
      ],
    },
  ];
  s = await startServer(store, {
    config: { lanes, oa: { gate: false }, model: { base_url: modelUrl } },
    env: { OPENAI_API_KEY: "retry-test-key/local" },
  });
  return s;
}

/** Start a run of a fresh entry and wait until the run has finished here. */
async function finishedRun(
  server: TestServer,
  entryId: string,
): Promise<{ id: string; state: string; command: string[] }> {
  await server.call("POST", "/v1/entries", {
    body: {
      id: entryId,
      to: "Builder",
      kind: "build_request",
      payload: { summary: "build it" },
      target_docs: ["docs/a.md"],
    },
  });
  const started = await server.call("POST", `/v1/entries/${entryId}/runs`);
  expect(started.status, JSON.stringify(started.body)).toBe(202);
  await Promise.all([...server.server.ctx.inFlight]);
  return (await server.call("GET", `/v1/runs/${started.body.id}`)).body;
}

afterEach(async () => {
  await s?.close();
  await ts?.cleanup();
  await fake?.close();
  rmSync(dir, { recursive: true, force: true });
  s = ts = fake = undefined;
});

describe.each(kinds)("running a run again on $name", (kind) => {
  it("retry: a new run with the same command, of the finished entry re-opened as a new one; refusals say why", async () => {
    const server = await serve(await kind.open());
    const first = await finishedRun(server, "e-1");
    expect(first.state).toBe("succeeded");

    const again = await server.call("POST", `/v1/runs/${first.id}/retry`, { body: {} });
    expect(again.status, JSON.stringify(again.body)).toBe(202);
    expect(again.body).toMatchObject({
      reopened_from: "e-1",
      run: { role: "Builder", command: first.command, worker: expect.stringMatching(/^Human@console-/) },
    });
    expect(again.body.run.id).not.toBe(first.id);
    expect(again.body.run.entry_id).toBe(again.body.entry_id);
    const reopened = (await server.call("GET", `/v1/entries/${again.body.entry_id}`)).body.entry;
    expect(reopened).toMatchObject({
      from: "Human",
      to: "Builder",
      kind: "build_request",
      payload: { summary: "build it" },
      target_docs: ["docs/a.md"],
    });
    const posted = (await server.call("GET", `/v1/entries/${again.body.entry_id}/history`)).body.items[0];
    expect(posted).toMatchObject({
      actor: "Human",
      to_status: "open",
      changes: { entry: { note: `re-opened from e-1 to run it again (run ${first.id} was succeeded)` } },
    });
    await Promise.all([...server.server.ctx.inFlight]);
    expect((await server.call("GET", `/v1/runs/${again.body.run.id}`)).body.state).toBe("succeeded");

    const robot = await server.call("POST", `/v1/runs/${first.id}/retry`, { as: "Builder", body: {} });
    expect([robot.status, robot.body.error.code, robot.body.error.message]).toEqual([
      403,
      "permission_refused",
      "Builder may not run a run again: only a human (Human) may",
    ]);
    const missing = await server.call("POST", "/v1/runs/run_nope/retry", { body: {} });
    expect([missing.status, missing.body.error.code]).toEqual([404, "run_not_found"]);
    const unknown = await server.call("POST", `/v1/runs/${first.id}/retry`, { body: { agent: "gpt" } });
    expect([unknown.status, unknown.body.error.code, unknown.body.error.message]).toEqual([
      400,
      "unknown_agent",
      'agent "gpt" is not configured: pick one of codex (as role Coder runs it), or leave it out to run Builder\'s own runner',
    ]);
    const extra = await server.call("POST", `/v1/runs/${first.id}/retry`, { body: { agent: "codex", model: "x" } });
    expect([extra.status, extra.body.error.code]).toEqual([400, "invalid_body"]);
    expect(extra.body.error.message).toMatch(/model/);
    // A run still under way is canceled first, then run again.
    await server.call("POST", "/v1/entries", { body: { id: "w-1", to: "Slow", kind: "slow_request" } });
    const slow = (await server.call("POST", "/v1/entries/w-1/runs")).body;
    await eventually(
      async () => (await server.call("GET", `/v1/runs/${slow.id}`)).body.state === "running",
      "the slow run is running",
    );
    const busy = await server.call("POST", `/v1/runs/${slow.id}/retry`, { body: {} });
    expect([busy.status, busy.body.error.code, busy.body.error.message]).toEqual([
      409,
      "run_not_finished",
      `run ${slow.id} is running: cancel it first (pmagent runs cancel ${slow.id}), then run it again`,
    ]);
    await server.call("POST", `/v1/runs/${slow.id}/cancel`, { body: {} });
    const doc = (await server.call("GET", "/openapi.json")).body as {
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
    };
    expect(Object.keys(doc.paths["/v1/runs/{id}/retry"]!.post!.responses)).toEqual(
      expect.arrayContaining(["202", "400", "403", "404", "409"]),
    );
  });
});

describe("running a run again with another agent (the real Codex CLI, a scripted Responses server)", () => {
  it(
    "the new run of the entry runs Codex with the Coder's settings and succeeds; a hosted worker given the agent runs it too; MCP runs_retry answers alike",
    { timeout: 240_000 },
    async () => {
      fake = await startFakeOpenAI();
      const server = await serve(await openSqliteTestStore(), fake.baseURL);
      const first = await finishedRun(server, "e-1");

      fake.reply({ text: "Built with Codex." });
      const again = await server.call("POST", `/v1/runs/${first.id}/retry`, { body: { agent: "codex" } });
      expect(again.status, JSON.stringify(again.body)).toBe(202);
      expect(again.body.run.command.slice(0, 5)).toEqual(["pmagent", "agent-run", "codex", "--model", "gpt-test"]);
      expect(again.body.reopened_from).toBe("e-1");
      await Promise.all([...server.server.ctx.inFlight]);
      const run = (await server.call("GET", `/v1/runs/${again.body.run.id}`)).body;
      expect([run.state, run.reason]).toEqual(["succeeded", null]);
      const completed = (await server.call("GET", `/v1/runs/${run.id}/events?type=COMPLETED`)).body.items[0].event
        .payload;
      expect(completed).toEqual({ status: "success", summary: "Built with Codex." });
      // Codex asked the scripted server for the model the Coder role names.
      expect(fake.requests.at(-1)?.body.model).toBe("gpt-test");

      // A hosted worker for Builder, given Codex: the entry posted next is run by Codex.
      fake.reply({ text: "Built by the hosted worker's Codex." });
      const w = await server.call("POST", "/v1/workers", { body: { role: "Builder", agent: "codex" } });
      expect([w.status, w.body.agent]).toEqual([201, "codex"]);
      await server.call("POST", "/v1/entries", {
        body: { id: "e-2", to: "Builder", kind: "build_request", payload: { summary: "again" } },
      });
      const byWorker = await eventually(
        async () =>
          (await server.call("GET", "/v1/runs?entry=e-2")).body.items.find(
            (r: { state: string }) => r.state !== "starting" && r.state !== "running",
          ),
        "the worker's Codex run of e-2 finishes",
        120_000,
      );
      expect([byWorker.state, byWorker.command.slice(0, 3)]).toEqual(["succeeded", ["pmagent", "agent-run", "codex"]]);
      await server.call("DELETE", `/v1/workers/${w.body.id}`);

      // MCP: the same route behind runs_retry, for a human; another actor is refused with its message.
      const human = await httpClient(server, "Human");
      const builder = await httpClient(server, "Builder");
      try {
        expect(await refused(builder, "runs_retry", { id: first.id })).toBe(
          "permission_refused: Builder may not run a run again: only a human (Human) may",
        );
        const viaMcp = await ok(human, "runs_retry", { id: first.id });
        expect(viaMcp.structuredContent).toMatchObject({
          reopened_from: "e-1",
          run_id: expect.stringMatching(/^run_/),
          entry_id: expect.any(String),
        });
      } finally {
        await human.close();
        await builder.close();
      }
      await Promise.all([...server.server.ctx.inFlight]);
    },
  );
});
