import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createServer, type AddressInfo, type Socket } from "node:net";
import {
  Blackboard,
  SyncReportSchema,
  createGithubClient,
  parseComment,
  renderComment,
  syncBoard,
  type Entry,
  type SyncOptions,
  type SyncReport,
} from "../../src/blackboard/index.js";
import { PmagentError } from "../../src/core/index.js";
import { FakeGitHub } from "../helpers/fake-github.js";
import { availableStoreKinds, type TestStore } from "../helpers/stores.js";
import { CLI, runCli } from "../helpers/proc.js";
import { spawn } from "node:child_process";

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
    syncBoard({
      board,
      repo: REPO,
      issue: 1,
      apiUrl: fake.url,
      token: "test-token",
      tokenEnv: "GITHUB_TOKEN",
      onWait: (ms) => void waits.push(ms),
      retryAfterBaseMs: 1,
      writeSpacingMs: 0,
      ...over,
    });
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
      const body =
        i % 3 === 0
          ? `<!-- blackboard:doc_update_v1 -->\n\n\`\`\`json\n${JSON.stringify(entry(`e${i}`))}\n\`\`\``
          : renderComment(entry(`e${i}`));
      ids.push(fake.addComment(REPO, 1, i % 2 === 0 ? body.replace(/\n/g, "\r\n") : body).id);
      if (i % 40 === 0) fake.addComment(REPO, 1, "LGTM, thanks!");
    }
    const report = await sync();
    expect(report).toMatchObject({
      comments: 134,
      imported: ids.map((id, i) => ({ entry_id: `e${i}`, comment_id: id })),
      conflicts: [],
      bad_comments: [],
      posted: [],
      written_back: [],
    });
    expect(fake.requests.filter((r) => r.path.endsWith("/issues/1/comments")).map((r) => r.query.page ?? "1")).toEqual([
      "1",
      "2",
    ]);

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
    const c = fake.addComment(
      REPO,
      1,
      `<!-- blackboard:pm_v2 -->\r\n\r\n\`\`\`json\r\n${JSON.stringify(entry("w1"))}\r\n\`\`\``,
    );
    await sync();
    const done = await board.transition("Aya", "w1", "done", { note: "applied" });
    const report = await sync();
    expect(report).toMatchObject({
      written_back: [{ entry_id: "w1", comment_id: c.id }],
      updated_locally: [],
      conflicts: [],
    });
    expect(fake.comment(c.id)!.body).toBe(renderComment(done.entry, "pm_v2"));
    expect(parseComment(fake.comment(c.id)!.body)).toMatchObject({
      type: "pm_v2",
      form: "bare",
      entry: { status: "done", note: "applied" },
    });
    expect(await sync()).toMatchObject({ unchanged: 1, written_back: [] });
  });

  it("posts new local entries as new comments, once", async () => {
    const { stored } = await board.post("Human", {
      id: "new-1",
      to: "Aya",
      kind: "doc_update_proposal_request",
      payload: { summary: "新しい" },
    });
    await board.post("Human", {
      id: "new-2",
      to: "Sho",
      kind: "doc_update_review_request",
      created_at: "2020-01-01T00:00:00Z",
    });
    const report = await sync({ type: "doc_update_v1" });
    expect(report.posted.map((p) => p.entry_id)).toEqual(["new-2", "new-1"]);
    const comments = fake.comments(REPO, 1);
    expect(comments.map((c) => c.body)).toEqual([
      renderComment((await board.get("new-2")).entry),
      renderComment(stored.entry),
    ]);
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
    expect(report).toMatchObject({
      updated_locally: [{ entry_id: "r1", comment_id: c.id }],
      written_back: [],
      conflicts: [],
    });
    expect((await board.get("r1")).entry).toEqual({ ...edited, source_issue: 1, source_comment_id: c.id });
    const last = (await board.history("r1")).at(-1)!;
    expect(last).toMatchObject({ actor: "github-sync", action: "import", from_status: "open", to_status: "done" });
    expect(await sync()).toMatchObject({ unchanged: 1, updated_locally: [] });
  });

  it("a reformatted comment with the same entry is not a change", async () => {
    const c = fake.addComment(REPO, 1, renderComment(entry("f1")));
    await sync();
    fake.editComment(
      c.id,
      `\uFEFF<!-- blackboard:doc_update_v1 -->\n\`\`\`json\n${JSON.stringify(entry("f1"))}\n\`\`\`\n`,
    );
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
      {
        entry_id: "both",
        comment_id: c.id,
        remote_updated_at: edited.updated_at,
        reason: `changed locally and edited on GitHub (at ${edited.updated_at}) since the last sync; neither side is changed`,
      },
    ]);
    expect(fake.comment(c.id)!.body).toBe(remoteBody);
    expect((await board.get("both")).entry.status).toBe("in_progress");
    expect((await sync()).conflicts).toHaveLength(1);
  });

  it("reports bad comments (issue, comment id, reason) and goes on with the rest", async () => {
    const noJson = fake.addComment(REPO, 1, `<!-- blackboard:doc_update_v1 -->\n\n${JSON.stringify(entry("x"))}`);
    fake.addComment(REPO, 1, renderComment(entry("good-1")));
    const badJson = fake.addComment(REPO, 1, '<!-- blackboard:doc_update_v1 -->\n\njson\n{"id": "x",}');
    const badEntry = fake.addComment(
      REPO,
      1,
      `<!-- blackboard:doc_update_v1 -->\n\njson\n${JSON.stringify({ ...entry("y"), status: "finished" })}`,
    );
    fake.addComment(REPO, 1, "Not a blackboard comment");
    fake.addComment(REPO, 1, renderComment(entry("good-2")));
    const report = await sync();
    expect(report.imported.map((i) => i.entry_id)).toEqual(["good-1", "good-2"]);
    expect(report.bad_comments).toEqual([
      {
        issue: 1,
        comment_id: noJson.id,
        code: "bb_comment_no_json_line",
        reason: expect.stringContaining("no `json` line after the blackboard marker"),
      },
      {
        issue: 1,
        comment_id: badJson.id,
        code: "bb_comment_invalid_json",
        reason: 'invalid JSON at line 4, column 12: unexpected character "}" (expected a double-quoted property name)',
      },
      {
        issue: 1,
        comment_id: badEntry.id,
        code: "bb_comment_invalid_entry",
        reason: expect.stringContaining("$.status:"),
      },
    ]);
  });

  it("does not import a GitHub edit over an entry a worker holds claimed", async () => {
    const c = fake.addComment(REPO, 1, renderComment(entry("claimed")));
    await sync();
    const claimed = await board.claim("Aya@host:1", "Aya", ["doc_update_proposal_request"]);
    expect(claimed?.entry.id).toBe("claimed");
    expect(await sync()).toMatchObject({ written_back: [{ entry_id: "claimed" }] });
    fake.editComment(
      c.id,
      renderComment({
        ...claimed!.entry,
        source_issue: 1,
        source_comment_id: c.id,
        payload: { summary: "edited on GitHub" },
      }),
    );
    const report = await sync();
    expect(report.conflicts.map((x) => x.reason)).toEqual([
      "edited on GitHub while Aya@host:1 holds its claim locally; not imported while the claim is held",
    ]);
    expect((await board.get("claimed")).entry.payload).toEqual(entry("claimed").payload);
  });

  it("reports a linked comment edited into plain text or into another entry, and keeps the local entry", async () => {
    const plain = fake.addComment(REPO, 1, renderComment(entry("p1")));
    const swapped = fake.addComment(REPO, 1, renderComment(entry("p2")));
    await sync();
    fake.editComment(plain.id, "never mind");
    fake.editComment(swapped.id, renderComment(entry("p3")));
    const report = await sync();
    expect(report.conflicts.map((x) => [x.entry_id, x.comment_id, x.reason])).toEqual([
      [
        "p1",
        plain.id,
        "the comment was edited on GitHub and no longer holds a blackboard entry; the local entry is kept",
      ],
      ["p2", swapped.id, 'the comment was edited on GitHub to hold entry "p3" instead; neither side is changed'],
    ]);
    expect(await board.find("p3")).toBeUndefined();
    expect((await board.get("p1")).entry.id).toBe("p1");
    expect(fake.comments(REPO, 1)).toHaveLength(2);
  });

  it("reports a second comment holding the same entry as a duplicate", async () => {
    const first = fake.addComment(REPO, 1, renderComment(entry("dup")));
    const copy = fake.addComment(REPO, 1, renderComment(entry("dup", { note: "copy" })));
    const report = await sync();
    expect(report.imported).toEqual([{ entry_id: "dup", comment_id: first.id }]);
    expect(report.bad_comments).toEqual([
      {
        issue: 1,
        comment_id: copy.id,
        code: "bb_comment_duplicate",
        reason: `entry "dup" is already held by comment ${first.id}; this copy is ignored`,
      },
    ]);
  });

  it("syncs a board holding two projects' entries: each into its own project, never picked by this one's roles, never bad", async () => {
    const mine = fake.addComment(
      REPO,
      1,
      renderComment(entry("m1", { payload_ref: { value: "progress_summary.md" } })),
    );
    const other = fake.addComment(
      REPO,
      1,
      `<!-- blackboard:doc_update_v1 -->\n\`\`\`json\n${JSON.stringify(entry("o1", { project_id: "elsewhere" }))}\n\`\`\``,
    );
    const report = await sync();
    expect(report.projects).toEqual(["demo", "elsewhere"]);
    expect(report.imported).toEqual([
      { entry_id: "m1", comment_id: mine.id },
      { entry_id: "o1", comment_id: other.id, project_id: "elsewhere" },
    ]);
    expect(report.bad_comments).toEqual([]);
    expect(await board.find("o1")).toBeUndefined();
    expect((await board.get("m1")).entry.payload_ref).toEqual({ value: "progress_summary.md" });
    const elsewhere = new Blackboard(t.store, { projectId: "elsewhere", humans: ["Human"] });
    expect((await elsewhere.get("o1")).entry).toEqual({
      ...entry("o1", { project_id: "elsewhere" }),
      source_issue: 1,
      source_comment_id: other.id,
    });
    // This project's Aya picks only its own entry.
    expect((await board.claim("aya-1", "Aya", ["doc_update_proposal_request"]))?.entry.id).toBe("m1");
    expect(await board.claim("aya-1", "Aya", ["doc_update_proposal_request"])).toBeUndefined();
    // The other project's entry changed locally is written back to its comment; nothing else moves.
    await elsewhere.transition("Human", "o1", "canceled");
    const again = await sync();
    expect(again.written_back).toEqual([
      { entry_id: "m1", comment_id: mine.id },
      { entry_id: "o1", comment_id: other.id, project_id: "elsewhere" },
    ]);
    expect(parseComment(fake.comment(other.id)!.body)!.entry).toMatchObject({
      id: "o1",
      project_id: "elsewhere",
      status: "canceled",
    });
    expect((await sync()).unchanged).toBe(2);
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
      {
        entry_id: "diff",
        comment_id: diff.id,
        remote_updated_at: expect.any(String),
        reason:
          "the entry exists locally and differs from this comment, which was never synced with it; neither side is changed",
      },
    ]);
    expect(same.id).toBeGreaterThan(0);
    expect(fake.comments(REPO, 1)).toHaveLength(2);
  });

  /** Make saving a link fail, as a sync killed right after GitHub created the comment would. */
  const crashBeforeLinking = async (on: boolean) => {
    if (t.store.dialect === "sqlite") {
      await t.store.exec(
        on
          ? "CREATE TRIGGER crash_link BEFORE INSERT ON bb_sync BEGIN SELECT RAISE(ABORT, 'simulated crash'); END"
          : "DROP TRIGGER crash_link",
      );
    } else {
      await t.store.exec(
        on
          ? "CREATE FUNCTION crash_link() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'simulated crash'; END $$; CREATE TRIGGER crash_link BEFORE INSERT ON bb_sync FOR EACH ROW EXECUTE FUNCTION crash_link()"
          : "DROP TRIGGER crash_link ON bb_sync; DROP FUNCTION crash_link()",
      );
    }
  };
  const postCutOff = async (id: string) => {
    await board.post("Human", {
      id,
      to: "Aya",
      kind: "doc_update_proposal_request",
      payload: { summary: "posted, then the sync died" },
    });
    await crashBeforeLinking(true);
    await expect(sync()).rejects.toThrow(/simulated crash/);
    await crashBeforeLinking(false);
    const comments = fake.comments(REPO, 1);
    expect(comments).toHaveLength(1);
    expect(await t.store.all("SELECT entry_id FROM bb_sync")).toEqual([]);
    return comments[0]!;
  };

  it("a sync cut off between posting a comment and linking it: the next one links that comment and posts nothing again", async () => {
    const c = await postCutOff("cut");
    expect(await sync()).toMatchObject({ posted: [], unchanged: 1, conflicts: [], written_back: [] });
    expect(fake.comments(REPO, 1).map((x) => x.id)).toEqual([c.id]);
    expect(await t.store.all("SELECT entry_id, comment_id FROM bb_sync")).toEqual([
      { entry_id: "cut", comment_id: c.id },
    ]);
    expect(await t.store.all("SELECT entry_id FROM bb_sync_posting")).toEqual([]);
    expect(await sync()).toMatchObject({ posted: [], unchanged: 1 });
  });

  it("a cut-off post whose entry then changed locally (a worker claimed it): linked and written back, not a conflict, not posted again", async () => {
    const c = await postCutOff("claimed");
    const claimed = await board.claim("w1", "Aya", ["doc_update_proposal_request"], 60_000, { entryId: "claimed" });
    expect(claimed?.entry.status).toBe("in_progress");
    const report = await sync();
    expect(report).toMatchObject({
      posted: [],
      conflicts: [],
      written_back: [{ entry_id: "claimed", comment_id: c.id }],
    });
    expect(fake.comments(REPO, 1)).toHaveLength(1);
    expect(parseComment(fake.comment(c.id)!.body)!.entry).toMatchObject({ id: "claimed", status: "in_progress" });
    expect(await sync()).toMatchObject({ posted: [], unchanged: 1, conflicts: [] });
  });

  it("a cut-off post edited on GitHub while the entry changed locally is a conflict, and still not posted again", async () => {
    const c = await postCutOff("both");
    fake.editComment(c.id, renderComment(entry("both", { note: "edited on GitHub" })));
    await board.claim("w1", "Aya", ["doc_update_proposal_request"], 60_000, { entryId: "both" });
    const report = await sync();
    expect(report).toMatchObject({ posted: [], written_back: [] });
    expect(report.conflicts).toEqual([
      {
        entry_id: "both",
        comment_id: c.id,
        remote_updated_at: expect.any(String),
        reason:
          "the entry exists locally and differs from this comment, which was never synced with it; neither side is changed",
      },
    ]);
    expect(fake.comments(REPO, 1)).toHaveLength(1);
  });

  it("runs one sync per board at a time: a concurrent one is refused, nothing is posted twice", async () => {
    await board.post("Human", { id: "once", to: "Aya", kind: "k" });
    // GitHub holds the first sync's first answer while it holds the lock, until the second sync
    // has been answered: the two overlap however long either takes to reach the database.
    const hold = fake.holdNext();
    const first = sync();
    await hold.reached;
    const second = sync();
    second.then(hold.release, hold.release);
    const results = await Promise.allSettled([first, second]);
    const ok = results.filter((r) => r.status === "fulfilled");
    const refused = results.filter((r): r is PromiseRejectedResult => r.status === "rejected");
    expect(ok).toHaveLength(1);
    expect(refused).toHaveLength(1);
    expect(refused[0]!.reason).toMatchObject({
      code: "bb_sync_running",
      message: expect.stringMatching(
        /^another bb sync of acme\/board#1 is running \(.+, lock held until .+\): wait for it to finish$/,
      ),
    });
    expect(fake.comments(REPO, 1)).toHaveLength(1);
    expect(await t.store.all("SELECT holder FROM bb_sync_lock")).toEqual([]);
  });

  it("takes over the lock of a crashed sync once it expired", async () => {
    await t.store.run("INSERT INTO bb_sync_lock (project_id, repo, issue, holder, expires_ms) VALUES (?, ?, ?, ?, ?)", [
      "demo",
      "acme/board",
      1,
      "crashed:1:ab",
      Date.now() + 60_000,
    ]);
    expect((await failure(sync())).message).toMatch(
      /^another bb sync of acme\/board#1 is running \(crashed:1:ab, lock held until /,
    );
    await t.store.run("UPDATE bb_sync_lock SET expires_ms = ?", [Date.now() - 1]);
    expect(await sync()).toMatchObject({ comments: 0 });
    expect(await t.store.all("SELECT holder FROM bb_sync_lock")).toEqual([]);
  });

  it("reports an entry GitHub refuses to store (comment too long) and goes on with the rest", async () => {
    const huge = { summary: "x".repeat(70_000) };
    await board.post("Human", { id: "big", to: "Aya", kind: "k", payload: huge, created_at: "2020-01-01T00:00:00Z" });
    await board.post("Human", { id: "small", to: "Aya", kind: "k" });
    const c = fake.addComment(REPO, 1, renderComment(entry("grows")));
    await expect(sync()).resolves.toMatchObject({ posted: [{ entry_id: "small" }], imported: [{ entry_id: "grows" }] });
    await board.change("Aya", "grows", { payload: huge });
    const report = await sync();
    const reason = (what: string) =>
      `cannot ${what}: GitHub answered 422 Validation Failed (body is too long (maximum is 65536 characters))`;
    expect(report.refused).toEqual([
      { entry_id: "grows", comment_id: c.id, reason: reason(`rewrite comment ${c.id} of acme/board#1`) },
      { entry_id: "big", reason: reason("post entry big to acme/board#1") },
    ]);
    expect(fake.comment(c.id)!.body).toBe(renderComment(entry("grows")));
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

  it("waits out a secondary rate limit answered 403 without retry-after (a minute, as GitHub asks) and a 502, never reporting missing access", async () => {
    fake.addComment(REPO, 1, renderComment(entry("s1")));
    fake.rateLimitNext({ requests: 1, kind: "secondary", status: 403, retryAfterSeconds: null });
    expect(await sync()).toMatchObject({ imported: [{ entry_id: "s1" }], rate_limit_waits: 1 });
    expect(waits).toEqual([60_000]);

    await board.post("Human", { id: "s2", to: "Aya", kind: "k" });
    fake.failNext(2, 502);
    expect(await sync()).toMatchObject({ posted: [{ entry_id: "s2" }], conflicts: [] });
    expect(fake.requests.filter((r) => r.status === 502)).toHaveLength(2);

    // Still limited after the retries: reported as a rate limit, not as a token without access.
    fake.rateLimitNext({ requests: 10, kind: "secondary", status: 403, retryAfterSeconds: null });
    const limited = await failure(sync({ maxRetries: 1 }));
    expect(limited.code).toBe("github_rate_limited");
    expect(limited.message).toMatch(/^GitHub rate limit still exceeded after 1 retries: try again after /);
    fake.rateLimitNext({ requests: 0, kind: "secondary" });
    fake.failNext(10, 502);
    const down = await failure(sync({ maxRetries: 1 }));
    expect(down.code).toBe("github_unreachable");
  });

  it("an unchanged board costs no rate limit: a reused client's GETs are answered 304 Not Modified", async () => {
    fake.addComment(REPO, 1, renderComment(entry("c1")));
    const client = await createGithubClient({
      apiUrl: fake.url,
      token: "test-token",
      tokenEnv: "GITHUB_TOKEN",
      retryAfterBaseMs: 1,
      writeSpacingMs: 0,
    });
    expect(await sync({ client })).toMatchObject({ imported: [{ entry_id: "c1" }], not_modified: 0 });
    const charged = fake.charged;
    expect(await sync({ client })).toMatchObject({ imported: [], unchanged: 1, not_modified: 1 });
    expect(fake.charged).toBe(charged);
    expect(fake.requests.at(-1)).toMatchObject({
      status: 304,
      headers: { "if-none-match": expect.stringMatching(/^W\/"/) },
    });
    // A change on GitHub is seen at once.
    fake.addComment(REPO, 1, renderComment(entry("c2")));
    expect(await sync({ client })).toMatchObject({ imported: [{ entry_id: "c2" }], unchanged: 1, not_modified: 0 });
  });

  it("gives up on a rate limit after the retries, or when the reset is too far away", async () => {
    fake.rateLimitNext({ requests: 10, kind: "secondary", retryAfterSeconds: 1 });
    const exhausted = await failure(sync({ maxRetries: 2 }));
    expect(exhausted.code).toBe("github_rate_limited");
    expect(exhausted.message).toMatch(
      /^GitHub rate limit still exceeded after 2 retries: try again after \d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/,
    );
    expect(waits).toEqual([1000, 1000]);

    fake.rateLimitNext({ requests: 1, kind: "primary", resetInSeconds: 3600 });
    const far = await failure(sync());
    expect(far.message).toMatch(
      /^GitHub rate limit exceeded and resets only in 36\d\d s \(pmagent waits at most 60 s\): try again after /,
    );
  });

  it("reports 401 Bad credentials and 404 Not Found with what to fix, never the token", async () => {
    const bad = await failure(sync({ token: "ghp_wrongwrongwrongwrongwrongwrong1234" }));
    expect(bad.code).toBe("github_bad_credentials");
    expect(bad.message).toBe(
      "cannot list the comments of acme/board#1: GitHub rejected the token in GITHUB_TOKEN (401 Bad credentials): set GITHUB_TOKEN to a valid token",
    );
    expect(bad.message).not.toContain("wrong");

    const missing = await failure(sync({ issue: 42 }));
    expect(missing.code).toBe("github_not_found");
    expect(missing.message).toBe(
      "cannot list the comments of acme/board#42: GitHub answered 404 Not Found (check the repository and issue number, and that the token in GITHUB_TOKEN can see them)",
    );
    expect((await failure(sync({ repo: "acme/nope" }))).code).toBe("github_not_found");
  });

  it("reports an unreachable API", async () => {
    const url = fake.url;
    await fake.close();
    const err = await failure(sync({ apiUrl: url }));
    expect(err.code).toBe("github_unreachable");
    expect(err.message).toMatch(
      new RegExp(`^cannot list the comments of acme/board#1: GitHub at ${url} did not answer`),
    );
    fake = await FakeGitHub.start();
  });

  it("gives up on a server that accepts the connection and never answers", async () => {
    const sockets: Socket[] = [];
    const silent = createServer((socket) => void sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    try {
      const url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
      const err = await failure(sync({ apiUrl: url, timeoutMs: 300 }));
      expect(err.code).toBe("github_unreachable");
      expect(err.message).toMatch(
        new RegExp(`^cannot list the comments of acme/board#1: GitHub at ${url} did not answer`),
      );
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });

  it("refuses a bad repository, issue, type or API URL", async () => {
    expect((await failure(sync({ repo: "acme" }))).message).toBe(
      'repository "acme" is not OWNER/NAME (e.g. acme/widgets)',
    );
    expect((await failure(sync({ issue: 0 }))).message).toBe(
      'issue "0" is not an issue number (a whole number from 1)',
    );
    expect((await failure(sync({ type: "doc update" }))).message).toBe(
      'blackboard type "doc update" is not valid: it must be non-empty, without spaces or angle brackets (e.g. doc_update_v1)',
    );
    expect((await failure(sync({ apiUrl: "not a url" }))).message).toBe(
      'GitHub API URL "not a url" is not a URL (e.g. https://api.github.com)',
    );
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

  const cli = (args: string[], env: Record<string, string> = {}) =>
    runCli(args, { cwd: dir, env: { PATH: process.env.PATH ?? "", ...t.env, ...env } });

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
    expect(
      (await cli(["bb", "post", "--id", "cli-2", "--to", "Sho", "--kind", "doc_update_review_request"])).code,
    ).toBe(0);
    const r = await cli(["bb", "sync", "--format", "json"], { BOARD_TOKEN: "test-token" });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const report = SyncReportSchema.parse(JSON.parse(r.stdout));
    expect(report).toMatchObject({
      repo: REPO,
      issue: 1,
      imported: [{ entry_id: "cli-1", comment_id: c.id }],
      posted: [{ entry_id: "cli-2" }],
    });
    const text = await cli(["bb", "sync"], { BOARD_TOKEN: "test-token" });
    expect(text.stdout).toBe(
      "synced acme/board#1 (2 comments): imported 0, updated locally 0, written back 0, posted 0, unchanged 2, conflicts 0, bad comments 0\n",
    );
  });

  /** Start `bb sync --watch …`, collecting its JSON-line reports; `rounds(n)` resolves once n have come. */
  function watching(args: string[]) {
    const child = spawn(process.execPath, [CLI, "bb", "sync", "--watch", "--format", "json", ...args], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? "", ...t.env, GITHUB_TOKEN: "test-token" },
    });
    const reports: SyncReport[] = [];
    let stderr = "";
    let buffer = "";
    const waiters: Array<{ n: number; resolve: () => void }> = [];
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.stdout.on("data", (d: Buffer) => {
      buffer += d.toString();
      const lines = buffer.split("\n");
      buffer = lines.pop()!;
      for (const l of lines) reports.push(SyncReportSchema.parse(JSON.parse(l)));
      for (const w of waiters.filter((w) => reports.length >= w.n)) w.resolve();
    });
    const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
    const rounds = (n: number) =>
      new Promise<void>((resolve, reject) => {
        if (reports.length >= n) return resolve();
        waiters.push({ n, resolve });
        void exited.then(() => reject(new Error(`bb sync --watch exited after ${reports.length} rounds: ${stderr}`)));
      });
    return { child, reports, rounds, exited, stderr: () => stderr };
  }

  it("--watch syncs round after round, an unchanged board answered 304, and stops on SIGTERM", async () => {
    await init({ repo: REPO, board_issue: 1, api_url: fake.url });
    fake.addComment(REPO, 1, renderComment(entry("w1")));
    const w = watching(["--interval", "1"]);
    await w.rounds(2);
    w.child.kill("SIGTERM");
    expect(await w.exited).toBe(0);
    expect(w.reports[0]).toMatchObject({ imported: [{ entry_id: "w1" }], not_modified: 0 });
    expect(w.reports[1]).toMatchObject({ imported: [], unchanged: 1, not_modified: 1 });
    expect(w.stderr()).toBe("");
  });

  it("--watch stops on SIGINT while it waits for the next round, without waiting the interval out", async () => {
    await init({ repo: REPO, board_issue: 1, api_url: fake.url });
    const w = watching(["--interval", "3600"]);
    await w.rounds(1);
    w.child.kill("SIGINT");
    expect(await w.exited).toBe(0);
    expect(w.reports).toHaveLength(1);
  });

  it("--watch reports a round GitHub refused for its rate limit and goes on with the next", async () => {
    await init({ repo: REPO, board_issue: 1, api_url: fake.url });
    fake.rateLimitNext({ requests: 1, kind: "primary", resetInSeconds: 3600 }); // too far to wait: the round fails
    fake.addComment(REPO, 1, renderComment(entry("w2")));
    const w = watching(["--interval", "1"]);
    await w.rounds(1);
    w.child.kill("SIGTERM");
    expect(await w.exited).toBe(0);
    expect(w.stderr()).toMatch(
      /sync failed, retrying in 1 s: GitHub rate limit exceeded and resets only in 36\d\d s \(pmagent waits at most 60 s\)/,
    );
    expect(w.reports[0]).toMatchObject({ imported: [{ entry_id: "w2" }] });
  });

  it("refuses a --watch interval that is not a whole number of seconds from 1", async () => {
    await init({ repo: REPO, board_issue: 1, api_url: fake.url });
    const zero = await cli(["bb", "sync", "--watch", "--interval", "0"], { GITHUB_TOKEN: "test-token" });
    expect(zero.code).toBe(2);
    expect(zero.stderr).toContain("--interval must be between 1 and ∞, got 0");
    expect((await cli(["bb", "sync", "--watch", "--interval", "1m"], { GITHUB_TOKEN: "test-token" })).stderr).toContain(
      '--interval expects a whole number, got "1m"',
    );
  });

  it("exits 1 and lists conflicts and bad comments", async () => {
    await init();
    const bad = fake.addComment(REPO, 1, "<!-- blackboard:doc_update_v1 -->\n\njson\n[]");
    const r = await cli(["bb", "sync", "--repo", REPO, "--issue", "1", "--api-url", fake.url], {
      GITHUB_TOKEN: "test-token",
    });
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(
      `  bad comment ${bad.id} on #1: the JSON after the \`json\` line is an array, not an object: an entry is one JSON object`,
    );
  });

  it("refuses to run without a token, a repository or an issue, in one line", async () => {
    await init();
    const noToken = await cli(["bb", "sync", "--repo", REPO, "--issue", "1", "--api-url", fake.url]);
    expect(noToken.code).toBe(2);
    expect(noToken.stderr).toBe(
      "pmagent: GITHUB_TOKEN is not set: export a GitHub token that can read and write the board issue's comments (e.g. export GITHUB_TOKEN=…) [github_token_missing]\n",
    );
    const noRepo = await cli(["bb", "sync", "--issue", "1"], { GITHUB_TOKEN: "test-token" });
    expect(noRepo.code).toBe(2);
    expect(noRepo.stderr).toBe(
      "pmagent: bb sync needs --repo OWNER/NAME (or github.repo in pmagent.config.json) [missing_option]\n",
    );
    const noIssue = await cli(["bb", "sync", "--repo", REPO], { GITHUB_TOKEN: "test-token" });
    expect(noIssue.stderr).toBe(
      "pmagent: bb sync needs --issue N (or github.board_issue in pmagent.config.json) [missing_option]\n",
    );
    const badIssue = await cli(["bb", "sync", "--repo", REPO, "--issue", "x"], { GITHUB_TOKEN: "test-token" });
    expect(badIssue.code).toBe(2);
    expect(badIssue.stderr).toContain('--issue expects a whole number, got "x"');
    const badType = await cli(["bb", "sync", "--repo", REPO, "--issue", "1", "--type", "a b"], {
      GITHUB_TOKEN: "test-token",
    });
    expect(badType.code).toBe(2);
    expect(badType.stderr).toBe(
      'pmagent: blackboard type "a b" is not valid: it must be non-empty, without spaces or angle brackets (e.g. doc_update_v1) [bb_bad_type]\n',
    );
    const badUrl = await cli(["bb", "sync", "--repo", REPO, "--issue", "1", "--api-url", "nope"], {
      GITHUB_TOKEN: "test-token",
    });
    expect(badUrl.code).toBe(2);
    expect(badUrl.stderr).toBe(
      'pmagent: GitHub API URL "nope" is not a URL (e.g. https://api.github.com) [github_bad_api_url]\n',
    );
    const badRepo = await cli(["bb", "sync", "--repo", "acme", "--issue", "1"], { GITHUB_TOKEN: "test-token" });
    expect(badRepo.code).toBe(2);
    expect(badRepo.stderr).toBe(
      'pmagent: repository "acme" is not OWNER/NAME (e.g. acme/widgets) [bb_sync_bad_repo]\n',
    );
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
