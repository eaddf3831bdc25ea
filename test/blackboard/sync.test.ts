import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Blackboard, parseComment, renderComment, syncBoard, type Entry, type SyncOptions } from "../../src/blackboard/index.js";
import { PmagentError } from "../../src/core/index.js";
import { FakeGitHub } from "../helpers/fake-github.js";
import { availableStoreKinds, type TestStore } from "../helpers/stores.js";
import { runCli } from "../helpers/proc.js";

const REPO = "acme/board";
const kinds = await availableStoreKinds();

function entry(id: string, over: Partial<Entry> = {}): Entry {
  return {
    id,
    from: "Human",
    to: "Aya",
    project_id: "demo",
    kind: "doc_update_proposal_request",
    status: "open",
    payload: { summary: `更新 ${id}`, details: {}, refs: {} },
    target_docs: ["STATE/current_state.md"],
    created_at: "2025-11-30T02:30:00+09:00",
    updated_at: "2025-11-30T02:30:00+09:00",
    ...over,
  };
}

async function failure(p: Promise<unknown>): Promise<PmagentError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(PmagentError);
    return err as PmagentError;
  }
  throw new Error("expected the sync to fail");
}

describe.each(kinds)("bb sync ($name)", (kind) => {
  let fake: FakeGitHub;
  let t: TestStore;
  let board: Blackboard;
  let waits: number[];
  const sync = (over: Partial<SyncOptions> = {}) =>
    syncBoard({ board, repo: REPO, issue: 1, apiUrl: fake.url, token: "test-token", tokenEnv: "GITHUB_TOKEN", sleep: async (ms) => void waits.push(ms), ...over });
  const writes = () => fake.requests.filter((r) => r.method !== "GET");

  beforeEach(async () => {
    fake = await FakeGitHub.start();
    fake.addRepo(REPO);
    fake.addIssue(REPO, { title: "Blackboard" });
    t = await kind.open();
    board = new Blackboard(t.store, { projectId: "demo", humans: ["Human"] });
    waits = [];
  });

  afterEach(async () => {
    await fake.close();
    await t.cleanup();
  });

  it("imports every entry of the issue across pages (>100 comments), with source_issue and source_comment_id", async () => {
    const ids: number[] = [];
    for (let i = 0; i < 130; i++) {
      const body = i % 3 === 0 ? `<!-- blackboard:doc_update_v1 -->\n\n\`\`\`json\n${JSON.stringify(entry(`e${i}`))}\n\`\`\`` : renderComment(entry(`e${i}`));
      ids.push(fake.addComment(REPO, 1, i % 2 === 0 ? body.replace(/\n/g, "\r\n") : body).id);
      if (i % 40 === 0) fake.addComment(REPO, 1, "LGTM, thanks!");
    }
    const report = await sync();
    expect(report).toMatchObject({ comments: 134, imported: ids.map((id, i) => ({ entry_id: `e${i}`, comment_id: id })), conflicts: [], bad_comments: [], posted: [], written_back: [] });
    expect(fake.requests.filter((r) => r.path.endsWith("/issues/1/comments")).map((r) => r.query.page ?? "1")).toEqual(["1", "2"]);

    const stored = await board.get("e7");
    expect(stored.entry).toEqual({ ...entry("e7"), source_issue: 1, source_comment_id: ids[7] });
    const history = await board.history("e7");
    expect(history.map((h) => [h.actor, h.action])).toEqual([["github-sync", "import"]]);

    // Nothing changed on either side: the second sync reads and writes nothing back.
    const before = writes().length;
    const again = await sync();
    expect(again).toMatchObject({ unchanged: 130, imported: [], written_back: [], posted: [], conflicts: [] });
    expect(writes().length).toBe(before);
  });

  it("keeps a source_issue / source_comment_id the entry already names", async () => {
    const c = fake.addComment(REPO, 1, renderComment(entry("linked", { source_issue: 571, source_comment_id: "abc" })));
    await sync();
    expect((await board.get("linked")).entry).toMatchObject({ source_issue: 571, source_comment_id: "abc" });
    expect(c.id).toBeGreaterThan(0);
  });

  it("writes a local change back by rewriting the entry's comment in canonical form", async () => {
    const c = fake.addComment(REPO, 1, `<!-- blackboard:pm_v2 -->\r\n\r\n\`\`\`json\r\n${JSON.stringify(entry("w1"))}\r\n\`\`\``);
    await sync();
    const done = await board.transition("Aya", "w1", "done", { note: "applied" });
    const report = await sync();
    expect(report).toMatchObject({ written_back: [{ entry_id: "w1", comment_id: c.id }], updated_locally: [], conflicts: [] });
    expect(fake.comment(c.id)!.body).toBe(renderComment(done.entry, "pm_v2"));
    expect(parseComment(fake.comment(c.id)!.body)).toMatchObject({ type: "pm_v2", form: "bare", entry: { status: "done", note: "applied" } });
    expect(await sync()).toMatchObject({ unchanged: 1, written_back: [] });
  });

  it("posts new local entries as new comments, once", async () => {
    const { stored } = await board.post("Human", { id: "new-1", to: "Aya", kind: "doc_update_proposal_request", payload: { summary: "新しい" } });
    await board.post("Human", { id: "new-2", to: "Sho", kind: "doc_update_review_request", created_at: "2020-01-01T00:00:00Z" });
    const report = await sync({ type: "doc_update_v1" });
    expect(report.posted.map((p) => p.entry_id)).toEqual(["new-2", "new-1"]);
    const comments = fake.comments(REPO, 1);
    expect(comments.map((c) => c.body)).toEqual([renderComment((await board.get("new-2")).entry), renderComment(stored.entry)]);
    expect(comments[1]!.user.login).toBe("pmagent-bot");
    expect(await sync()).toMatchObject({ posted: [], unchanged: 2 });
    expect(fake.comments(REPO, 1)).toHaveLength(2);
  });

  it("imports an entry edited only on GitHub (status and timestamps kept, history as github-sync)", async () => {
    const c = fake.addComment(REPO, 1, renderComment(entry("r1")));
    await sync();
    const edited = entry("r1", { status: "done", updated_at: "2025-12-01T10:00:00Z", note: "merged by the workflow" });
    fake.editComment(c.id, renderComment(edited));
    const report = await sync();
    expect(report).toMatchObject({ updated_locally: [{ entry_id: "r1", comment_id: c.id }], written_back: [], conflicts: [] });
    expect((await board.get("r1")).entry).toEqual({ ...edited, source_issue: 1, source_comment_id: c.id });
    const last = (await board.history("r1")).at(-1)!;
    expect(last).toMatchObject({ actor: "github-sync", action: "import", from_status: "open", to_status: "done" });
    expect(await sync()).toMatchObject({ unchanged: 1, updated_locally: [] });
  });

  it("a reformatted comment with the same entry is not a change", async () => {
    const c = fake.addComment(REPO, 1, renderComment(entry("f1")));
    await sync();
    fake.editComment(c.id, `\uFEFF<!-- blackboard:doc_update_v1 -->\n\`\`\`json\n${JSON.stringify(entry("f1"))}\n\`\`\`\n`);
    expect(await sync()).toMatchObject({ unchanged: 1, updated_locally: [], written_back: [], conflicts: [] });
  });

  it("reports an entry changed on both sides as a conflict and leaves both alone", async () => {
    const c = fake.addComment(REPO, 1, renderComment(entry("both")));
    await sync();
    await board.transition("Aya", "both", "in_progress");
    const remoteBody = renderComment(entry("both", { status: "canceled", updated_at: "2025-12-02T00:00:00Z" }));
    const edited = fake.editComment(c.id, remoteBody);
    const report = await sync();
    expect(report.conflicts).toEqual([
      { entry_id: "both", comment_id: c.id, remote_updated_at: edited.updated_at, reason: `changed locally and edited on GitHub (at ${edited.updated_at}) since the last sync; neither side is changed` },
    ]);
    expect(fake.comment(c.id)!.body).toBe(remoteBody);
    expect((await board.get("both")).entry.status).toBe("in_progress");
    expect((await sync()).conflicts).toHaveLength(1);
  });

  it("reports bad comments (issue, comment id, reason) and goes on with the rest", async () => {
    const noJson = fake.addComment(REPO, 1, `<!-- blackboard:doc_update_v1 -->\n\n${JSON.stringify(entry("x"))}`);
    fake.addComment(REPO, 1, renderComment(entry("good-1")));
    const badJson = fake.addComment(REPO, 1, '<!-- blackboard:doc_update_v1 -->\n\njson\n{"id": "x",}');
    const badEntry = fake.addComment(REPO, 1, `<!-- blackboard:doc_update_v1 -->\n\njson\n${JSON.stringify({ ...entry("y"), status: "finished" })}`);
    fake.addComment(REPO, 1, "Not a blackboard comment");
    fake.addComment(REPO, 1, renderComment(entry("good-2")));
    const report = await sync();
    expect(report.imported.map((i) => i.entry_id)).toEqual(["good-1", "good-2"]);
    expect(report.bad_comments).toEqual([
      { issue: 1, comment_id: noJson.id, code: "bb_comment_no_json_line", reason: expect.stringContaining("no `json` line after the blackboard marker") },
      { issue: 1, comment_id: badJson.id, code: "bb_comment_invalid_json", reason: "invalid JSON at line 4, column 12: unexpected character \"}\" (expected a double-quoted property name)" },
      { issue: 1, comment_id: badEntry.id, code: "bb_comment_invalid_entry", reason: expect.stringContaining("$.status:") },
    ]);
  });

  it("reports a second comment holding the same entry as a duplicate", async () => {
    const first = fake.addComment(REPO, 1, renderComment(entry("dup")));
    const copy = fake.addComment(REPO, 1, renderComment(entry("dup", { note: "copy" })));
    const report = await sync();
    expect(report.imported).toEqual([{ entry_id: "dup", comment_id: first.id }]);
    expect(report.bad_comments).toEqual([{ issue: 1, comment_id: copy.id, code: "bb_comment_duplicate", reason: `entry "dup" is already held by comment ${first.id}; this copy is ignored` }]);
  });

  it("skips entries of another project", async () => {
    const other = fake.addComment(REPO, 1, renderComment(entry("o1", { project_id: "elsewhere" })));
    const report = await sync();
    expect(report.skipped).toEqual([{ entry_id: "o1", comment_id: other.id, reason: 'entry of project "elsewhere", not "demo"' }]);
    expect(await board.find("o1")).toBeUndefined();
  });

  it("refuses to import a GitHub edit the lifecycle does not allow, and reports a deleted comment", async () => {
    const c = fake.addComment(REPO, 1, renderComment(entry("l1", { status: "done" })));
    const gone = fake.addComment(REPO, 1, renderComment(entry("l2")));
    await sync();
    fake.editComment(c.id, renderComment(entry("l1", { status: "open" })));
    fake.deleteComment(gone.id);
    const report = await sync();
    expect(report.conflicts.map((x) => [x.entry_id, x.reason])).toEqual([
      ["l1", "edited on GitHub to move it done → open, which the lifecycle does not allow; the local entry is kept"],
      ["l2", "the comment was deleted on GitHub; the local entry is kept and not posted again"],
    ]);
    expect((await board.get("l1")).entry.status).toBe("done");
    expect(fake.comments(REPO, 1)).toHaveLength(1);
  });

  it("links an entry that exists identically on both sides, and reports one that differs", async () => {
    await board.put("Human", entry("same"));
    await board.put("Human", entry("diff"));
    const same = fake.addComment(REPO, 1, renderComment(entry("same")));
    const diff = fake.addComment(REPO, 1, renderComment(entry("diff", { to: "Sho" })));
    const report = await sync();
    expect(report).toMatchObject({ unchanged: 1, imported: [], posted: [] });
    expect(report.conflicts).toEqual([
      { entry_id: "diff", comment_id: diff.id, remote_updated_at: expect.any(String), reason: "the entry exists locally and differs from this comment, which was never synced with it; neither side is changed" },
    ]);
    expect(same.id).toBeGreaterThan(0);
    expect(fake.comments(REPO, 1)).toHaveLength(2);
  });

  it("waits out a primary rate limit (403, x-ratelimit-reset) and a secondary one (429, retry-after), then succeeds", async () => {
    fake.addComment(REPO, 1, renderComment(entry("rl")));
    fake.rateLimitNext({ requests: 1, kind: "primary", resetInSeconds: 5 });
    const report = await sync();
    expect(report).toMatchObject({ imported: [{ entry_id: "rl" }], rate_limit_waits: 1 });
    expect(waits).toHaveLength(1);
    expect(waits[0]).toBeGreaterThan(4000);
    expect(waits[0]).toBeLessThanOrEqual(7000);

    await board.post("Human", { id: "rl-2", to: "Aya", kind: "k" });
    fake.rateLimitNext({ requests: 2, kind: "secondary", retryAfterSeconds: 2 });
    expect(await sync()).toMatchObject({ posted: [{ entry_id: "rl-2" }], rate_limit_waits: 2 });
    expect(waits.slice(1)).toEqual([2000, 2000]);
  });

  it("gives up on a rate limit after the retries, or when the reset is too far away", async () => {
    fake.rateLimitNext({ requests: 10, kind: "secondary", retryAfterSeconds: 1 });
    const exhausted = await failure(sync({ maxRetries: 2 }));
    expect(exhausted.code).toBe("github_rate_limited");
    expect(exhausted.message).toMatch(/^GitHub rate limit still exceeded after 2 retries: try again after \d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    expect(waits).toEqual([1000, 1000]);

    fake.rateLimitNext({ requests: 1, kind: "primary", resetInSeconds: 3600 });
    const far = await failure(sync());
    expect(far.message).toMatch(/^GitHub rate limit exceeded and resets only in 36\d\d s \(pmagent waits at most 60 s\): try again after /);
  });

  it("reports 401 Bad credentials and 404 Not Found with what to fix, never the token", async () => {
    const bad = await failure(sync({ token: "ghp_wrongwrongwrongwrongwrongwrong1234" }));
    expect(bad.code).toBe("github_bad_credentials");
    expect(bad.message).toBe("cannot list the comments of acme/board#1: GitHub rejected the token in GITHUB_TOKEN (401 Bad credentials): set GITHUB_TOKEN to a valid token");
    expect(bad.message).not.toContain("wrong");

    const missing = await failure(sync({ issue: 42 }));
    expect(missing.code).toBe("github_not_found");
    expect(missing.message).toBe("cannot list the comments of acme/board#42: GitHub answered 404 Not Found (check the repository and issue number, and that the token in GITHUB_TOKEN can see them)");
    expect((await failure(sync({ repo: "acme/nope" }))).code).toBe("github_not_found");
  });

  it("reports an unreachable API", async () => {
    const url = fake.url;
    await fake.close();
    const err = await failure(sync({ apiUrl: url }));
    expect(err.code).toBe("github_unreachable");
    expect(err.message).toMatch(new RegExp(`^cannot list the comments of acme/board#1: GitHub at ${url} did not answer`));
    fake = await FakeGitHub.start();
  });

  it("refuses a bad repository, issue, type or API URL", async () => {
    expect((await failure(sync({ repo: "acme" }))).message).toBe('repository "acme" is not OWNER/NAME (e.g. acme/widgets)');
    expect((await failure(sync({ issue: 0 }))).message).toBe('issue "0" is not an issue number (a whole number from 1)');
    expect((await failure(sync({ type: "doc update" }))).message).toBe('blackboard type "doc update" is not valid: it must be non-empty, without spaces or angle brackets (e.g. doc_update_v1)');
    expect((await failure(sync({ apiUrl: "not a url" }))).message).toBe('GitHub API URL "not a url" is not a URL (e.g. https://api.github.com)');
  });
});

describe.each(kinds)("pmagent bb sync CLI ($name)", (kind) => {
  let fake: FakeGitHub;
  let t: TestStore;
  let dir: string;

  beforeEach(async () => {
    fake = await FakeGitHub.start();
    fake.addRepo(REPO);
    fake.addIssue(REPO);
    t = await kind.open();
    dir = mkdtempSync(join(tmpdir(), "pmagent-sync-"));
  });

  afterEach(async () => {
    await fake.close();
    await t.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  const cli = (args: string[], env: Record<string, string> = {}) => runCli(args, { cwd: dir, env: { PATH: process.env.PATH ?? "", ...t.env, ...env } });

  async function init(github?: Record<string, unknown>): Promise<void> {
    expect((await cli(["init", "--project-id", "demo"])).code).toBe(0);
    if (github) {
      const file = join(dir, "pmagent.config.json");
      writeFileSync(file, JSON.stringify({ ...JSON.parse(readFileSync(file, "utf8")), github }, null, 2));
    }
  }

  it("syncs with the repository and issue from the config and prints the report", async () => {
    await init({ repo: REPO, board_issue: 1, api_url: fake.url, token_env: "BOARD_TOKEN" });
    const c = fake.addComment(REPO, 1, renderComment(entry("cli-1")));
    expect((await cli(["bb", "post", "--id", "cli-2", "--to", "Sho", "--kind", "doc_update_review_request"])).code).toBe(0);
    const r = await cli(["bb", "sync", "--format", "json"], { BOARD_TOKEN: "test-token" });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(report).toMatchObject({ repo: REPO, issue: 1, imported: [{ entry_id: "cli-1", comment_id: c.id }], posted: [{ entry_id: "cli-2" }] });
    const text = await cli(["bb", "sync"], { BOARD_TOKEN: "test-token" });
    expect(text.stdout).toBe("synced acme/board#1 (2 comments): imported 0, updated locally 0, written back 0, posted 0, unchanged 2, conflicts 0, bad comments 0\n");
  });

  it("exits 1 and lists conflicts and bad comments", async () => {
    await init();
    const bad = fake.addComment(REPO, 1, "<!-- blackboard:doc_update_v1 -->\n\njson\n[]");
    const r = await cli(["bb", "sync", "--repo", REPO, "--issue", "1", "--api-url", fake.url], { GITHUB_TOKEN: "test-token" });
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(`  bad comment ${bad.id} on #1: the JSON after the \`json\` line is an array, not an object: an entry is one JSON object`);
  });

  it("refuses to run without a token, a repository or an issue, in one line", async () => {
    await init();
    const noToken = await cli(["bb", "sync", "--repo", REPO, "--issue", "1", "--api-url", fake.url]);
    expect(noToken.code).toBe(2);
    expect(noToken.stderr).toBe("pmagent: GITHUB_TOKEN is not set: export a GitHub token that can read and write the board issue's comments (e.g. export GITHUB_TOKEN=…) [github_token_missing]\n");
    const noRepo = await cli(["bb", "sync", "--issue", "1"], { GITHUB_TOKEN: "test-token" });
    expect(noRepo.code).toBe(2);
    expect(noRepo.stderr).toBe("pmagent: bb sync needs --repo OWNER/NAME (or github.repo in pmagent.config.json) [missing_option]\n");
    const noIssue = await cli(["bb", "sync", "--repo", REPO], { GITHUB_TOKEN: "test-token" });
    expect(noIssue.stderr).toBe("pmagent: bb sync needs --issue N (or github.board_issue in pmagent.config.json) [missing_option]\n");
    const badIssue = await cli(["bb", "sync", "--repo", REPO, "--issue", "x"], { GITHUB_TOKEN: "test-token" });
    expect(badIssue.code).toBe(2);
    expect(badIssue.stderr).toContain('--issue expects a whole number, got "x"');
  });

  it("never prints the token, even when GitHub rejects it", async () => {
    await init();
    const token = "ghp_thisIsNotAValidTokenButLooksLikeOne42";
    const r = await cli(["bb", "sync", "--repo", REPO, "--issue", "1", "--api-url", fake.url], { GITHUB_TOKEN: token });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("GitHub rejected the token in GITHUB_TOKEN (401 Bad credentials)");
    expect(r.stdout + r.stderr).not.toContain(token);
  });
});
