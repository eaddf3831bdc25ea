import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { followRunLogs } from "../../src/lattice/index.js";
import { availableStoreKinds, type TestStore } from "../helpers/stores.js";
import { scenarioSprite } from "../lattice/helpers.js";
import { startServer, type TestServer } from "./helpers.js";

const kinds = await availableStoreKinds();

describe.each(kinds)("starting a run for an entry over the API on $name", (kind) => {
  let ts: TestStore;
  let s: TestServer;
  let dir: string;

  beforeEach(async () => {
    ts = await kind.open();
    dir = mkdtempSync(join(tmpdir(), "pmagent-start-run-"));
    const command = scenarioSprite(dir, "ok", {
      steps: [
        { log: "started from the console" },
        { emit: "COMPLETED", payload: { status: "success", summary: "done" } },
      ],
    });
    const lanes = [
      {
        layer: "test",
        name: "build",
        roles: [{ name: "Builder", allowed_kinds: ["build_request"], runner: { command } }],
      },
    ];
    s = await startServer(ts, { config: { lanes } });
    // The test project's kernel is DEGRADED: its gate denies feature work, and says why.
    await s.call("POST", "/v1/entries", { body: { id: "d-1", to: "Builder", kind: "build_request" } });
    const denied = await s.call("POST", "/v1/entries/d-1/runs");
    expect([denied.status, denied.body.error.code]).toEqual([403, "run_denied"]);
    expect(denied.body.error.message).toMatch(
      /^the run gate denied a run of Builder for entry d-1: Kernel is DEGRADED/,
    );
    expect((await s.call("GET", "/v1/entries/d-1")).body).toMatchObject({
      entry: { status: "open" },
      claimed_by: null,
    });
    await s.close();
    s = await startServer(ts, { config: { lanes, oa: { gate: false } } });
  });
  afterEach(async () => {
    await s.close();
    await ts.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  it("a human starts the entry's role: 202 with the run, which runs to the end under the server; errors say why", async () => {
    await s.call("POST", "/v1/entries", {
      body: { id: "e-1", to: "Builder", kind: "build_request", payload: { summary: "build it" } },
    });
    const refused = await s.call("POST", "/v1/entries/e-1/runs", { as: "Builder" });
    expect([refused.status, refused.body.error.code, refused.body.error.message]).toEqual([
      403,
      "permission_refused",
      "Builder may not start a run: only a human (Human) may",
    ]);
    const started = await s.call("POST", "/v1/entries/e-1/runs");
    expect(started.status, JSON.stringify(started.body)).toBe(202);
    expect(started.body).toMatchObject({
      entry_id: "e-1",
      role: "Builder",
      worker: expect.stringMatching(/^Human@console-/),
    });
    const lines: string[] = [];
    for await (const batch of followRunLogs(s.server.ctx.supervisor.runs, started.body.id, {}))
      lines.push(...batch.map((l) => l.text));
    expect(lines).toEqual(["started from the console"]);
    // The entry is finished once the run is settled: the run the server started, awaited.
    await Promise.all([...s.server.ctx.inFlight]);
    expect((await s.call("GET", `/v1/runs/${started.body.id}`)).body.state).toBe("succeeded");
    expect((await s.call("GET", "/v1/entries/e-1")).body.entry.status).toBe("done");
    const again = await s.call("POST", "/v1/entries/e-1/runs");
    expect([again.status, again.body.error.code]).toEqual([409, "entry_not_open"]);
    expect(again.body.error.message).toBe(
      "entry e-1 is done: only an open entry of a kind Builder takes (build_request) can be started",
    );
    const missing = await s.call("POST", "/v1/entries/nope/runs");
    expect([missing.status, missing.body.error.code]).toEqual([404, "entry_not_found"]);
    await s.call("POST", "/v1/entries", { body: { id: "q-1", to: "Human", kind: "question" } });
    const human = await s.call("POST", "/v1/entries/q-1/runs");
    expect([human.status, human.body.error.message]).toEqual([
      403,
      "entry q-1 is addressed to Human, which is not a role of any lane: there is nothing to run",
    ]);
    const doc = (await s.call("GET", "/openapi.json")).body as {
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
    };
    expect(Object.keys(doc.paths["/v1/entries/{id}/runs"]!.post!.responses)).toEqual(
      expect.arrayContaining(["202", "403", "404", "409"]),
    );
  });
});
