import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { Blackboard } from "../../src/blackboard/index.js";
import { ACTION_STATES, type RunRecord } from "../../src/lattice/index.js";
import { openSqliteTestStore, type TestStore } from "../helpers/stores.js";
import { startServer, type TestServer } from "./helpers.js";
import { httpClient, ok, refused, text } from "./mcp-helpers.js";

const contents = (r: { contents: unknown[] }) => r.contents as Array<{ uri: string; mimeType?: string; text: string }>;

describe("MCP server: runs, resources and prompts over streamable HTTP", () => {
  let ts: TestStore;
  let s: TestServer;
  let waiting: RunRecord;
  let builder: Client;

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
    builder = await httpClient(s, "Builder");
  });
  afterEach(async () => {
    await builder.close();
    await s.close();
    await ts.cleanup();
  });

  it("runs_show gives the run's token usage and cost", async () => {
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
    const shown = await ok(builder, "runs_show", { id: run.id });
    expect(shown.structuredContent.usage).toEqual({
      input_tokens: 2000,
      cached_input_tokens: 1000,
      output_tokens: 500,
      reasoning_tokens: 100,
      total_tokens: 2500,
      cost: 0.015,
      unpriced: [],
    });
    expect(text(shown)).toContain("usage: 2,500 tokens (2,000 in, 1,000 cached; 500 out, 100 reasoning), cost 0.0150");
  });

  it("lists and shows runs as digests, pages through events and logs", async () => {
    expect(waiting.state).toBe("waiting");
    const listed = await ok(builder, "runs_list", { state: "waiting" });
    expect(listed.structuredContent).toMatchObject({
      runs: [{ id: waiting.id, state: "waiting", role: "Builder", entry_id: "w-1" }],
      next_cursor: null,
    });
    expect(text(listed)).toContain(`${waiting.id} [waiting] Builder on w-1`);
    expect(text(listed)).toContain("waits (PR_REVIEW) for approved: boolean, comments: array<string>");
    expect((await ok(builder, "runs_list", { state: "failed" })).structuredContent.runs).toEqual([]);

    const shown = await ok(builder, "runs_show", { id: waiting.id });
    expect(shown.structuredContent).toMatchObject({
      run: { waiting: { reason: "PR_REVIEW", expected_inputs: { approved: "boolean" } } },
      protocol_errors: 0,
      violations: 0,
    });
    expect(shown.structuredContent).not.toHaveProperty("full");
    expect((await ok(builder, "runs_show", { id: waiting.id, detail: "full" })).structuredContent.full).toMatchObject({
      id: waiting.id,
      protocol_errors: [],
      violations: [],
    });

    const page1 = await ok(builder, "runs_events", { id: waiting.id, limit: 2 });
    expect(page1.structuredContent.events.map((e: { event_type: string }) => e.event_type)).toEqual([
      "PHASE_STARTED",
      "ARTIFACT",
    ]);
    expect(page1.structuredContent.next_cursor).toEqual(expect.any(String));
    expect(page1.structuredContent.events[1]).toMatchObject({ seq: 2, brief: '{"kind":"branch","ref":"sprite/w-1"}' });
    expect(page1.structuredContent.events[1]).not.toHaveProperty("event");
    expect(text(page1)).toContain(`2 events shown; more with cursor "${page1.structuredContent.next_cursor}"`);
    const page2 = await ok(builder, "runs_events", {
      id: waiting.id,
      cursor: page1.structuredContent.next_cursor,
      detail: "full",
    });
    expect(page2.structuredContent).toMatchObject({
      events: [{ seq: 3, event_type: "WAITING", event: { event_type: "WAITING" } }],
      next_cursor: null,
    });
    expect(
      (await ok(builder, "runs_events", { id: waiting.id, type: "ARTIFACT" })).structuredContent.events,
    ).toHaveLength(1);

    const logs = await ok(builder, "runs_logs", { id: waiting.id, stream: "stdout" });
    expect(logs.structuredContent.lines.map((l: { text: string }) => l.text)).toContain("working on it");
    expect(await refused(builder, "runs_logs", { id: waiting.id, stream: "nope" })).toMatch(
      /^MCP error -32602: Input validation error: Invalid arguments for tool runs_logs: Invalid option: expected one of "stdout"\|"stderr"\|"supervisor" at stream$/,
    );
    expect(await refused(builder, "runs_events", { id: "nope" })).toBe(
      "run_not_found: run nope does not exist in project demo (see `pmagent runs list`)",
    );
    expect(await refused(builder, "runs_logs", { id: "nope" })).toBe(
      "run_not_found: run nope does not exist in project demo (see `pmagent runs list`)",
    );
  });

  it("actions of runs and their outcomes, newest first, parameters only with detail full", async () => {
    const actions = s.server.ctx.actions;
    const request = {
      projectId: "demo",
      runId: waiting.id,
      role: "Builder",
      workItemId: "w-1",
      workspace: s.tp.root,
      blocking: false,
    };
    const comment = await actions.record({
      ...request,
      eventHash: "ev-1",
      action: "POST_COMMENT",
      parameters: { body: "done" },
    });
    await actions.record({
      ...request,
      eventHash: "ev-2",
      action: "OPEN_PR",
      parameters: { title: "T", head: "sprite/w-1", base: "main" },
      blocking: true,
    });
    const claim = await actions.claim(comment.idempotency_key, "test", 60_000);
    expect(claim).toBeDefined();
    await actions.finish(comment.idempotency_key, "test", {
      state: "failed",
      error: { code: "sink_failed", message: "no comment sink" },
    });
    const listed = await ok(builder, "runs_actions", { run: waiting.id });
    expect(listed.structuredContent.actions).toEqual([
      expect.objectContaining({ action: "OPEN_PR", state: "pending", blocking: true, outcome: "pending" }),
      expect.objectContaining({ action: "POST_COMMENT", state: "failed", outcome: "sink_failed: no comment sink" }),
    ]);
    expect(listed.structuredContent.actions[0]).not.toHaveProperty("full");
    expect(text(listed)).toContain(`${waiting.id} POST_COMMENT [failed] after 1 attempt: sink_failed: no comment sink`);
    const failed = await ok(builder, "runs_actions", { state: "failed", detail: "full" });
    expect(failed.structuredContent.actions).toEqual([
      expect.objectContaining({
        action: "POST_COMMENT",
        full: expect.objectContaining({ parameters: { body: "done" } }),
      }),
    ]);
    expect(await refused(builder, "runs_actions", { state: "done" })).toBe(
      `MCP error -32602: Input validation error: Invalid arguments for tool runs_actions: Invalid option: expected one of ${ACTION_STATES.map((x) => `"${x}"`).join("|")} at state`,
    );
  });

  it("resume: inputs checked as the API does, only by who may, the same resume twice a no-op", async () => {
    const reviewer = await httpClient(s, "Reviewer");
    try {
      expect(
        await refused(reviewer, "runs_resume", { id: waiting.id, inputs: { approved: true, comments: [] } }),
      ).toMatch(/^permission_refused: Reviewer may not resume run /);
    } finally {
      await reviewer.close();
    }
    const wrong = await refused(builder, "runs_resume", { id: waiting.id, inputs: { approved: "yes", comments: [] } });
    const api = await s.call("POST", `/v1/runs/${waiting.id}/resume`, {
      as: "Builder",
      body: { inputs: { approved: "yes", comments: [] } },
    });
    expect(wrong).toBe(`${api.body.error.code}: ${api.body.error.message}`);
    expect(wrong).toContain("approved");
    expect(
      await refused(builder, "runs_resume", { id: waiting.id, inputs: { approved: true, comments: [] }, message: "" }),
    ).toBe(
      "resume_message_empty: the follow-up message is empty: write what the agent should be told, or give no message",
    );
    expect(await refused(builder, "runs_resume", { id: waiting.id })).toMatch(
      /^MCP error -32602: Input validation error: Invalid arguments for tool runs_resume: .* at inputs$/,
    );

    const resumed = await ok(builder, "runs_resume", { id: waiting.id, inputs: { approved: true, comments: ["ok"] } });
    expect(resumed.structuredContent).toMatchObject({ noop: false, run: { id: waiting.id } });
    await Promise.all([...s.server.ctx.inFlight]);
    const again = await ok(builder, "runs_resume", { id: waiting.id, inputs: { approved: true, comments: ["ok"] } });
    // A finished run waits for nothing, though its record keeps its last wait.
    expect(again.structuredContent).toMatchObject({ noop: true, run: { state: "succeeded", waiting: null } });
    expect(text(again)).not.toContain("waits");
    expect(text(again)).toMatch(/^already resumed: /);
  });

  it("resume with queue: the inputs checked and left to a worker of the role; the run waits until one takes it", async () => {
    const wrong = await s.call("POST", `/v1/runs/${waiting.id}/resume`, {
      as: "Builder",
      body: { inputs: { approved: "yes", comments: [] }, queue: true },
    });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error).toMatchObject({
      code: "invalid_resume_inputs",
      message:
        "resume inputs do not match the WAITING event's expected_inputs:\n  inputs.approved: expected boolean, got string",
    });
    const api = await s.call("POST", `/v1/runs/${waiting.id}/resume`, {
      as: "Builder",
      body: { inputs: { approved: true, comments: [] }, queue: true },
    });
    expect(api.status).toBe(202);
    expect(api.body).toMatchObject({ noop: false, queued: true, run: { id: waiting.id, state: "waiting" } });
    const again = await ok(builder, "runs_resume", {
      id: waiting.id,
      inputs: { approved: true, comments: [] },
      queue: true,
    });
    expect(again.structuredContent).toMatchObject({ noop: true, queued: true, run: { state: "waiting" } });
    expect(text(again)).toMatch(/^queued already: /);
    const other = await refused(builder, "runs_resume", {
      id: waiting.id,
      inputs: { approved: false, comments: [] },
      queue: true,
    });
    expect(other).toBe(
      `resume_queued: run ${waiting.id} has a resume queued already, with other inputs ({"approved":true,"comments":[]}): a worker of Builder will carry it out`,
    );
    // A worker of the role takes it.
    const taken = await s.tp.supervisor().takeQueuedResume(["Builder"]);
    expect((await taken!.finished).state).toBe("succeeded");
  });

  it("cancel: refused to others, done by a human, refused once finished", async () => {
    const reviewer = await httpClient(s, "Reviewer");
    const human = await httpClient(s, "Human");
    try {
      expect(await refused(reviewer, "runs_cancel", { id: waiting.id })).toMatch(
        /^permission_refused: Reviewer may not cancel run /,
      );
      expect(await refused(human, "runs_cancel", { id: waiting.id, reason: "" })).toMatch(
        /^MCP error -32602: Input validation error: Invalid arguments for tool runs_cancel: .* at reason$/,
      );
      const canceled = await ok(human, "runs_cancel", { id: waiting.id, reason: "wrong branch" });
      expect(canceled.structuredContent.run).toMatchObject({
        id: waiting.id,
        state: "canceled",
        reason: "wrong branch",
      });
      expect((await s.call("GET", "/v1/entries/w-1")).body.entry.status).toBe("canceled");
      expect(await refused(human, "runs_cancel", { id: waiting.id })).toBe(
        `run_finished: run ${waiting.id} is already canceled: nothing to cancel`,
      );
    } finally {
      await reviewer.close();
      await human.close();
    }
  });

  it("resources: entries, runs, events, logs and Kai answers; unknown ones refused with the API's message", async () => {
    const templates = (await builder.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate);
    expect(templates).toEqual(
      expect.arrayContaining([
        "pmagent://entries/{id}",
        "pmagent://entries/{id}/history",
        "pmagent://runs/{id}",
        "pmagent://runs/{id}/events",
        "pmagent://runs/{id}/logs",
        "pmagent://kai/lane_status/{layer}/{name}",
      ]),
    );
    const listed = (await builder.listResources()).resources.map((r) => r.uri);
    expect(listed).toEqual(
      expect.arrayContaining([
        "pmagent://entries/w-1",
        `pmagent://runs/${waiting.id}`,
        "pmagent://kai/lane_status",
        "pmagent://kai/what_changed",
        "pmagent://kai/lane_status/test/build",
      ]),
    );

    // Ids are percent-encoded in URIs, listed so and read back.
    await ok(builder, "bb_post", { entry: { id: "odd id/1", to: "Reviewer", kind: "review_request" } });
    expect((await builder.listResources()).resources.map((r) => r.uri)).toContain("pmagent://entries/odd%20id%2F1");
    expect(
      JSON.parse(contents(await builder.readResource({ uri: "pmagent://entries/odd%20id%2F1" }))[0]!.text),
    ).toMatchObject({ entry: { id: "odd id/1" } });
    const entry = contents(await builder.readResource({ uri: "pmagent://entries/w-1" }));
    expect(entry[0]).toMatchObject({ uri: "pmagent://entries/w-1", mimeType: "application/json" });
    expect(JSON.parse(entry[0]!.text)).toMatchObject({ entry: { id: "w-1", to: "Builder" }, version: 2 });
    expect(
      JSON.parse(contents(await builder.readResource({ uri: "pmagent://entries/w-1/history" }))[0]!.text),
    ).toHaveLength(2);
    expect(
      JSON.parse(contents(await builder.readResource({ uri: `pmagent://runs/${waiting.id}` }))[0]!.text),
    ).toMatchObject({ id: waiting.id, state: "waiting" });
    const events = JSON.parse(
      contents(await builder.readResource({ uri: `pmagent://runs/${waiting.id}/events` }))[0]!.text,
    ) as Array<{ event_type: string }>;
    expect(events.map((e) => e.event_type)).toEqual(["PHASE_STARTED", "ARTIFACT", "WAITING"]);
    const logs = JSON.parse(
      contents(await builder.readResource({ uri: `pmagent://runs/${waiting.id}/logs` }))[0]!.text,
    ) as Array<{ text: string }>;
    expect(logs.map((l) => l.text)).toContain("working on it");

    const lane = contents(await builder.readResource({ uri: "pmagent://kai/lane_status" }));
    expect(lane[0]).toMatchObject({ mimeType: "text/markdown" });
    expect(lane[0]!.text).toMatch(/^## test \/ build status/);
    expect(JSON.parse(lane[1]!.text)).toMatchObject({
      version: "kai_response_v1",
      payload: { kind: "lane_status_v1" },
    });
    expect(contents(await builder.readResource({ uri: "pmagent://kai/lane_status/test/build" }))[0]!.text).toMatch(
      /^## test \/ build status/,
    );
    expect(contents(await builder.readResource({ uri: "pmagent://kai/what_changed" }))[0]!.text).toMatch(
      /^## What changed in demo/,
    );

    await expect(builder.readResource({ uri: "pmagent://entries/nope" })).rejects.toThrow(
      /^MCP error -32002: entry_not_found: entry nope does not exist in project demo$/,
    );
    await expect(builder.readResource({ uri: "pmagent://runs/nope/events" })).rejects.toThrow(
      /^MCP error -32002: run_not_found: run nope does not exist in project demo/,
    );
    await expect(builder.readResource({ uri: "pmagent://kai/lane_status/no/such" })).rejects.toThrow(
      /^MCP error -32602: invalid_kai_request: /,
    );
    // Clients complete ids in a template as the user types.
    const completed = await builder.complete({
      ref: { type: "ref/resource", uri: "pmagent://entries/{id}" },
      argument: { name: "id", value: "w" },
    });
    expect(completed.completion.values).toEqual(["w-1"]);
    const runIds = await builder.complete({
      ref: { type: "ref/resource", uri: "pmagent://runs/{id}/events" },
      argument: { name: "id", value: "nomatch" },
    });
    expect(runIds.completion.values).toEqual([]);
    await expect(builder.readResource({ uri: "pmagent://elsewhere/x" })).rejects.toThrow(
      "Resource pmagent://elsewhere/x not found",
    );
  });

  it("prompts: what waits for me (for the token's actor) and what changed this week", async () => {
    const names = (await builder.listPrompts()).prompts.map((p) => p.name);
    expect(names).toEqual(expect.arrayContaining(["what_waits_for_me", "what_changed_this_week", "lane_status"]));
    const mine = (await builder.getPrompt({ name: "what_waits_for_me" })).messages[0]!.content as { text: string };
    expect(mine.text).toContain("I am Builder on project demo");
    expect(mine.text).toContain("- w-1 [in_progress] build_request Human → Builder");
    expect(mine.text).toContain(`- ${waiting.id} [waiting] Builder on w-1`);
    // Builder is no human: proposals are not its to decide.
    expect(mine.text).not.toContain("Environment proposals");
    const reviewer = await httpClient(s, "Reviewer");
    try {
      const theirs = (await reviewer.getPrompt({ name: "what_waits_for_me" })).messages[0]!.content as { text: string };
      expect(theirs.text).toContain("## Entries addressed to me (open or in progress)\n- none");
      expect(theirs.text).toContain("## Runs waiting for input I may give\n- none");
    } finally {
      await reviewer.close();
    }
    const human = await httpClient(s, "Human");
    try {
      const theirs = (await human.getPrompt({ name: "what_waits_for_me" })).messages[0]!.content as { text: string };
      expect(theirs.text).toContain(`- ${waiting.id} [waiting]`);
      expect(theirs.text).toContain("## Environment proposals waiting for a human\n- none");
    } finally {
      await human.close();
    }
    const week = (await builder.getPrompt({ name: "what_changed_this_week", arguments: { lane: "test/build" } }))
      .messages[0]!.content as { text: string };
    expect(week.text).toMatch(/^Here is Kai's account of what changed in the last 7 days:\n\n## What changed in demo/);
    await expect(builder.getPrompt({ name: "lane_status", arguments: { lane: "no/such" } })).rejects.toThrow(
      /^MCP error -32602: invalid_kai_request: the kai_request_v1 is invalid: /,
    );
    await expect(builder.getPrompt({ name: "what_changed_this_week", arguments: { lane: "nolayer" } })).rejects.toThrow(
      /expected LAYER\/NAME, e.g. layer_b\/doc_update/,
    );
  });
});
