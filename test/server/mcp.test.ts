import { execFileSync } from "node:child_process";
import { request } from "node:http";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ProposalStore } from "../../src/lattice/index.js";
import { MCP_TOOL_NAMES } from "../../src/server/index.js";
import { CLI } from "../helpers/proc.js";
import { openSqliteTestStore, type TestStore } from "../helpers/stores.js";
import { TOKENS, startServer, type TestServer } from "./helpers.js";
import { call, httpClient, ok, refused, text } from "./mcp-helpers.js";

describe("MCP server: tools", () => {
  let ts: TestStore;
  let s: TestServer;
  let client: Client;

  beforeEach(async () => {
    ts = await openSqliteTestStore();
    s = await startServer(ts);
    client = await httpClient(s, "Builder");
  });
  afterEach(async () => {
    await client.close();
    await s.close();
    await ts.cleanup();
  });

  it("lists every tool with a title, argument descriptions, an output schema and all three annotations", async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([...MCP_TOOL_NAMES].sort());
    for (const t of tools) {
      expect(t.description!.length, t.name).toBeGreaterThan(40);
      expect(t.title, t.name).toBeTruthy();
      for (const [arg, schema] of Object.entries(t.inputSchema.properties ?? {}))
        expect((schema as { description?: string }).description, `${t.name}.${arg}`).toBeTruthy();
      expect(t.outputSchema?.type, t.name).toBe("object");
      expect(typeof t.annotations?.readOnlyHint, t.name).toBe("boolean");
      expect(typeof t.annotations?.destructiveHint, t.name).toBe("boolean");
      expect(typeof t.annotations?.idempotentHint, t.name).toBe("boolean");
    }
    const hints = Object.fromEntries(
      tools.map((t) => [
        t.name,
        [t.annotations!.readOnlyHint, t.annotations!.destructiveHint, t.annotations!.idempotentHint],
      ]),
    );
    expect(hints.bb_list).toEqual([true, false, true]);
    expect(hints.runs_cancel).toEqual([false, true, false]);
    expect(hints.bb_change_status).toEqual([false, true, false]);
    expect(hints.runs_resume).toEqual([false, false, true]);
    expect(hints.env_proposal_accept).toEqual([false, false, false]);
    // The surface of the API: events, logs, cancel, resume, proposals, PRs and history are all there.
    expect(MCP_TOOL_NAMES).toEqual(
      expect.arrayContaining([
        "runs_events",
        "runs_logs",
        "runs_cancel",
        "runs_resume",
        "env_proposals_list",
        "env_proposal_accept",
        "env_proposal_reject",
        "prs_list",
        "prs_merge",
        "prs_close",
        "bb_history",
        "runs_actions",
      ]),
    );
    // The listing goes into a model's context: whole Kai and OA payloads are not spelled out in it.
    expect(JSON.stringify(tools).length).toBeLessThan(64_000);
    const change = tools.find((t) => t.name === "bb_change_status")!;
    expect(Object.keys(change.inputSchema.properties ?? {}).sort()).toEqual([
      "expected_version",
      "id",
      "note",
      "status",
    ]);
    expect(change.inputSchema.required).toEqual(["id", "status"]);
  });

  it("entries: post as the token's actor, show, list newest first in pages, change status, history; structured and compact", async () => {
    const posted = await ok(client, "bb_post", {
      entry: { id: "m-1", to: "Reviewer", kind: "review_request", payload: { pr: 7 } },
    });
    expect(posted.structuredContent).toMatchObject({
      entry: { id: "m-1", from: "Builder", to: "Reviewer" },
      version: 1,
    });
    expect(text(posted).split("\n")[0]).toMatch(/^m-1 \[open\] review_request Builder → Reviewer \(v1, updated /);
    expect(
      await refused(client, "bb_post", { entry: { id: "m-2", from: "Human", to: "Reviewer", kind: "review_request" } }),
    ).toMatch(/^permission_refused: /);
    await ok(client, "bb_post", { entry: { id: "m-2", to: "Reviewer", kind: "review_request" } });
    await ok(client, "bb_post", {
      entry: { id: "m-3", to: "Human", kind: "question", payload: { summary: "Which branch?\nmore below" } },
    });

    const first = await ok(client, "bb_list", { limit: 2 });
    expect(first.structuredContent.entries.map((e: { id: string }) => e.id)).toEqual(["m-3", "m-2"]);
    expect(first.structuredContent.next_cursor).toEqual(expect.any(String));
    expect(first.structuredContent.entries[0]).not.toHaveProperty("payload");
    // Titled by the summary's first line, the kind beside it; an entry without one by its kind.
    expect(first.structuredContent.entries[0]).toMatchObject({ id: "m-3", summary: "Which branch?", kind: "question" });
    expect(first.structuredContent.entries[1]).not.toHaveProperty("summary");
    expect(text(first).split("\n")[0]).toMatch(/^m-3 \[open\] "Which branch\?" \(question\) Builder → Human \(v1, /);
    expect(text(first)).toContain(`2 entries shown; more with cursor "${first.structuredContent.next_cursor}"`);
    const second = await ok(client, "bb_list", { limit: 2, cursor: first.structuredContent.next_cursor });
    expect(second.structuredContent).toMatchObject({ entries: [{ id: "m-1" }], next_cursor: null });
    expect(
      (await ok(client, "bb_list", { to: "Human" })).structuredContent.entries.map((e: { id: string }) => e.id),
    ).toEqual(["m-3"]);
    expect((await ok(client, "bb_list", { status: ["done"] })).structuredContent).toEqual({
      entries: [],
      next_cursor: null,
    });

    expect((await ok(client, "bb_show", { id: "m-1" })).structuredContent).toMatchObject({
      entry: { payload: { pr: 7 } },
      version: 1,
    });
    const moved = await ok(client, "bb_change_status", {
      id: "m-1",
      status: "canceled",
      expected_version: 1,
      note: "not needed",
    });
    expect(moved.structuredContent).toMatchObject({ entry: { status: "canceled" }, version: 2 });
    expect(
      await refused(client, "bb_change_status", { id: "m-2", status: "in_progress", expected_version: 5 }),
    ).toMatch(/^stale_write: entry m-2 was changed by someone else \(you had version 5/);
    const history = await ok(client, "bb_history", { id: "m-1" });
    expect(history.structuredContent.history.map((h: { action: string; to_status: string }) => h.to_status)).toEqual([
      "open",
      "canceled",
    ]);
    expect(history.structuredContent.history[1]).not.toHaveProperty("changes");
    expect(history.structuredContent.history[1].changed).toContain("status");
    const full = await ok(client, "bb_history", { id: "m-1", detail: "full" });
    expect(full.structuredContent.history[1].changes.status).toEqual({ from: "open", to: "canceled" });
    expect(await refused(client, "bb_show", { id: "nope" })).toBe(
      "entry_not_found: entry nope does not exist in project demo",
    );
    expect(await refused(client, "bb_history", { id: "nope" })).toBe(
      "entry_not_found: entry nope does not exist in project demo",
    );
  });

  it("bad arguments: the schema's message names the argument and what to fix", async () => {
    expect(await refused(client, "bb_change_status", { id: "m-1", status: "finished" })).toBe(
      'MCP error -32602: Input validation error: Invalid arguments for tool bb_change_status: Invalid option: expected one of "open"|"in_progress"|"done"|"error"|"canceled" at status',
    );
    expect(await refused(client, "bb_list", { limit: 0 })).toBe(
      "MCP error -32602: Input validation error: Invalid arguments for tool bb_list: limit must be at least 1 at limit",
    );
    expect(await refused(client, "bb_list", { limit: 101 })).toBe(
      "MCP error -32602: Input validation error: Invalid arguments for tool bb_list: limit must be at most 100 at limit",
    );
    expect(await refused(client, "bb_list", { cursor: "" })).toBe(
      "MCP error -32602: Input validation error: Invalid arguments for tool bb_list: cursor must be the next_cursor of a previous call at cursor",
    );
    expect(await refused(client, "bb_list", { cursor: "next" })).toMatch(
      /^invalid_cursor: cursor is not valid for this list \(not a cursor this server gives\): pass the `next` of the previous page unchanged/,
    );
    expect(await refused(client, "bb_list", { sort: "newest" })).toMatch(
      /^MCP error -32602: Input validation error: Invalid arguments for tool bb_list: Unrecognized key: "sort"/,
    );
    expect(await refused(client, "runs_events", { id: "r", limit: 501 })).toMatch(
      /^MCP error -32602: Input validation error: Invalid arguments for tool runs_events: limit must be at most 500 at limit$/,
    );
    expect(await refused(client, "kai_lane_status", { lane: "nolayer" })).toBe(
      "MCP error -32602: Input validation error: Invalid arguments for tool kai_lane_status: expected LAYER/NAME, e.g. layer_b/doc_update at lane",
    );
    expect(await refused(client, "kai_what_changed", { time_window_days: 400 })).toBe(
      "MCP error -32602: Input validation error: Invalid arguments for tool kai_what_changed: time_window_days must be at most 365 at time_window_days",
    );
    expect(await refused(client, "prs_list", { state: "draft" })).toBe(
      'MCP error -32602: Input validation error: Invalid arguments for tool prs_list: Invalid option: expected one of "open"|"closed"|"merged" at state',
    );
    expect(await refused(client, "env_proposals_list", { status: "open" })).toBe(
      'MCP error -32602: Input validation error: Invalid arguments for tool env_proposals_list: Invalid option: expected one of "pending"|"accepted"|"rejected" at status',
    );
    expect(await refused(client, "bb_history", { id: "m-1", detail: "all" })).toBe(
      'MCP error -32602: Input validation error: Invalid arguments for tool bb_history: Invalid option: expected one of "digest"|"full" at detail',
    );
    expect(await refused(client, "kai_ask", { request: { version: "kai_request_v2" } })).toMatch(
      /^MCP error -32602: Input validation error: Invalid arguments for tool kai_ask: expected "kai_request_v1", got "kai_request_v2" at request\.version/,
    );
    expect(await refused(client, "runs_show", { id: "nope" })).toBe(
      "run_not_found: run nope does not exist in project demo (see `pmagent runs list`)",
    );
    // A bad entry inside a valid call is refused by the API's own rules, with the API's message.
    expect(await refused(client, "kai_lane_status", { lane: "no/such" })).toMatch(
      /^invalid_kai_request: the kai_request_v1 is invalid: /,
    );
  });

  it("Kai: a Markdown digest and key fields, the whole response only with detail full", async () => {
    const lane = await ok(client, "kai_lane_status", { lane: "test/build" });
    expect(lane.structuredContent).toMatchObject({ status: "ok", lane_status: { cycle: { latest_cycle_id: null } } });
    expect(lane.structuredContent.lane_status.steps.map((x: { role: string }) => x.role)).toEqual([
      "Builder",
      "Reviewer",
    ]);
    expect(lane.structuredContent).not.toHaveProperty("response");
    expect(lane.structuredContent.notes).toContain("Evidence: 0 runs");
    expect(text(lane)).toMatch(/^## test \/ build status \(as of /);
    const full = await ok(client, "kai_lane_status", { lane: "test/build", detail: "full" });
    expect(full.structuredContent.response).toMatchObject({
      version: "kai_response_v1",
      payload: { kind: "lane_status_v1" },
    });
    // The digest is the Markdown summary and one line per step; the whole response only on request.
    expect(text(lane)).not.toContain('"lane_status_v1"');
    expect(text(lane).split("\n").length).toBeLessThan(12);
    expect(text(full)).toContain(JSON.stringify(full.structuredContent.response));
    const changed = await ok(client, "kai_what_changed", { time_window_days: 3 });
    expect(changed.structuredContent.what_changed).toMatchObject({ counts: { prs_merged: 0 }, time_window: {} });
    expect(text(changed)).toMatch(/^## What changed in demo/);
    const asked = await ok(client, "kai_ask", {
      request: {
        version: "kai_request_v1",
        request_id: "r-1",
        from: { actor_type: "human" },
        project_id: "demo",
        type: "what_changed",
        lane: { layer: "test", name: "build" },
      },
    });
    expect(asked.structuredContent).toMatchObject({ request_id: "r-1", status: "ok" });
  });

  it("OA: boot, guard and snapshot as digests", async () => {
    const boot = await ok(client, "oa_boot");
    expect(boot.structuredContent.oa_boot_envelope.kernel.mode).toBe("DEGRADED");
    expect(text(boot)).toMatch(/^Kernel DEGRADED /);
    expect((await ok(client, "oa_guard", { mode: "HINT" })).structuredContent).toMatchObject({ mode: "HINT" });
    const snap = await ok(client, "oa_snapshot");
    expect(snap.structuredContent).toMatchObject({ kernel_mode: "DEGRADED" });
    expect(snap.structuredContent).not.toHaveProperty("state");
    expect((await ok(client, "oa_snapshot", { detail: "full" })).structuredContent.state).toMatchObject({
      kernel_mode: "DEGRADED",
    });
  });

  it("environment proposals: listed, decided by humans only (the token's actor), refused when decided twice", async () => {
    const ps = new ProposalStore({ store: ts.store, projectId: "demo", humans: ["Human"] });
    const { proposal } = await ps.record("Builder", "run-1", "ev-1", {
      observed_failure: { phase: "bootstrap", exit_code: 127, stderr_hint: "node: not found" },
      suggested_adjustment: { type: "adjust_smoke_command", details: { command: "npm test" } },
      confidence: 0.5,
      evidence: [],
      scope: "repo_specific",
    } as never);
    const listed = await ok(client, "env_proposals_list", { status: "pending" });
    expect(listed.structuredContent.proposals).toEqual([
      expect.objectContaining({
        id: proposal.id,
        role: "Builder",
        status: "pending",
        failure: "bootstrap exited 127: node: not found",
      }),
    ]);
    expect(listed.structuredContent.proposals[0]).not.toHaveProperty("full");
    expect(
      (await ok(client, "env_proposals_list", { detail: "full" })).structuredContent.proposals[0].full,
    ).toMatchObject({ details: { command: "npm test" } });
    expect(await refused(client, "env_proposal_accept", { id: proposal.id })).toMatch(
      /^not_human: only a human may accept an environment proposal; "Builder" is not listed in the config's humans/,
    );
    const human = await httpClient(s, "Human");
    try {
      expect((await ok(human, "env_proposal_accept", { id: proposal.id })).structuredContent.proposal).toMatchObject({
        status: "accepted",
        decided_by: "Human",
      });
      expect(await refused(human, "env_proposal_reject", { id: proposal.id })).toMatch(
        /^proposal_decided: environment proposal .* was already accepted by Human/,
      );
      expect(await refused(human, "env_proposal_reject", { id: "nope" })).toMatch(/^proposal_not_found: /);
      // The decider is never an argument.
      expect(await refused(human, "env_proposal_reject", { id: proposal.id, as: "Human" })).toMatch(
        /Unrecognized key: "as"/,
      );
    } finally {
      await human.close();
    }
  });

  it("pull requests of the local forge, newest first, the description only with detail full", async () => {
    execFileSync("git", ["branch", "sprite/a"], { cwd: s.tp.root });
    execFileSync("git", ["branch", "sprite/b"], { cwd: s.tp.root });
    await s.server.ctx.forge.openPullRequest({
      title: "A",
      body: "the first",
      base: "main",
      head: "sprite/a",
      workspace: s.tp.root,
    });
    await s.server.ctx.forge.openPullRequest({
      title: "B",
      body: "the second",
      base: "main",
      head: "sprite/b",
      workspace: s.tp.root,
    });
    const prs = await ok(client, "prs_list", { limit: 1 });
    expect(prs.structuredContent).toMatchObject({
      prs: [{ number: 2, title: "B", state: "open", head: "sprite/b", base: "main" }],
      next_cursor: expect.any(String),
    });
    expect(prs.structuredContent.prs[0]).not.toHaveProperty("body");
    expect(
      (await ok(client, "prs_list", { detail: "full", cursor: prs.structuredContent.next_cursor })).structuredContent
        .prs,
    ).toEqual([expect.objectContaining({ number: 1, body: "the first" })]);
    expect((await ok(client, "prs_list", { state: "merged" })).structuredContent.prs).toEqual([]);
    // A reviewer agent comments as itself, on the change or a file's line.
    const commented = await ok(client, "prs_comment", {
      number: 1,
      body: "the first needs a test",
      path: "README.md",
      line: 1,
    });
    expect(commented.structuredContent).toEqual({ id: expect.stringMatching(/^prc_[0-9a-f]{12}$/), comments: 1 });
    expect(text(commented)).toBe("Builder on README.md:1: the first needs a test (#1 has 1 comment)");
    expect((await s.call("GET", "/v1/prs/1/comments")).body.items).toEqual([
      expect.objectContaining({ author: "Builder", path: "README.md", line: 1 }),
    ]);
    expect(await refused(client, "prs_comment", { number: 1, body: "x", line: 2 })).toContain(
      "a comment on a line names its file too",
    );
    expect(await refused(client, "prs_comment", { number: 9, body: "x" })).toContain(
      "pull request #9 does not exist in the local forge",
    );
    // Merging and closing: humans only, as the authenticated actor.
    expect(await refused(client, "prs_merge", { number: 1 })).toContain(
      "Builder may not merge pull request #1: only a human (Human) may",
    );
    expect(await refused(client, "prs_merge", { number: 0 })).toContain("Input validation error");
    const human = await httpClient(s, "Human");
    try {
      const merged = await ok(human, "prs_merge", { number: 1 });
      expect(merged.structuredContent).toMatchObject({
        pr: { number: 1, state: "merged" },
        sha: expect.stringMatching(/^[0-9a-f]{40}$/),
      });
      expect(text(merged)).toMatch(/^merged #1 \(sprite\/a → main\); main is now [0-9a-f]{40}$/);
      expect(await refused(human, "prs_close", { number: 1 })).toContain(
        "pull request #1 is merged: only an open one can be closed",
      );
      expect((await ok(human, "prs_close", { number: 2 })).structuredContent).toMatchObject({
        pr: { number: 2, state: "closed" },
      });
      expect(await refused(human, "prs_close", { number: 9 })).toContain(
        "pull request #9 does not exist in the local forge",
      );
    } finally {
      await human.close();
    }
  });
});

describe("MCP server: transports and access", () => {
  let ts: TestStore;
  let s: TestServer;

  beforeEach(async () => {
    ts = await openSqliteTestStore();
    s = await startServer(ts);
  });
  afterEach(async () => {
    await s.close();
    await ts.cleanup();
  });

  it("over HTTP refuses a missing or unknown token (401) and a foreign Host header (DNS rebinding protection)", async () => {
    const anonymous = new Client({ name: "pmagent-test", version: "1.0.0" });
    await expect(anonymous.connect(new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`)))).rejects.toThrow(
      /401|bearer token/,
    );
    const stranger = new Client({ name: "pmagent-test", version: "1.0.0" });
    await expect(
      stranger.connect(
        new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`), {
          requestInit: { headers: { authorization: "Bearer not-a-token-0123456789" } },
        }),
      ),
    ).rejects.toThrow(/401|unknown bearer token/);
    const init = {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-03-26", capabilities: {}, clientInfo: { name: "x", version: "1" } },
    };
    const port = new URL(s.url).port;
    const post = (host: string) =>
      new Promise<number>((resolve, reject) => {
        const req = request(
          {
            host: "127.0.0.1",
            port,
            path: "/mcp",
            method: "POST",
            headers: {
              host,
              authorization: `Bearer ${TOKENS.Human}`,
              "content-type": "application/json",
              accept: "application/json, text/event-stream",
            },
          },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        );
        req.on("error", reject);
        req.end(JSON.stringify(init));
      });
    expect(await post(`evil.example:${port}`)).toBe(403);
    // The same request with the server's own Host is answered: the refusal is the Host's doing.
    expect(await post(`127.0.0.1:${port}`)).toBe(200);
  });

  it("without tokens (loopback only): the SDK client acts as the first human, and a foreign Host is still refused", async () => {
    const open = await startServer(ts, { env: { PMAGENT_TOKENS: "" } });
    const client = new Client({ name: "pmagent-test", version: "1.0.0" });
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(`${open.url}/mcp`)));
      await client.listTools();
      expect(
        (await ok(client, "bb_post", { entry: { id: "n-1", to: "Builder", kind: "build_request" } })).structuredContent
          .entry.from,
      ).toBe("Human");
      const port = new URL(open.url).port;
      const status = await new Promise<number>((resolve, reject) => {
        const req = request(
          {
            host: "127.0.0.1",
            port,
            path: "/mcp",
            method: "POST",
            headers: {
              host: `evil.example:${port}`,
              "content-type": "application/json",
              accept: "application/json, text/event-stream",
            },
          },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        );
        req.on("error", reject);
        req.end(
          JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "bb_list", arguments: {} } }),
        );
      });
      expect(status).toBe(403);
    } finally {
      await client.close();
      await open.close();
    }
  });

  it("over stdio (pmagent mcp --as): the same tools, resources and prompts, acting as that actor", async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [CLI, "mcp", "--as", "Reviewer"],
      cwd: s.tp.root,
      env: { PATH: process.env.PATH ?? "", HOME: s.tp.root, ...ts.env },
      stderr: "pipe",
    });
    const client = new Client({ name: "pmagent-test", version: "1.0.0" });
    await client.connect(transport);
    try {
      expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual([...MCP_TOOL_NAMES].sort());
      expect(client.getInstructions()).toContain('ask for detail "full" when you need the whole record');
      const posted = await ok(client, "bb_post", { entry: { id: "s-1", to: "Builder", kind: "build_request" } });
      expect(posted.structuredContent).toMatchObject({ entry: { id: "s-1", from: "Reviewer" } });
      // Written to the same store the HTTP server reads.
      expect((await s.call("GET", "/v1/entries/s-1")).body.entry.from).toBe("Reviewer");
      expect((await ok(client, "bb_list", { status: ["open", "in_progress"] })).structuredContent.entries).toHaveLength(
        1,
      );
      expect(await refused(client, "bb_list", { status: "open" })).toMatch(
        /^MCP error -32602: Input validation error: Invalid arguments for tool bb_list: .* at status$/,
      );
      const read = await client.readResource({ uri: "pmagent://entries/s-1" });
      expect(JSON.parse((read.contents[0] as { text: string }).text)).toMatchObject({
        entry: { id: "s-1" },
        version: 1,
      });
      const prompt = await client.getPrompt({ name: "what_waits_for_me" });
      expect((prompt.messages[0]!.content as { text: string }).text).toContain("I am Reviewer on project demo");
      expect((await call(client, "env_proposal_accept", { id: "nope" })).content[0]!.text).toMatch(/^not_human: /);
    } finally {
      await client.close();
    }
  });
});
