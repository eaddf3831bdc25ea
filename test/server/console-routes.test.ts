import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Blackboard } from "../../src/blackboard/index.js";
import { RunStore } from "../../src/lattice/index.js";
import { availableStoreKinds, type TestStore } from "../helpers/stores.js";
import { startServer, type TestServer } from "./helpers.js";

const kinds = await availableStoreKinds();

describe.each(kinds)("routes the console reads on $name: the inbox and a pull request's diff", (kind) => {
  let ts: TestStore;
  let s: TestServer;

  beforeEach(async () => {
    ts = await kind.open();
    s = await startServer(ts);
  });
  afterEach(async () => {
    await s.close();
    await ts.cleanup();
  });

  it("the inbox lists waiting runs, pending proposals, entries for a human and standing OA denials", async () => {
    expect((await s.call("GET", "/v1/inbox")).body).toEqual({
      waiting_runs: [],
      proposals: [],
      entries: [],
      denials: [],
    });
    const board = new Blackboard(ts.store, { projectId: "demo", humans: ["Human"] });
    await board.post("Human", { id: "w-1", to: "Builder", kind: "build_request" });
    await board.post("Builder", { id: "ask-1", to: "Human", kind: "question", payload: { q: "which branch?" } });
    await board.post("Builder", { id: "ask-2", to: "Human", kind: "question" });
    await board.transition("Human", "ask-2", "done");
    await board.post("Human", { id: "d-1", to: "Builder", kind: "build_request" });
    await board.post("Human", { id: "d-2", to: "Builder", kind: "build_request" });
    await board.post("Human", { id: "d-3", to: "Builder", kind: "build_request" });
    const runs = new RunStore(ts.store, "demo");
    await runs.recordGateDecision(
      "d-1",
      1,
      "Builder",
      { decision: "DENY", reasoning: "kernel DEGRADED: reality checks fail", conditions: [] },
      null,
    );
    // Denied, then allowed: no longer standing. Denied, then finished: nothing to do.
    await runs.recordGateDecision("d-2", 1, "Builder", { decision: "DENY", reasoning: "first", conditions: [] }, null);
    await runs.recordGateDecision("d-2", 1, "Builder", { decision: "ALLOW", reasoning: "", conditions: [] }, null);
    await runs.recordGateDecision("d-3", 1, "Builder", { decision: "DENY", reasoning: "no", conditions: [] }, null);
    await board.transition("Human", "d-3", "canceled");
    const command = s.tp.sprite("wait", {
      steps: [{ waiting: { reason: "PR_REVIEW", expected_inputs: { approved: "boolean" } } }],
    });
    const waiting = await s.tp.supervisor().startRun({ role: "Builder", entryId: "w-1", command });
    const { ProposalStore } = await import("../../src/lattice/index.js");
    const ps = new ProposalStore({ store: ts.store, projectId: "demo", humans: ["Human"] });
    const proposal = (
      await ps.record("Builder", waiting.id, "ev-a", {
        observed_failure: { phase: "bootstrap", exit_code: 127, stderr_hint: "node: not found" },
        suggested_adjustment: { type: "runtime_install", details: { runtime: "node" } },
        confidence: 0.8,
        evidence: [],
        scope: "repo_specific",
      } as never)
    ).proposal;

    const inbox = (await s.call("GET", "/v1/inbox")).body;
    expect(
      inbox.waiting_runs.map((r: { id: string; waiting: { expected_inputs: unknown } }) => [
        r.id,
        r.waiting.expected_inputs,
      ]),
    ).toEqual([[waiting.id, { approved: "boolean" }]]);
    expect(inbox.proposals.map((p: { id: string }) => p.id)).toEqual([proposal.id]);
    expect(inbox.entries.map((e: { entry: { id: string } }) => e.entry.id)).toEqual(["ask-1"]);
    expect(inbox.denials).toEqual([
      expect.objectContaining({
        entry_id: "d-1",
        role: "Builder",
        reasoning: "kernel DEGRADED: reality checks fail",
        entry: expect.objectContaining({ version: 1 }),
      }),
    ]);
    // Every actor may read it; a bad limit is refused with what to fix.
    expect((await s.call("GET", "/v1/inbox?limit=1", { as: "Builder" })).body.entries).toHaveLength(1);
    // Newest first: a later question comes before the first, and a limit of 1 keeps only it.
    await board.post("Builder", { id: "ask-3", to: "Human", kind: "question" });
    expect((await s.call("GET", "/v1/inbox")).body.entries.map((e: { entry: { id: string } }) => e.entry.id)).toEqual([
      "ask-3",
      "ask-1",
    ]);
    expect(
      (await s.call("GET", "/v1/inbox?limit=1")).body.entries.map((e: { entry: { id: string } }) => e.entry.id),
    ).toEqual(["ask-3"]);
    const bad = await s.call("GET", "/v1/inbox?limit=0");
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toBe("query string is invalid:\n  $.limit: limit must be at least 1");
    expect((await s.call("GET", "/v1/inbox?limit=501")).body.error.message).toBe(
      "query string is invalid:\n  $.limit: limit must be at most 500",
    );
    expect((await s.call("GET", "/v1/inbox?status=open")).body.error.message).toContain('Unrecognized key: "status"');
  });

  it("answers a local pull request with its diff against its base; 404 and 400 say what is wrong", async () => {
    const git = (...args: string[]) =>
      execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.invalid", ...args], {
        cwd: s.tp.root,
        stdio: "ignore",
      });
    git("checkout", "-q", "-b", "sprite/docs");
    writeFileSync(join(s.tp.root, "GUIDE.md"), "# Guide\n\nhello <b>world</b>\n");
    git("add", "GUIDE.md");
    git("commit", "-q", "-m", "docs: a guide");
    git("checkout", "-q", "main");
    const pr = await s.server.ctx.forge.openPullRequest({
      title: "Add a guide",
      body: "for #22",
      base: "main",
      head: "sprite/docs",
      workspace: s.tp.root,
    });
    const res = await s.call("GET", `/v1/prs/${pr.number}/diff`);
    expect(res.status).toBe(200);
    expect(res.body.pull).toMatchObject({
      number: pr.number,
      title: "Add a guide",
      head: "sprite/docs",
      base: "main",
      state: "open",
    });
    expect(res.body.stat).toMatch(/GUIDE\.md \| 3 \+\+\+/);
    expect(res.body.diff).toContain("+++ b/GUIDE.md\n@@ -0,0 +1,3 @@\n+# Guide\n+\n+hello <b>world</b>");
    expect(res.body.truncated).toBe(false);
    const missing = await s.call("GET", "/v1/prs/99/diff");
    expect(missing.status).toBe(404);
    expect(missing.body.error).toEqual({
      code: "pull_request_not_found",
      message: "pull request #99 does not exist in the local forge (see GET /v1/prs or `pmagent prs`)",
    });
    const bad = await s.call("GET", "/v1/prs/abc/diff");
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain("$.number: expected a pull request number");
    expect((await s.call("GET", "/v1/prs/0/diff")).body.error.message).toBe(
      "path is invalid:\n  $.number: expected a pull request number (1 or more)",
    );
  });

  it("keeps review comments on a pull request, by the authenticated caller, on the change or a file's line; bad comments say why", async () => {
    const git = (...args: string[]) =>
      execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.invalid", ...args], {
        cwd: s.tp.root,
        stdio: "ignore",
      });
    git("checkout", "-q", "-b", "sprite/notes");
    writeFileSync(join(s.tp.root, "NOTES.md"), "# Notes\n");
    git("add", "NOTES.md");
    git("commit", "-q", "-m", "docs: notes");
    git("checkout", "-q", "main");
    const pr = await s.server.ctx.forge.openPullRequest({
      title: "Add notes",
      body: "",
      base: "main",
      head: "sprite/notes",
      workspace: s.tp.root,
    });
    const first = await s.call("POST", `/v1/prs/${pr.number}/comments`, { body: { body: "Looks right **overall**." } });
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    expect(first.body).toMatchObject({
      number: pr.number,
      author: "Human",
      body: "Looks right **overall**.",
      path: null,
      line: null,
    });
    // The author is who authenticated, whatever the body says.
    const spoof = await s.call("POST", `/v1/prs/${pr.number}/comments`, {
      as: "Builder",
      body: { body: "the title should say notes", path: "NOTES.md", line: 1, author: "Human" },
    });
    expect([spoof.status, spoof.body.error?.message]).toEqual([
      400,
      expect.stringContaining('Unrecognized key: "author"'),
    ]);
    const onLine = await s.call("POST", `/v1/prs/${pr.number}/comments`, {
      as: "Builder",
      body: { body: "the title should say notes", path: "NOTES.md", line: 1 },
    });
    expect(onLine.body).toMatchObject({ author: "Builder", path: "NOTES.md", line: 1 });
    const list = await s.call("GET", `/v1/prs/${pr.number}/comments`);
    expect(list.body.items.map((c: { author: string; body: string }) => [c.author, c.body])).toEqual([
      ["Human", "Looks right **overall**."],
      ["Builder", "the title should say notes"],
    ]);

    const refused = async (body: unknown) =>
      (await s.call("POST", `/v1/prs/${pr.number}/comments`, { body })).body.error;
    expect(await refused({ body: "   " })).toEqual({
      code: "invalid_comment",
      message: "a review comment needs a body: say what should change, or why it is fine",
    });
    expect(await refused({ body: "x", line: 3 })).toEqual({
      code: "invalid_comment",
      message: "a comment on a line names its file too: give the path of one of the change's files",
    });
    expect(await refused({ body: "x", path: "../etc/passwd" })).toEqual({
      code: "invalid_comment",
      message:
        '"../etc/passwd" is not a path of the change: give it relative to the repository, without .. (e.g. src/greet.py)',
    });
    expect((await refused({ body: "x", path: "a", line: 0 })).message).toContain("$.line");
    expect((await s.call("POST", "/v1/prs/99/comments", { body: { body: "x" } })).body.error.code).toBe(
      "pull_request_not_found",
    );
    expect((await s.call("GET", "/v1/prs/99/comments")).status).toBe(404);
  });
});
