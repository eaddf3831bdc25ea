import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { availableStoreKinds, type TestStore } from "../helpers/stores.js";
import { TOKENS, startServer, type TestServer } from "./helpers.js";

const kinds = await availableStoreKinds();

describe.each(kinds)("HTTP API on $name", (kind) => {
  let ts: TestStore;
  let s: TestServer;

  beforeEach(async () => {
    ts = await kind.open();
    s = await startServer(ts, { bodyLimit: 64 * 1024 });
  });
  afterEach(async () => {
    await s.close();
    await ts.cleanup();
  });

  it("refuses requests without a valid bearer token (401) on every API route, and says why", async () => {
    for (const r of s.server.routes) {
      const path = r.url.replace(":id", "x");
      const res = await s.call(r.method, path, { as: null, body: r.method === "POST" ? {} : undefined });
      expect(res.status, `${r.method} ${path}`).toBe(401);
      expect(res.body).toEqual({
        error: {
          code: "unauthorized",
          message: "this server needs a bearer token: send Authorization: Bearer <token>",
        },
      });
    }
    expect(
      (await s.call("GET", "/v1/entries", { as: null, headers: { authorization: "Bearer not-a-known-token-000000" } }))
        .body.error.message,
    ).toBe("unknown bearer token");
    expect(
      (await s.call("GET", "/v1/entries", { as: null, headers: { authorization: "Basic abc" } })).body.error.message,
    ).toBe("the Authorization header must be Bearer <token>");
  });

  it("posts, lists, shows and changes entries as the token's actor, never a body field", async () => {
    const posted = await s.call("POST", "/v1/entries", {
      body: { id: "r-1", to: "Builder", kind: "build_request", payload: { summary: "do it" } },
    });
    expect(posted.status).toBe(201);
    expect(posted.body).toMatchObject({
      version: 1,
      entry: { id: "r-1", from: "Human", to: "Builder", status: "open" },
    });
    // Builder cannot post in Human's name: the body's `from` does not make it Human.
    const forged = await s.call("POST", "/v1/entries", {
      as: "Builder",
      body: { id: "r-2", from: "Human", to: "Reviewer", kind: "review_request" },
    });
    expect(forged.status).toBe(403);
    expect(forged.body.error.code).toBe("permission_refused");
    expect(
      (await s.call("GET", "/v1/entries?status=open&to=Builder")).body.items.map(
        (e: { entry: { id: string } }) => e.entry.id,
      ),
    ).toEqual(["r-1"]);
    expect((await s.call("GET", "/v1/entries?status=done")).body).toEqual({ items: [], next: null });
    expect((await s.call("GET", "/v1/entries/r-1")).body.entry.payload).toEqual({ summary: "do it" });
    const moved = await s.call("POST", "/v1/entries/r-1/status", {
      as: "Builder",
      body: { status: "in_progress", expected_version: 1 },
    });
    expect(moved.status).toBe(200);
    expect(moved.body).toMatchObject({ version: 2, entry: { status: "in_progress" } });
    const history = await s.call("GET", "/v1/entries/r-1/history");
    expect(history.body.items.map((h: { actor: string; to_status: string }) => [h.actor, h.to_status])).toEqual([
      ["Human", "open"],
      ["Builder", "in_progress"],
    ]);
  });

  it("403 for an actor the blackboard rule does not allow; 409 for a stale write and a refused transition", async () => {
    await s.call("POST", "/v1/entries", { body: { id: "r-1", to: "Builder", kind: "build_request" } });
    const wrong = await s.call("POST", "/v1/entries/r-1/status", { as: "Reviewer", body: { status: "done" } });
    expect(wrong.status).toBe(403);
    expect(wrong.body.error.code).toBe("permission_refused");
    expect(wrong.body.error.message).toContain("Reviewer");
    await s.call("POST", "/v1/entries/r-1/status", { as: "Builder", body: { status: "in_progress" } });
    const stale = await s.call("POST", "/v1/entries/r-1/status", {
      as: "Builder",
      body: { status: "done", expected_version: 1 },
    });
    expect(stale.status).toBe(409);
    expect(stale.body.error.code).toBe("stale_write");
    await s.call("POST", "/v1/entries/r-1/status", { as: "Builder", body: { status: "done" } });
    const back = await s.call("POST", "/v1/entries/r-1/status", { body: { status: "open" } });
    expect(back.status).toBe(409);
    expect(back.body.error.code).toBe("transition_refused");
  });

  it("400 for bad bodies and queries, naming the JSON path; 413 for a body over the limit", async () => {
    const missing = await s.call("POST", "/v1/entries", { body: { kind: "build_request" } });
    expect(missing.status).toBe(400);
    expect(missing.body.error.code).toBe("invalid_body");
    expect(missing.body.error.message).toMatch(/^request body is invalid:\n {2}\$\.to: /);
    // Fields beyond the spec's are kept as they came (issue 18: the origin's payload_ref).
    const extra = await s.call("POST", "/v1/entries", {
      body: { to: "Builder", kind: "k", payload_ref: { value: "p.md" } },
    });
    expect(extra.status).toBe(201);
    expect(extra.body.entry.payload_ref).toEqual({ value: "p.md" });
    const badJson = await s.call("POST", "/v1/entries", { raw: "{not json" });
    expect(badJson.status).toBe(400);
    expect(badJson.body.error.message).toMatch(/^the request body is not valid JSON/);
    const badStatus = await s.call("POST", "/v1/entries/r-1/status", { body: { status: "finished" } });
    expect(badStatus.status).toBe(400);
    expect(badStatus.body.error.message).toContain("$.status: Invalid option");
    const badQuery = await s.call("GET", "/v1/entries?limit=0");
    expect(badQuery.status).toBe(400);
    expect(badQuery.body.error.message).toBe("query string is invalid:\n  $.limit: limit must be at least 1");
    expect((await s.call("GET", "/v1/entries?nope=1")).body.error.code).toBe("invalid_query");
    // Paging: limit 1..500 (a whole number), order newest|oldest, an opaque cursor the server gave.
    const bad = async (query: string) => {
      const r = await s.call("GET", `/v1/entries?${query}`);
      expect(r.status).toBe(400);
      return r.body.error as { code: string; message: string };
    };
    expect((await bad("limit=501")).message).toBe("query string is invalid:\n  $.limit: limit must be at most 500");
    expect((await bad("limit=abc")).message).toBe("query string is invalid:\n  $.limit: limit must be a whole number");
    expect((await bad("limit=2.5")).message).toBe("query string is invalid:\n  $.limit: limit must be a whole number");
    expect((await bad("order=sideways")).message).toBe(
      "query string is invalid:\n  $.order: order must be one of newest, oldest",
    );
    expect(await bad("cursor=garbage!")).toEqual({
      code: "invalid_cursor",
      message:
        "cursor is not valid for this list (not a cursor this server gives): pass the `next` of the previous page unchanged, with the same order, or leave cursor out for the first page",
    });
    await s.call("POST", "/v1/entries", { body: { id: "r-9", to: "Builder", kind: "build_request" } });
    const first = await s.call("GET", "/v1/entries?limit=1&order=newest");
    expect(first.body.items.map((e: { entry: { id: string } }) => e.entry.id)).toEqual(["r-9"]);
    await s.call("POST", "/v1/entries", { body: { id: "r-10", to: "Builder", kind: "build_request" } });
    // Posted after the first page: ahead of its cursor, so not on the next page (newest first).
    const second = (await s.call("GET", `/v1/entries?limit=1&order=newest&cursor=${first.body.next}`)).body;
    expect(second.items).toHaveLength(1);
    expect(second.items[0].entry.id).not.toMatch(/^r-(9|10)$/);
    expect((await bad(`order=oldest&cursor=${first.body.next}`)).message).toContain("it was given for order=newest");
    expect((await s.call("GET", `/v1/runs?order=newest&cursor=${first.body.next}`)).body.error.message).toContain(
      "it is a cursor of another list",
    );
    const big = await s.call("POST", "/v1/entries", {
      body: { to: "Builder", kind: "k", payload: { text: "x".repeat(70 * 1024) } },
    });
    expect(big.status).toBe(413);
    expect(big.body).toEqual({
      error: { code: "body_too_large", message: "the request body is larger than this server accepts" },
    });
    const resume = await s.call("POST", "/v1/runs/x/resume", { body: { inputs: [] } });
    expect(resume.status).toBe(400);
    expect(resume.body.error.message).toContain("$.inputs:");
    expect((await s.call("GET", "/v1/oa/guard?mode=LOUD")).body.error.message).toContain("$.mode");
  });

  it("404 for unknown entries, runs, proposals and routes", async () => {
    for (const [method, path, code] of [
      ["GET", "/v1/entries/nope", "entry_not_found"],
      ["GET", "/v1/entries/nope/history", "entry_not_found"],
      ["POST", "/v1/entries/nope/status", "entry_not_found"],
      ["GET", "/v1/runs/nope", "run_not_found"],
      ["GET", "/v1/runs/nope/events", "run_not_found"],
      ["GET", "/v1/runs/nope/logs", "run_not_found"],
      ["POST", "/v1/runs/nope/cancel", "run_not_found"],
      ["POST", "/v1/runs/nope/resume", "run_not_found"],
      ["POST", "/v1/env/proposals/nope/accept", "proposal_not_found"],
      ["GET", "/v1/nothing-here", "route_not_found"],
    ] as const) {
      const body = path.endsWith("/status")
        ? { status: "done" }
        : path.endsWith("/resume")
          ? { inputs: {} }
          : undefined;
      const res = await s.call(method, path, { body });
      expect(res.status, path).toBe(404);
      expect(res.body.error.code, path).toBe(code);
    }
  });

  it("environment proposals: 403 for a non-human, 409 when decided twice", async () => {
    const { ProposalStore } = await import("../../src/lattice/index.js");
    const ps = new ProposalStore({ store: ts.store, projectId: "demo", humans: ["Human"] });
    const { proposal } = await ps.record("Builder", "run-1", "ev-1", {
      observed_failure: { phase: "bootstrap", exit_code: 127, stderr_hint: "node: not found" },
      suggested_adjustment: { type: "adjust_smoke_command", details: { command: "npm test" } },
      confidence: 0.5,
      evidence: [],
      scope: "repo_specific",
    } as never);
    const listed = await s.call("GET", "/v1/env/proposals?status=pending");
    expect(listed.body.items.map((p: { id: string }) => p.id)).toEqual([proposal.id]);
    // A pending proposal comes with what accepting it runs (here: nothing), or why it is refused.
    expect(listed.body.items[0].plan).toEqual({
      proposal_id: proposal.id,
      adjustment_type: "adjust_smoke_command",
      refused: null,
      isolation: null,
      steps: [],
    });
    const unsafe = (
      await ps.record("Builder", "run-2", "ev-2", {
        observed_failure: { phase: "bootstrap", exit_code: 1, stderr_hint: "" },
        suggested_adjustment: { type: "runtime_install", details: { runtime: "../x" } },
        confidence: 0.5,
        evidence: [],
        scope: "repo_specific",
      } as never)
    ).proposal;
    const plans = (await s.call("GET", "/v1/env/proposals?status=pending")).body.items as Array<{
      id: string;
      plan: { refused: string };
    }>;
    expect(plans.find((p) => p.id === unsafe.id)!.plan.refused).toMatch(
      /^environment proposal envp_\w+ \(runtime_install\) cannot be accepted: details\.runtime "\.\.\/x" is not a bare name/,
    );
    const unsafeAccept = await s.call("POST", `/v1/env/proposals/${unsafe.id}/accept`);
    expect([unsafeAccept.status, unsafeAccept.body.error.code]).toEqual([403, "proposal_refused"]);
    const refused = await s.call("POST", `/v1/env/proposals/${proposal.id}/accept`, { as: "Builder" });
    expect(refused.status).toBe(403);
    expect(refused.body.error.message).toContain('"Builder" is not listed in the config\'s humans');
    const accepted = await s.call("POST", `/v1/env/proposals/${proposal.id}/accept`);
    expect(accepted.body).toMatchObject({
      status: "accepted",
      change: { proposal_id: proposal.id, status: "applied", applies_to: "Builder" },
    });
    const twice = await s.call("POST", `/v1/env/proposals/${proposal.id}/reject`);
    expect(twice.status).toBe(409);
    expect(twice.body.error.code).toBe("proposal_decided");
    // Undo (by the change's id or its proposal's): humans only, once.
    expect((await s.call("POST", `/v1/env/changes/${proposal.id}/undo`, { as: "Builder" })).status).toBe(403);
    expect((await s.call("POST", `/v1/env/changes/${accepted.body.change.id}/undo`)).body).toMatchObject({
      status: "undone",
      undone_by: "Human",
    });
    const again = await s.call("POST", `/v1/env/changes/${proposal.id}/undo`);
    expect([again.status, again.body.error.code]).toEqual([409, "change_undone"]);
    const unknown = await s.call("POST", "/v1/env/changes/envc_nope/undo");
    expect([unknown.status, unknown.body.error.message]).toEqual([
      404,
      'no environment change "envc_nope" in project demo: see `pmagent env show ROLE` (a change is made when a proposal is accepted)',
    ]);
  });

  it("Kai answers a kai_request_v1; an invalid one is a 400 that says what is wrong", async () => {
    const request = {
      version: "kai_request_v1",
      request_id: "r-42",
      from: { actor_type: "human" },
      project_id: "demo",
      type: "lane_status",
      lane: { layer: "test", name: "build" },
    };
    const ok = await s.call("POST", "/v1/kai", { body: request });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({
      version: "kai_response_v1",
      request_id: "r-42",
      status: "ok",
      payload: { kind: "lane_status_v1" },
    });
    // The server reads the project's runs (none yet) through the same sources as the CLI.
    expect(ok.body.notes).toContain("Evidence: 0 runs");
    expect(ok.body.notes.join("\n")).not.toContain("runs were not read");
    const bad = await s.call("POST", "/v1/kai", { body: { ...request, version: "kai_request_v2" } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain('$.version: expected "kai_request_v1", got "kai_request_v2"');
    const lane = await s.call("POST", "/v1/kai", { body: { ...request, lane: { layer: "x", name: "y" } } });
    expect(lane.status).toBe(400);
    expect(lane.body.error.code).toBe("invalid_kai_request");
  });

  it("OA snapshot, boot and guard from the kernel surfaces; 503 when a required surface is missing", async () => {
    const snap = await s.call("GET", "/v1/oa/snapshot");
    expect(snap.body).toMatchObject({ kernel_mode: "DEGRADED", reality_green: true });
    expect(
      snap.body.checks_summary.filter((c: { passed: boolean }) => !c.passed).map((c: { name: string }) => c.name),
    ).toEqual(["Unit Tests"]);
    expect((await s.call("GET", "/v1/oa/boot")).body.oa_boot_envelope.kernel.mode).toBe("DEGRADED");
    const guard = await s.call("GET", "/v1/oa/guard?mode=HINT");
    expect(guard.body).toMatchObject({ mode: "HINT", kernel_mode: "DEGRADED" });
    const { rmSync } = await import("node:fs");
    rmSync(`${s.tp.root}/share/REALITY_GREEN_SUMMARY.json`);
    const missing = await s.call("GET", "/v1/oa/snapshot");
    expect(missing.status).toBe(503);
    expect(missing.body.error.message).toContain("share/REALITY_GREEN_SUMMARY.json: file not found");
  });

  it("never answers with a configured secret or token, even one posted in an entry", async () => {
    const posted = await s.call("POST", "/v1/entries", {
      body: { id: "leak", to: "Builder", kind: "build_request", payload: { text: `token ${TOKENS.Builder} here` } },
    });
    expect(JSON.stringify(posted.body)).not.toContain(TOKENS.Builder);
    expect(JSON.stringify((await s.call("GET", "/v1/entries/leak")).body)).not.toContain(TOKENS.Builder);
  });

  it("publishes an OpenAPI 3.1 document of every route, generated from the route schemas", async () => {
    const doc = (await s.call("GET", "/openapi.json", { as: null })).body;
    expect(doc.openapi).toBe("3.1.0");
    for (const r of s.server.routes) {
      const op = doc.paths[r.url.replace(/:([a-z_]+)/g, "{$1}")][r.method.toLowerCase()];
      expect(op.responses["401"]).toBeDefined();
    }
    const post = doc.paths["/v1/entries"].post;
    expect(post.requestBody.content["application/json"].schema.required).toEqual(["to", "kind"]);
    expect(post.responses["201"]).toBeDefined();
    expect(doc.paths["/v1/entries/{id}"].get.parameters[0]).toMatchObject({ name: "id", in: "path", required: true });
  });
});

describe("serve without tokens", () => {
  it("refuses to listen beyond loopback, and acts as the first human on loopback", async () => {
    const { buildServer } = await import("../../src/server/index.js");
    const ts = await kinds[0]!.open();
    const { testProject } = await import("../lattice/helpers.js");
    const tp = testProject(ts);
    try {
      await expect(buildServer({ project: tp.project, store: ts.store, host: "0.0.0.0", env: {} })).rejects.toThrow(
        'refusing to listen on 0.0.0.0 without bearer tokens: set PMAGENT_TOKENS="TOKEN=Actor" or server.tokens in the config, or listen on 127.0.0.1',
      );
      await expect(
        buildServer({ project: tp.project, store: ts.store, env: { PMAGENT_TOKENS: "short=Human" } }),
      ).rejects.toThrow("PMAGENT_TOKENS: the token for Human is shorter than 16 characters");
      await expect(
        buildServer({ project: tp.project, store: ts.store, env: { PMAGENT_TOKENS: "novalue" } }),
      ).rejects.toThrow("PMAGENT_TOKENS: each item must be TOKEN=Actor (item 1 is not)");
      const server = await buildServer({ project: tp.project, store: ts.store, port: 0, env: {} });
      const url = await server.listen();
      const who = (await (await fetch(`${url}/v1/whoami`)).json()) as { actor: string; auth_required: boolean };
      expect(who).toMatchObject({ actor: "Human", auth_required: false });
      await server.close();
    } finally {
      tp.cleanup();
      await ts.cleanup();
    }
  });
});
