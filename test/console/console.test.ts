import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chromium, type Browser, type Page } from "playwright-core";
import { Blackboard } from "../../src/blackboard/index.js";
import { REPO_ROOT } from "../helpers/proc.js";
import { openSqliteTestStore, type TestStore } from "../helpers/stores.js";
import { TOKENS, startServer, type TestServer } from "../server/helpers.js";

const CHROMIUM = "/usr/bin/chromium";
const ARTIFACTS = join(REPO_ROOT, "test-artifacts/console");
const haveChromium = existsSync(CHROMIUM);
if (!haveChromium && process.env.CI === "true") throw new Error(`${CHROMIUM} is missing: .ci/run installs Debian's chromium for the console tests`);
if (!haveChromium) console.warn(`${CHROMIUM} is not installed: skipping the console end-to-end tests (apt-get install -y chromium)`);

describe.skipIf(!haveChromium)("web console in headless Chromium", () => {
  let ts: TestStore;
  let s: TestServer;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    ts = await openSqliteTestStore();
    s = await startServer(ts, { consoleDir: join(REPO_ROOT, "dist/console") });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    });
    page = await browser.newPage();
    // No external network at run time: any request off the server's origin fails the test.
    const offOrigin: string[] = [];
    page.on("request", (r) => {
      if (!r.url().startsWith(s.url)) offOrigin.push(r.url());
    });
    page.on("close", () => expect(offOrigin).toEqual([]));
  });
  afterAll(async () => {
    await browser?.close();
    await s?.close();
    await ts?.cleanup();
  });

  it("signs in with a token, loads the lane board, kernel health and Kai's digests", async () => {
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
    await page.locator("#kai").waitFor();
    expect(await page.locator("#kai .error").allTextContents()).toEqual([]);
    expect(await page.locator('#kai pre[data-kai="what_changed"]').textContent()).toMatch(/^#/);
    await page.screenshot({ path: join(ARTIFACTS, "board.png"), fullPage: true });
  });

  it("shows an entry move on the board as a sprite runs it, then resumes the waiting run from the form", async () => {
    const board = new Blackboard(ts.store, { projectId: "demo", humans: ["Human"] });
    await board.post("Human", { id: "e2e-1", to: "Builder", kind: "build_request", payload: { summary: "<b>not markup</b>" } });
    const cell = (status: string) => page.locator(`tr[data-role="Builder"] td[data-status="${status}"] [data-entry="e2e-1"]`);
    await cell("open").waitFor();
    expect(await cell("open").textContent()).toContain("build_request");
    const command = s.tp.sprite("e2e", {
      steps: [{ emit: "PHASE_STARTED", payload: { phase: "implement" } }, { emit: "ARTIFACT", payload: { kind: "branch", ref: "sprite/e2e-1" } }, { log: "hello from the sprite" }, { sleep: 1500 }, { waiting: { reason: "PR_REVIEW", expected_inputs: { approved: "boolean", comments: "array<string>", attempts: "integer" } } }],
      on_resume: [{ emit: "COMPLETED", payload: { status: "success", summary: "done" } }],
    });
    const started = s.tp.supervisor().startRun({ role: "Builder", entryId: "e2e-1", command });
    await cell("in_progress").waitFor();
    const run = await started;
    expect(run.state).toBe("waiting");

    await page.goto(`${s.url}/#/runs`);
    await page.locator(`a[href="#/runs/${run.id}"]`).waitFor();
    await page.screenshot({ path: join(ARTIFACTS, "runs.png"), fullPage: true });
    await page.click(`a[href="#/runs/${run.id}"]`);
    await page.locator("#resume").waitFor();
    await page.locator('#timeline li[data-seq="3"]').waitFor();
    expect(await page.locator("#timeline li").allTextContents()).toEqual(["PHASE_STARTED implement", "ARTIFACT branch", "WAITING PR_REVIEW"]);
    expect(await page.locator("#artifacts li").allTextContents()).toEqual(["branch sprite/e2e-1"]);
    expect(await page.locator("#logs").textContent()).toContain("hello from the sprite");
    await page.screenshot({ path: join(ARTIFACTS, "run-waiting.png"), fullPage: true });

    // A value that does not match expected_inputs is refused with the server's message.
    await page.check('#resume input[name="approved"]');
    await page.fill('#resume textarea[name="comments"]', "[1]");
    await page.fill('#resume input[name="attempts"]', "2");
    await page.click("#resume button");
    await page.locator("#resume-error", { hasText: "inputs.comments[0]: expected string" }).waitFor();
    await page.fill('#resume textarea[name="comments"]', '["lgtm"]');
    await page.click("#resume button");
    await page.locator("#resumed").waitFor();
    await page.waitForFunction(() => document.getElementById("run-state")?.textContent === "succeeded");
    await page.locator('#timeline li[data-seq="5"]').waitFor();
    expect((await page.locator("#timeline li").allTextContents()).slice(3)).toEqual(["INFO resumed", "COMPLETED success"]);
    await page.screenshot({ path: join(ARTIFACTS, "run-succeeded.png"), fullPage: true });

    await page.goto(`${s.url}/#/`);
    await cell("done").waitFor();
    expect(await page.locator('[data-entry="e2e-1"] b').count()).toBe(0);
  });

  it("accepts and rejects environment proposals", async () => {
    const { ProposalStore } = await import("../../src/lattice/index.js");
    const ps = new ProposalStore({ store: ts.store, projectId: "demo", humans: ["Human"] });
    const adjust = (runtime: string) => ({ observed_failure: { phase: "bootstrap", exit_code: 127, stderr_hint: `${runtime}: not found` }, suggested_adjustment: { type: "runtime_install", details: { runtime, version: "20" } }, confidence: 0.8, evidence: [], scope: "repo_specific" });
    const a = (await ps.record("Builder", "run-a", "ev-a", adjust("node") as never)).proposal;
    const b = (await ps.record("Builder", "run-b", "ev-b", adjust("python") as never)).proposal;
    await page.goto(`${s.url}/#/proposals`);
    await page.locator(`[data-proposal="${a.id}"] button`).first().waitFor();
    await page.screenshot({ path: join(ARTIFACTS, "proposals.png"), fullPage: true });
    await page.click(`[data-proposal="${a.id}"] button:text("accept")`);
    await page.locator(`[data-proposal="${a.id}"] strong:text("accepted")`).waitFor();
    await page.click(`[data-proposal="${b.id}"] button:text("reject")`);
    await page.locator(`[data-proposal="${b.id}"] strong:text("rejected")`).waitFor();
    expect((await ps.get(a.id)).decided_by).toBe("Human");
    expect((await ps.get(b.id)).status).toBe("rejected");
  });
});
