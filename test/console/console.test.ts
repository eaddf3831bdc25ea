import { execFileSync } from "node:child_process";
import { mkdirSync, renameSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Browser, type Locator, type Page } from "playwright-core";
import { haveChromium, launchChromium } from "./browser.js";
import { Blackboard } from "../../src/blackboard/index.js";
import { ProposalStore, RunStore, type RunRecord } from "../../src/lattice/index.js";
import { REPO_ROOT } from "../helpers/proc.js";
import { openSqliteTestStore, type TestStore } from "../helpers/stores.js";
import { TOKENS, readSse, startServer, type TestServer } from "../server/helpers.js";

/** Screenshots at 1280×800 for a person to look at. */
const ARTIFACTS = join(REPO_ROOT, "test-artifacts/console");

const auth = { authorization: `Bearer ${TOKENS.Human}` };
// A smoke-command change: accepting it applies it at once (a runtime_install would install one).
const adjust = (command: string) => ({
  observed_failure: { phase: "smoke", exit_code: 1, stderr_hint: "no such script" },
  suggested_adjustment: { type: "adjust_smoke_command", details: { command } },
  confidence: 0.8,
  evidence: [],
  scope: "repo_specific",
});
/** Git in the sprite's workspace (a clone of the project): a branch with one commit, for OPEN_PR. */
const commitOnBranch = (branch: string) =>
  `git checkout -q -b ${branch} && printf '# Guide\\n\\nhello from the sprite\\n' > GUIDE.md && git add GUIDE.md && git -c user.name=s -c user.email=s@example.invalid commit -q -m 'docs: a guide'`;

describe.skipIf(!haveChromium)("web console in headless Chromium at 1280×800", () => {
  let ts: TestStore;
  let s: TestServer;
  let browser: Browser;
  let page: Page;
  let board: Blackboard;
  /** Requests the page made to each run's event stream (EventSource connects and reconnects). */
  const streamRequests = new Map<string, number>();
  const shot = (name: string) => page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    ts = await openSqliteTestStore();
    // PATH for the server's own supervisor, whose sprites run git (its environment is what it is given).
    s = await startServer(ts, {
      consoleDir: join(REPO_ROOT, "dist/console"),
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
    });
    board = new Blackboard(ts.store, { projectId: "demo", humans: ["Human"] });
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    // Every EventSource the console opens, so a test can see whether it was closed.
    await page.addInitScript(() => {
      const Native = window.EventSource;
      const opened: EventSource[] = [];
      (window as unknown as { __sources: EventSource[] }).__sources = opened;
      window.EventSource = class extends Native {
        constructor(url: string | URL, init?: EventSourceInit) {
          super(url, init);
          opened.push(this);
        }
      } as typeof EventSource;
    });
    // No external network at run time: any request off the server's origin fails the test.
    const offOrigin: string[] = [];
    page.on("request", (r) => {
      const url = r.url();
      if (!url.startsWith(s.url)) offOrigin.push(url);
      const stream = /\/v1\/runs\/([^/]+)\/events\/stream/.exec(url);
      if (stream) streamRequests.set(stream[1]!, (streamRequests.get(stream[1]!) ?? 0) + 1);
    });
    page.on("close", () => expect(offOrigin).toEqual([]));
  });
  afterAll(async () => {
    await browser?.close();
    await s?.close();
    await ts?.cleanup();
    console.log(`console screenshots (1280×800): ${ARTIFACTS}`);
  });

  it("signs in with a token, loads the live board, the inbox tile, kernel health and Kai's digests rendered", async () => {
    await page.goto(`${s.url}/`);
    await page.locator("#signin").waitFor();
    await page.fill("input[name=token]", "wrong-token-000000000000");
    await page.click("#signin button");
    await page.locator("#signin .error", { hasText: "unknown bearer token" }).waitFor();
    await page.fill("input[name=token]", TOKENS.Human);
    await page.click("#signin button");
    await page.locator("#board").waitFor();
    await expect(page.locator("#who").textContent()).resolves.toBe("as Human");
    await page.locator("#kernel #reality").waitFor();
    expect(await page.locator("#kernel").textContent()).toContain("checks passing 2/3");
    expect(await page.locator("#failing li").allTextContents()).toEqual(["Unit Tests"]);
    await page.locator("#inbox-tile", { hasText: "Nothing waits for a person." }).waitFor();
    await page.locator('#kai .md[data-kai="what_changed"]').waitFor();
    expect(await page.locator("#kai .error").allTextContents()).toEqual([]);
    // Rendered, not raw: the digest's "## …" is a heading and its "- …" lines a list.
    expect(await page.locator('#kai .md[data-kai="what_changed"] h4').textContent()).toMatch(/^What changed in demo/);
    expect(await page.locator('#kai .md[data-kai="what_changed"] ul li').count()).toBeGreaterThan(1);
    expect(await page.locator('#kai .md[data-kai="what_changed"]').textContent()).not.toContain("## ");
    expect(await page.locator('#board-live[data-live="live"]').count()).toBe(1);
    await shot("board");
  });

  it("keeps the board live: a posted entry appears and moves with its status, from the stream's changes", async () => {
    await page.locator('#board-live[data-live="live"]').waitFor();
    const cell = (status: string) => page.locator(`#board tr[data-role="Reviewer"] td[data-status="${status}"]`);
    await board.post("Human", { id: "live-1", to: "Reviewer", kind: "review_request" });
    await cell("open").locator('[data-entry="live-1"]').waitFor();
    expect(await page.locator('#board-kind option[value="review_request"]').count()).toBe(1);
    await board.claim("w-live", "Reviewer", ["review_request"], 60_000);
    await cell("in_progress").locator('[data-entry="live-1"]').waitFor();
    expect(await cell("open").locator('[data-entry="live-1"]').count()).toBe(0);
    expect(await cell("in_progress").locator('[data-entry="live-1"]').textContent()).toContain("v2");
    // One stream the whole time: the changes came on it, nothing reloaded the board.
    expect(
      await page.evaluate(
        () =>
          (window as unknown as { __sources: EventSource[] }).__sources.filter((e) =>
            e.url.endsWith("/v1/entries/stream"),
          ).length,
      ),
    ).toBe(1);
  });

  it("renders Markdown without letting markup or script URLs through", async () => {
    // A string, so the test runner does not rewrite the import() the page runs.
    const source = [
      "# Title <img src=x onerror=alert(1)>",
      "",
      "- **bold** and `code` and *em*",
      "- [ok](https://example.org/a) [bad](javascript:alert(1))",
      "",
      "<script>alert(1)</script>",
      "",
      "| a | b |",
      "|---|---|",
      "| 1 | <i>2</i> |",
      "",
      "```",
      "<b>kept as text</b>",
      "```",
    ].join("\n");
    const out = (await page.evaluate(`import("/console/markdown.js").then((md) => {
      const el = md.renderMarkdown(${JSON.stringify(source)});
      return { tags: Array.from(el.querySelectorAll("*")).map((n) => n.tagName.toLowerCase()), hrefs: Array.from(el.querySelectorAll("a")).map((a) => a.getAttribute("href")), text: el.textContent };
    })`)) as { tags: string[]; hrefs: string[]; text: string };
    expect(out.tags).not.toContain("img");
    expect(out.tags).not.toContain("script");
    expect(out.tags).not.toContain("i");
    expect(out.tags).toEqual(
      expect.arrayContaining(["h3", "ul", "li", "strong", "code", "em", "a", "table", "th", "td", "pre"]),
    );
    expect(out.hrefs).toEqual(["https://example.org/a"]);
    expect(out.text).toContain("[bad](javascript:alert(1))");
    expect(out.text).toContain("<script>alert(1)</script>");
    expect(out.text).toContain("<b>kept as text</b>");
  });

  it("explains a project without kernel surfaces calmly instead of a red error", async () => {
    const share = join(s.tp.root, "share");
    renameSync(share, `${share}.away`);
    try {
      await page.goto(`${s.url}/#/`);
      await page.locator("#kernel-none").waitFor();
      expect(await page.locator("#kernel").textContent()).toContain("pmagent oa init");
      expect(await page.locator("#kernel .error").count()).toBe(0);
      await shot("board-no-kernel");
    } finally {
      renameSync(`${share}.away`, share);
    }
  });

  let waiting: RunRecord;
  let denied: string;
  it("lists what waits for a person in the inbox, and resumes a waiting run from there", async () => {
    await board.post("Human", {
      id: "e2e-1",
      to: "Builder",
      kind: "build_request",
      payload: { summary: "<b>not markup</b>", goal: "a guide" },
    });
    await board.post("Builder", { id: "ask-1", to: "Human", kind: "question", payload: { q: "which base branch?" } });
    await board.post("Human", { id: "deny-1", to: "Builder", kind: "build_request" });
    denied = "deny-1";
    await new RunStore(ts.store, "demo").recordGateDecision(
      "deny-1",
      1,
      "Builder",
      { decision: "DENY", reasoning: "kernel DEGRADED: the Unit Tests check fails", conditions: ["fix Unit Tests"] },
      null,
    );
    const ps = new ProposalStore({ store: ts.store, projectId: "demo", humans: ["Human"] });
    const proposal = (await ps.record("Builder", "run-x", "ev-x", adjust("npm test") as never)).proposal;
    const command = s.tp.sprite("inbox", {
      steps: [
        { emit: "PHASE_STARTED", payload: { phase: "ask" } },
        { waiting: { reason: "NEEDS_DECISION", expected_inputs: { proceed: "boolean", note: "string" } } },
      ],
      on_resume: [{ emit: "COMPLETED", payload: { status: "success", summary: "decided" } }],
    });
    await board.post("Human", { id: "q-1", to: "Builder", kind: "build_request" });
    waiting = await s.tp.supervisor().startRun({ role: "Builder", entryId: "q-1", command });
    expect(waiting.state).toBe("waiting");

    await page.goto(`${s.url}/#/inbox`);
    await page.locator(`[data-waiting-run="${waiting.id}"] form`).waitFor();
    expect(await page.locator("#inbox-summary").textContent()).toBe("4 items wait for a person.");
    expect(await page.locator("#inbox-count").textContent()).toBe("4");
    expect(await page.locator("[data-inbox-entry]").allTextContents()).toEqual([
      expect.stringContaining("ask-1 question · from Builder to Human"),
    ]);
    expect(await page.locator(`[data-denial="${denied}"]`).textContent()).toContain(
      "kernel DEGRADED: the Unit Tests check fails",
    );
    expect(await page.locator(`#inbox-proposals [data-proposal="${proposal.id}"] button`).allTextContents()).toEqual([
      "accept",
      "reject",
    ]);
    await shot("inbox");

    // A value the run does not expect is refused with the server's message; then the resume goes through.
    const form = page.locator(`[data-resume="${waiting.id}"]`);
    await form.locator('input[name="proceed"]').check();
    await form.locator("button").click();
    expect(await form.locator('input[name="note"]:invalid').count()).toBe(1);
    await form.locator('input[name="note"]').fill("go ahead");
    await form.locator("button").click();
    // The inbox reloads without the run once the server accepted the inputs.
    await page.locator(`[data-waiting-run="${waiting.id}"]`).waitFor({ state: "detached" });
    const frames = await readSse(`${s.url}/v1/runs/${waiting.id}/events/stream`, auth, (f) =>
      f.some((x) => x.event === "end"),
    );
    expect(frames.at(-1)?.data).toEqual({ state: "succeeded" });
    const after = (await s.call("GET", `/v1/runs/${waiting.id}`)).body;
    expect(after).toMatchObject({ state: "succeeded", attempt: 2 });
    const ack = (await s.call("GET", `/v1/runs/${waiting.id}/events?type=INFO`)).body.items[0].event.payload;
    expect(ack.metadata.inputs).toEqual({ proceed: true, note: "go ahead" });
  });

  let prRun: RunRecord;
  it("shows a run's timeline: timestamps, payloads, the action's outcome, checkpoints, artifacts, the PR and its diff; resumes it", async () => {
    const command = s.tp.sprite("e2e", {
      steps: [
        { emit: "PHASE_STARTED", payload: { phase: "implement" } },
        { sh: commitOnBranch("sprite/e2e-1") },
        { emit: "ARTIFACT", payload: { kind: "branch", ref: "sprite/e2e-1" } },
        {
          emit: "ACTION_REQUEST",
          payload: {
            action: "OPEN_PR",
            parameters: { title: "Add a guide", body: "for e2e-1", base: "main", head: "sprite/e2e-1" },
            blocking: false,
          },
        },
        { log: "hello from the sprite" },
        {
          waiting: {
            reason: "PR_REVIEW",
            expected_inputs: { approved: "boolean", comments: "array<string>", attempts: "integer", labels: "map" },
          },
        },
      ],
      on_resume: [{ emit: "COMPLETED", payload: { status: "success", summary: "done" } }],
    });
    // The server's own supervisor: its action executor opens the pull request in the local forge.
    // The fixture's kernel is DEGRADED, so its OA gate would deny feature work: decided here.
    prRun = await s.server.ctx.supervisor.startRun({
      role: "Builder",
      entryId: "e2e-1",
      command,
      decided: { decision: "ALLOW", reasoning: "console test", conditions: [] },
    });
    expect(prRun.state).toBe("waiting");
    const actions = (await s.call("GET", `/v1/actions?run=${prRun.id}`)).body.items;
    if (actions[0]?.state !== "succeeded") console.log((await s.call("GET", `/v1/runs/${prRun.id}/logs`)).body);
    expect(actions).toEqual([
      expect.objectContaining({
        action: "OPEN_PR",
        state: "succeeded",
        result: expect.objectContaining({ number: 1 }),
      }),
    ]);

    await page.goto(`${s.url}/#/runs`);
    await page.locator(`#runs a[href="#/runs/${prRun.id}"]`).waitFor();
    // Newest first.
    expect(
      await page.locator("#runs tbody tr").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-run-row"))),
    ).toEqual([prRun.id, waiting.id]);
    await page.selectOption("#filter-state", "succeeded");
    await page.locator(`#runs [data-run-row="${prRun.id}"]`).waitFor({ state: "detached" });
    await page.locator(".paged p", { hasText: "(all)" }).waitFor();
    expect(
      await page.locator("#runs tbody tr").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-run-row"))),
    ).toEqual([waiting.id]);
    await shot("runs");
    await page.selectOption("#filter-state", "");
    await page.click(`#runs a[href="#/runs/${prRun.id}"]`);

    await page.locator('#timeline li[data-seq="4"]').waitFor();
    await page.locator(`#resume-holder [data-resume="${prRun.id}"]`).waitFor();
    expect(await page.locator("#timeline li .line").allTextContents()).toEqual([
      expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ PHASE_STARTED implement $/),
      expect.stringMatching(/Z ARTIFACT branch sprite\/e2e-1 $/),
      expect.stringMatching(/Z ACTION_REQUEST OPEN_PR → succeeded PR #1 sprite\/e2e-1 → main$/),
      expect.stringMatching(/Z WAITING PR_REVIEW $/),
    ]);
    // Payloads are folded; opening one shows it.
    const payload = page.locator('#timeline li[data-seq="3"] details.json');
    expect(await payload.getAttribute("open")).toBeNull();
    await payload.locator("summary").click();
    expect(await payload.locator("pre").textContent()).toContain('"title": "Add a guide"');
    expect(await page.locator("#artifacts li").allTextContents()).toEqual(["branch sprite/e2e-1"]);
    expect(await page.locator("#checkpoints li").allTextContents()).toEqual([
      expect.stringMatching(/^chk_\S+ · PR_REVIEW · \d{4}-/),
    ]);
    await page.locator('#run-prs [data-pr="1"] pre.diff').waitFor();
    expect(await page.locator('#run-prs [data-pr="1"] h2').textContent()).toBe("PR #1 open Add a guide");
    expect(await page.locator('#run-prs [data-pr="1"] pre.diff .add').allTextContents()).toEqual([
      "+# Guide",
      "+",
      "+hello from the sprite",
    ]);
    await page.locator("#logs", { hasText: "hello from the sprite" }).waitFor();
    await shot("run-waiting");

    const form = page.locator(`[data-resume="${prRun.id}"]`);
    await form.locator('input[name="approved"]').check();
    // An array is rows to add and remove, not JSON to type.
    const comments = form.locator('[data-input="comments"]');
    await comments.getByRole("button", { name: "Add item" }).click();
    await comments.getByRole("button", { name: "Add item" }).click();
    await comments.locator("li[data-row] input").nth(0).fill("lgtm");
    await comments.locator("li[data-row] input").nth(1).fill("drop me");
    await comments.getByRole("button", { name: "remove this item" }).nth(1).click();
    await form.locator('input[name="attempts"]').fill("2");
    // A map is rows of key and value; a row without a key is refused before anything is sent.
    const labels = form.locator('[data-input="labels"]');
    await labels.getByRole("button", { name: "Add entry" }).click();
    await labels.getByRole("button", { name: "Add entry" }).click();
    await labels.locator("li[data-row] input.key").nth(0).fill("area");
    await labels.locator("li[data-row] input.value").nth(0).fill("docs");
    await labels.locator("li[data-row] input.value").nth(1).fill("7");
    await form.locator('button[type="submit"]').click();
    await page
      .locator(`[data-resume-error="${prRun.id}"]`, {
        hasText: "labels: an entry has no key: give it one, or remove it",
      })
      .waitFor();
    await labels.locator("li[data-row] input.key").nth(1).fill("priority");
    await form.locator('button[type="submit"]').click();
    await page.locator("#resumed").waitFor();
    await page.waitForFunction(() => document.getElementById("run-state")?.textContent === "succeeded");
    await page.locator('#timeline li[data-seq="6"]').waitFor();
    await page.locator("#run-meta", { hasText: "attempt 2" }).waitFor();
    expect(await page.locator("#run-meta").textContent()).toMatch(/ · finished \d{4}-\d\d-\d\d /);
    expect((await page.locator("#timeline li strong").allTextContents()).slice(4)).toEqual(["INFO", "COMPLETED"]);
    const ack = (await s.call("GET", `/v1/runs/${prRun.id}/events?type=INFO`)).body.items[0].event.payload;
    expect(ack.metadata.inputs).toEqual({
      approved: true,
      comments: ["lgtm"],
      attempts: 2,
      labels: { area: "docs", priority: 7 },
    });
    expect((await s.call("GET", `/v1/runs/${prRun.id}`)).body.state).toBe("succeeded");
    await shot("run-succeeded");
  });

  it("closes a finished run's live stream on end, and the server stops a client that does not", async () => {
    // The run page above saw the run end: its EventSource is closed, opened once only.
    await page.locator('#run-live[data-live="ended"]').waitFor();
    const states = await page.evaluate(() =>
      (window as unknown as { __sources: EventSource[] }).__sources
        .filter((e) => e.url.includes("/events/stream"))
        .map((e) => e.readyState),
    );
    expect(states).toEqual([EventSourceClosed]);
    // Opening the finished run again: one request, the backlog, `end`, closed.
    const before = streamRequests.get(waiting.id) ?? 0;
    await page.goto(`${s.url}/#/runs/${waiting.id}`);
    await page.locator("h1", { hasText: waiting.id }).waitFor();
    await page.locator('#run-live[data-live="ended"]').waitFor();
    expect(await page.locator("#timeline li").count()).toBe(4);
    expect(streamRequests.get(waiting.id)! - before).toBe(1);
    // A plain EventSource that ignores `end` reconnects once (Last-Event-ID = end's id), gets 204
    // No Content, and the browser stops: it does not loop.
    const seen = await page.evaluate(
      async (url) => {
        const es = new EventSource(url);
        let opens = 0;
        let ends = 0;
        es.addEventListener("open", () => opens++);
        es.addEventListener("end", () => ends++);
        await new Promise<void>((resolve) =>
          es.addEventListener("error", () => es.readyState === EventSource.CLOSED && resolve()),
        );
        return { opens, ends, lastId: es.readyState };
      },
      `/v1/runs/${encodeURIComponent(waiting.id)}/events/stream`,
    );
    expect(seen).toEqual({ opens: 1, ends: 1, lastId: EventSourceClosed });
    expect(streamRequests.get(waiting.id)! - before).toBe(3);
  });

  it("merges the pull request from its page: the diff folded per file, Merge, the forge's base then holds the change", async () => {
    await page.goto(`${s.url}/#/prs/1`);
    const file = page.locator('[data-pr="1"] details.diff-file[data-file="GUIDE.md"]');
    await file.waitFor();
    expect(await file.getAttribute("open")).toBe("");
    expect(await file.locator("summary").textContent()).toBe("GUIDE.md +3 −0");
    await file.locator("summary").click();
    expect(await file.getAttribute("open")).toBeNull();
    await file.locator("summary").click();
    await shot("pr-open");
    await page.click("#pr-merge-1");
    await page.locator("#pr-merged-1").waitFor();
    expect(await page.locator('[data-pr="1"] h2').textContent()).toBe("PR #1 merged Add a guide");
    expect(await page.locator("#pr-close-1").count()).toBe(0);
    expect(
      execFileSync("git", ["show", "main:GUIDE.md"], {
        cwd: join(s.tp.root, ".pmagent", "forge.git"),
        encoding: "utf8",
      }),
    ).toBe("# Guide\n\nhello from the sprite\n");
    // The merged diff stays the one it merged.
    expect(await page.locator('[data-pr="1"] pre.diff .add').allTextContents()).toEqual([
      "+# Guide",
      "+",
      "+hello from the sprite",
    ]);
    await shot("pr-merged");
  });

  it("lays a diff out side by side on request: removed lines beside added ones, numbered, the choice kept for the next diff", async () => {
    await page.goto(`${s.url}/#/prs/1`);
    await page.locator('[data-pr="1"] [data-layout-pick="side"]').click();
    const table = page.locator('[data-pr="1"] details.diff-file[data-file="GUIDE.md"] table.diff-side');
    await table.waitFor();
    // A new file: every row an added line facing a gap on the old side, numbered 1..3 on the new side.
    expect(await table.locator("tr.change td.add").allTextContents()).toEqual(["# Guide", "", "hello from the sprite"]);
    expect(await table.locator("tr.change td.gap").count()).toBe(3);
    expect(await table.locator("tr.change td.n").allTextContents()).toEqual(["", "1", "", "2", "", "3"]);
    expect(await page.locator('[data-pr="1"] [data-layout-pick="side"]').getAttribute("aria-pressed")).toBe("true");
    await shot("pr-side-by-side");
    await page.reload();
    await page.locator('[data-pr="1"] table.diff-side').waitFor();
    await page.locator('[data-pr="1"] [data-layout-pick="unified"]').click();
    await page.locator('[data-pr="1"] pre.diff').waitFor();
    expect(await page.locator('[data-pr="1"] table.diff-side').count()).toBe(0);

    // A review comment on one file's line, rendered as Markdown (markup stays text).
    const form = page.locator("#pr-comment-1");
    await form.locator("textarea").fill("Say **who** the guide is for <img src=x onerror=alert(1)>");
    await form.locator('select[name="path"]').selectOption("GUIDE.md");
    await form.locator('input[name="line"]').fill("1");
    await form.locator("button").click();
    const comment = page.locator("#pr-comments-1 li[data-comment]").first();
    await comment.waitFor();
    expect(await comment.locator("p.muted").textContent()).toMatch(/^Human on GUIDE\.md:1 · \d{4}-/);
    expect(await comment.locator("strong", { hasText: "who" }).count()).toBe(1);
    expect(await comment.locator("img").count()).toBe(0);
    await shot("pr-comment");
  });

  it("shows an entry's payload, history, runs and PR; cancels one entry and re-opens a finished one as a new entry", async () => {
    await page.goto(`${s.url}/#/`);
    const card = page.locator('[data-entry="e2e-1"]');
    await card.waitFor();
    expect(await page.locator('[data-entry="e2e-1"] b').count()).toBe(0);
    await card.click();
    await page.locator("#entry-payload").waitFor();
    expect(JSON.parse((await page.locator("#entry-payload").textContent())!)).toEqual({
      summary: "<b>not markup</b>",
      goal: "a guide",
    });
    expect(await page.locator("h1").textContent()).toBe("Entry e2e-1 done");
    expect(await page.locator("#entry-history li").count()).toBeGreaterThanOrEqual(3);
    expect(await page.locator("#entry-history li").first().textContent()).toMatch(
      /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ v1 post by Human · — → open/,
    );
    expect(await page.locator("#entry-runs li").allTextContents()).toEqual([
      expect.stringContaining(`${prRun.id} succeeded Builder · attempt 2`),
    ]);
    await page.locator('#entry-prs [data-pr="1"] pre.diff').waitFor();
    await shot("entry-done");

    // Re-open the finished entry: a new entry with the same addressee, kind and payload.
    await page.click("#reopen-entry");
    await page.locator("#reopened").waitFor();
    const newId = (await page.locator("#reopened").textContent())!;
    const copy = (await s.call("GET", `/v1/entries/${newId}`)).body.entry;
    expect(copy).toMatchObject({
      from: "Human",
      to: "Builder",
      kind: "build_request",
      status: "open",
      payload: { summary: "<b>not markup</b>", goal: "a guide" },
      note: "re-opened from e2e-1",
    });

    // Cancel an open entry from its page.
    await page.click("#reopened");
    await page.locator("#cancel-entry").waitFor();
    await page.click("#cancel-entry");
    await page.locator("h1", { hasText: `Entry ${newId} canceled` }).waitFor();
    expect((await s.call("GET", `/v1/entries/${newId}`)).body.entry.status).toBe("canceled");
  });

  it("pages the entry list newest first with filters and Load more", async () => {
    for (let i = 0; i < 55; i++)
      await board.post("Human", { id: `bulk-${String(i).padStart(2, "0")}`, to: "Reviewer", kind: "review_request" });
    await page.goto(`${s.url}/#/entries`);
    await page.locator("#entries tbody tr").nth(49).waitFor();
    expect(await page.locator("#entries tbody tr").count()).toBe(50);
    expect(await page.locator("#entries tbody tr").first().getAttribute("data-entry-row")).toBe("bulk-54");
    await page.click(".paged .more");
    await page.locator("#entries tbody tr").nth(50).waitFor();
    const all = await page.locator("#entries tbody tr").count();
    expect(all).toBe((await s.call("GET", "/v1/entries?limit=500")).body.items.length);
    expect(await page.locator(".paged .more").isHidden()).toBe(true);
    await page.selectOption("#filter-status", "canceled");
    await page.locator("#entries tbody tr").first().waitFor();
    await page.locator(".paged p", { hasText: "(all)" }).waitFor();
    const canceled = await page
      .locator("#entries tbody tr")
      .evaluateAll((rows) => rows.map((r) => r.getAttribute("data-entry-row")));
    expect(canceled.length).toBe(1);
    await page.selectOption("#filter-status", "");
    await page.selectOption("#filter-to", "Human");
    await page.locator("#entries tbody tr").first().waitFor();
    await page.locator(".paged p", { hasText: "(all)" }).waitFor();
    expect(
      await page.locator("#entries tbody tr").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-entry-row"))),
    ).toEqual(["ask-1"]);
    await shot("entries");
  });

  it("is keyboard reachable: Tab through the header with a visible focus, Enter follows a link, Space presses a button", async () => {
    const ps = new ProposalStore({ store: ts.store, projectId: "demo", humans: ["Human"] });
    const proposal = (await ps.record("Builder", "run-y", "ev-y", adjust("npm run smoke") as never)).proposal;
    await page.goto(`${s.url}/#/`);
    await page.reload();
    await page.locator("#board").waitFor();
    const focused = () =>
      page.evaluate(() => ({
        text: document.activeElement?.textContent?.trim() ?? "",
        outline: getComputedStyle(document.activeElement!).outlineStyle,
      }));
    await page.keyboard.press("Tab");
    expect((await focused()).text).toBe("Skip to content");
    const seen: string[] = [];
    for (let i = 0; i < 8 && !seen.at(-1)?.startsWith("Inbox"); i++) {
      await page.keyboard.press("Tab");
      const f = await focused();
      expect(f.outline).not.toBe("none");
      seen.push(f.text);
    }
    expect(seen).toEqual(["Board", expect.stringMatching(/^Inbox/)]);
    await page.keyboard.press("Enter");
    await page.locator(`#inbox-proposals [data-proposal="${proposal.id}"]`).waitFor();
    expect(new URL(page.url()).hash).toBe("#/inbox");
    // Tab to the proposal's accept button and press it with Space.
    for (let i = 0; i < 60; i++) {
      await page.keyboard.press("Tab");
      const on = await page.evaluate(
        (id) =>
          document.activeElement?.closest(`[data-proposal="${id}"]`) !== null &&
          document.activeElement?.textContent === "accept",
        proposal.id,
      );
      if (on) break;
    }
    expect((await focused()).text).toBe("accept");
    expect((await focused()).outline).not.toBe("none");
    await shot("keyboard-focus");
    await page.keyboard.press("Space");
    await page.locator(`[data-proposal="${proposal.id}"]`, { hasText: "accepted" }).waitFor();
    expect((await ps.get(proposal.id)).decided_by).toBe("Human");
  });

  it("accepts and rejects environment proposals on their page", async () => {
    const ps = new ProposalStore({ store: ts.store, projectId: "demo", humans: ["Human"] });
    const a = (await ps.record("Builder", "run-a", "ev-a", adjust("ruby") as never)).proposal;
    const b = (await ps.record("Builder", "run-b", "ev-b", adjust("go") as never)).proposal;
    const install = (details: Record<string, unknown>) => ({
      ...adjust(""),
      suggested_adjustment: { type: "runtime_install", details },
    });
    const cow = (await ps.record("Builder", "run-c", "ev-c", install({ runtime: "cowsay", source: "npm" }) as never))
      .proposal;
    const bad = (await ps.record("Builder", "run-d", "ev-d", install({ runtime: "../../bin/x" }) as never)).proposal;
    await page.goto(`${s.url}/#/proposals`);
    await page.locator(`[data-proposal="${a.id}"] button`).first().waitFor();
    // What accepting runs, exactly and how; a refused one says why and can only be rejected.
    const dir = join(s.tp.root, ".pmagent", "tools", "Builder", cow.id);
    expect(await page.locator(`[data-proposal="${cow.id}"] .plan code`).allTextContents()).toEqual([
      `npm install --global --prefix ${dir} --ignore-scripts --no-audit --no-fund --no-update-notifier cowsay`,
    ]);
    expect(await page.locator(`[data-proposal="${cow.id}"] .plan p`).textContent()).toMatch(
      /^Accepting runs in bubblewrap \(.*\) with a scrubbed environment \(no token, a fresh HOME\), no package scripts:$/,
    );
    expect(await page.locator(`[data-proposal="${bad.id}"] .plan`).textContent()).toBe(
      `environment proposal ${bad.id} (runtime_install) cannot be accepted: details.runtime "../../bin/x" is not a bare name (letters, digits and . _ + -, starting with a letter or digit, no "..", at most 128 characters); reject it (\`pmagent env reject ${bad.id}\`)`,
    );
    expect(await page.locator(`[data-proposal="${bad.id}"] button`).allTextContents()).toEqual(["reject"]);
    expect(await page.locator(`[data-proposal="${a.id}"] .plan`).textContent()).toBe(
      "Accepting runs nothing (later runs get its variables).",
    );
    await shot("proposals");
    await page.click(`[data-proposal="${a.id}"] button:text("accept")`);
    await page.locator(`[data-proposal="${a.id}"] strong:text("accepted")`).waitFor();
    await page.click(`[data-proposal="${b.id}"] button:text("reject")`);
    await page.locator(`[data-proposal="${b.id}"] strong:text("rejected")`).waitFor();
    expect((await ps.get(a.id)).decided_by).toBe("Human");
    expect((await ps.get(b.id)).status).toBe("rejected");
  });

  it("shows a proposal's failure, confidence and evidence, and undoes an accepted one's change", async () => {
    const ps = new ProposalStore({ store: ts.store, projectId: "demo", humans: ["Human"] });
    const evidence = {
      ...adjust("make check"),
      confidence: 0.65,
      evidence: ["npm ERR! missing script: smoke", "exit 1 after 0.4 s"],
    };
    const p = (await ps.record("Builder", "run-ev1", "ev-1", evidence as never)).proposal;
    await page.goto(`${s.url}/#/proposals`);
    // The page may be showing the proposals already (the same address does not load them again).
    await page.reload();
    const row = page.locator(`[data-proposal="${p.id}"]`);
    await row.locator("details.evidence summary").click();
    expect(await row.locator("details.evidence summary").textContent()).toBe("evidence · confidence 65 %");
    expect(await row.locator("details.evidence p").first().textContent()).toBe(
      "Failed in smoke with exit code 1: no such script",
    );
    expect(await row.locator("details.evidence li").allTextContents()).toEqual([
      "npm ERR! missing script: smoke",
      "exit 1 after 0.4 s",
    ]);
    expect(await row.locator('details.evidence a[href="#/runs/run-ev1"]').count()).toBe(1);
    await row.locator('button:text("accept")').click();
    await row.locator(".change strong", { hasText: "applied" }).waitFor();
    await shot("proposal-applied");
    await row.locator('.change button:text("undo")').click();
    await page.locator(`[data-proposal="${p.id}"] .change strong`, { hasText: "undone" }).waitFor();
    expect(await page.locator(`[data-proposal="${p.id}"] .change button`).count()).toBe(0);
    const change = (await s.call("GET", "/v1/env/proposals?status=accepted")).body.items.find(
      (i: { id: string }) => i.id === p.id,
    ).change;
    expect(change).toMatchObject({ status: "undone", undone_by: "Human" });
    // Reloaded, the page says the same.
    await page.reload();
    await page.locator(`[data-proposal="${p.id}"] .change strong`, { hasText: "undone" }).waitFor();
  });

  it("moves a card to another status by drag and drop, and says why when the board refuses the move", async () => {
    await board.post("Human", {
      id: "drag-1",
      to: "Reviewer",
      kind: "review_request",
      payload: { summary: "Drag me to canceled" },
    });
    await page.goto(`${s.url}/#/`);
    await page.locator('#board-live[data-live="live"]').waitFor();
    const cell = (role: string, status: string) =>
      page.locator(`#board tr[data-role="${role}"] td[data-status="${status}"]`);
    // Dropped beside where the card was picked up: a busy row's cells are taller than the window.
    const drag = async (from: Locator, to: Locator) => {
      await from.scrollIntoViewIfNeeded();
      const [a, b] = [(await from.boundingBox())!, (await to.boundingBox())!];
      await from.dragTo(to, {
        targetPosition: { x: b.width / 2, y: Math.min(Math.max(a.y + a.height / 2 - b.y, 1), b.height - 1) },
      });
    };
    await drag(cell("Reviewer", "open").locator('[data-entry="drag-1"]'), cell("Reviewer", "canceled"));
    await cell("Reviewer", "canceled").locator('[data-entry="drag-1"]').waitFor();
    expect((await s.call("GET", "/v1/entries/drag-1")).body).toMatchObject({
      entry: { status: "canceled" },
      version: 2,
    });
    await shot("board-dragged");
    // A canceled entry is final: dragged back, it stays and the board says why.
    await drag(cell("Reviewer", "canceled").locator('[data-entry="drag-1"]'), cell("Reviewer", "open"));
    await page.locator("#board-error", { hasText: "canceled" }).waitFor();
    expect(await cell("Reviewer", "canceled").locator('[data-entry="drag-1"]').count()).toBe(1);
    // Another row is another addressee: not a status change.
    await board.post("Human", { id: "drag-2", to: "Reviewer", kind: "review_request" });
    await cell("Reviewer", "open").locator('[data-entry="drag-2"]').waitFor();
    await cell("Reviewer", "open").locator('[data-entry="drag-2"]').dragTo(cell("Builder", "done"));
    expect(await page.locator("#board-error").textContent()).toBe(
      "drag-2 is addressed to Reviewer: drop it in its own row (a status change does not re-address an entry)",
    );
    expect((await s.call("GET", "/v1/entries/drag-2")).body.entry.status).toBe("open");
  });

  it("shows a run's token usage and its cost on the run's page", async () => {
    s.tp.project.config.prices = { m: { input_per_mtok: 4, output_per_mtok: 20 } };
    const usage = {
      emit: "INFO",
      payload: {
        message: "usage",
        kind: "token_usage",
        metadata: { model: "m", input_tokens: 2000, output_tokens: 500 },
      },
    };
    const command = s.tp.sprite("usage", { steps: [usage, { emit: "COMPLETED", payload: { status: "success" } }] });
    const run = await s.tp.supervisor().startRun({ role: "Builder", command });
    await page.goto(`${s.url}/#/runs/${run.id}`);
    await page.locator("#run-usage", { hasText: "2,500 tokens" }).waitFor();
    // 2000 in at 4, 500 out at 20 (per million).
    expect(await page.locator("#run-usage").textContent()).toBe("2,500 tokens (2,000 in; 500 out), cost 0.0180");
  });

  it("titles entries by their summary on the board, the entry list and the inbox; marks what waits on the viewer", async () => {
    await board.post("Builder", {
      id: "ask-you",
      to: "Human",
      kind: "question",
      payload: { summary: "Which branch should the guide go to?\nDetails follow." },
    });
    await page.goto(`${s.url}/#/`);
    const card = page.locator('[data-entry="ask-you"]');
    await card.locator(".waiting-you").waitFor();
    expect(await card.textContent()).toMatch(
      /^Which branch should the guide go to\?waiting on youquestion · ask-you · Builder → Human · v1$/,
    );
    // Not the viewer's: no mark.
    expect(await page.locator('[data-entry="e2e-1"] .waiting-you').count()).toBe(0);
    await shot("board-titles");
    await page.goto(`${s.url}/#/inbox`);
    await page
      .locator('[data-inbox-entry="ask-you"] .summary', { hasText: "Which branch should the guide go to?" })
      .waitFor();
    await page.goto(`${s.url}/#/entries`);
    await page
      .locator('[data-entry-row="ask-you"] .summary', { hasText: "Which branch should the guide go to?" })
      .waitFor();
  });

  it("posts a new entry from the board's form and starts its run from the entry page (the gate's refusal shown)", async () => {
    await page.goto(`${s.url}/#/`);
    await page.locator("#new-entry-holder summary").click();
    await page.selectOption("#new-to", "Builder");
    expect(await page.locator("#new-kind option").allTextContents()).toEqual(["build_request"]);
    await page.fill("#new-summary", "Write the install guide");
    await page.fill("#new-details", "for new users");
    await shot("new-entry");
    await page.click("#new-entry button[type=submit]");
    await page.locator("#entry-payload").waitFor();
    const id = decodeURIComponent(new URL(page.url()).hash.replace("#/entries/", ""));
    expect((await s.call("GET", `/v1/entries/${encodeURIComponent(id)}`)).body.entry).toMatchObject({
      from: "Human",
      to: "Builder",
      kind: "build_request",
      status: "open",
      payload: { summary: "Write the install guide", details: "for new users" },
    });
    // This project's kernel is DEGRADED: the OA gate refuses the run, and the page says why.
    await page.click("#run-entry");
    await page.locator(".error", { hasText: "the run gate denied a run of Builder" }).waitFor();
    await shot("run-denied");
  });

  it("serves /favicon.ico, and signs out: the cookie is forgotten and the sign-in form comes back", async () => {
    const icon = await fetch(`${s.url}/favicon.ico`);
    expect([icon.status, icon.headers.get("content-type")]).toEqual([200, "image/svg+xml"]);
    await page.goto(`${s.url}/#/`);
    await page.locator("#board").waitFor();
    await page.click("#signout");
    await page.locator("#signin").waitFor();
    expect(await page.locator("#signout").isHidden()).toBe(true);
    expect((await page.context().cookies()).filter((c) => c.name === "pmagent_token")).toEqual([]);
    await shot("signed-out");
    await page.fill("input[name=token]", TOKENS.Human);
    await page.click("#signin button");
    await page.locator("#board").waitFor();
    expect(await page.locator("#signout").isVisible()).toBe(true);
  });
});

/** EventSource.CLOSED (the Node test process has no EventSource). */
const EventSourceClosed = 2;
