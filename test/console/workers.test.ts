/**
 * The console's Workers page and a finished run's "Retry" in headless Chromium: a person starts a
 * worker for a role, a posted entry is run by it (the list shows it live), retries the run from its
 * page, then stops the worker. Screenshots kept in test-artifacts/console.
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Browser, type Page } from "playwright-core";
import { haveChromium, launchChromium } from "./browser.js";
import { REPO_ROOT } from "../helpers/proc.js";
import { openSqliteTestStore, type TestStore } from "../helpers/stores.js";
import { scenarioSprite } from "../lattice/helpers.js";
import { TOKENS, startServer, type TestServer } from "../server/helpers.js";

const ARTIFACTS = join(REPO_ROOT, "test-artifacts/console");

describe.skipIf(!haveChromium)("the Workers page in headless Chromium", () => {
  let ts: TestStore;
  let s: TestServer;
  let browser: Browser;
  let page: Page;
  let dir: string;
  const shot = (name: string) => page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    ts = await openSqliteTestStore();
    dir = mkdtempSync(join(tmpdir(), "pmagent-console-workers-"));
    const command = scenarioSprite(dir, "ok", {
      steps: [{ log: "built" }, { emit: "COMPLETED", payload: { status: "success", summary: "built" } }],
    });
    const lanes = [
      {
        layer: "test",
        name: "build",
        roles: [
          { name: "Builder", allowed_kinds: ["build_request"], runner: { command }, credentials: ["OPENAI_API_KEY"] },
          {
            name: "Coder",
            allowed_kinds: ["code_request"],
            runner: { agent: "codex", model: "gpt-test" },
            credentials: ["OPENAI_API_KEY"],
          },
          { name: "Docs", allowed_kinds: ["doc_request"], runner: { command } },
        ],
      },
    ];
    s = await startServer(ts, {
      consoleDir: join(REPO_ROOT, "dist/console"),
      config: { lanes, oa: { gate: false } },
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
    });
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  });
  afterAll(async () => {
    await browser?.close();
    await s?.close();
    await ts?.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  it(
    "starts a worker for Builder, sees it run a posted entry, retries the run from its page, stops the worker",
    { timeout: 120_000 },
    async () => {
      await page.goto(`${s.url}/#/workers`);
      await page.locator("#signin").waitFor();
      await page.fill("input[name=token]", TOKENS.Human);
      await page.click("#signin button");
      await page.locator("#start-worker").waitFor();
      expect(await page.locator("#worker-role option").allTextContents()).toEqual(["Builder", "Coder", "Docs"]);
      expect(await page.locator("#worker-agent option").allTextContents()).toEqual([
        "the role's own runner",
        "codex (gpt-test, as Coder runs it)",
      ]);
      // Codex for Docs would need the model key, which Docs may not receive: the refusal is shown, no worker started.
      await page.selectOption("#worker-agent", "codex");
      await page.selectOption("#worker-role", "Docs");
      await page.click("#start-worker button[type=submit]");
      await page
        .locator("#workers-error", {
          hasText:
            "role Docs may not run agent codex: its model key OPENAI_API_KEY is not among the role's credentials",
        })
        .waitFor();
      await shot("workers-refused");
      expect((await s.call("GET", "/v1/workers")).body.items).toEqual([]);
      await page.fill("#worker-concurrency", "2");
      await page.selectOption("#worker-agent", "");
      await page.selectOption("#worker-role", "Builder");
      await page.click("#start-worker button[type=submit]");
      const row = page.locator("#workers tr[data-worker]");
      await row.waitFor();
      expect(await row.locator("td").nth(1).textContent()).toBe("Builder");
      expect(await row.locator("td").nth(3).textContent()).toBe("2");

      await s.call("POST", "/v1/entries", {
        body: { id: "e-1", to: "Builder", kind: "build_request", payload: { summary: "build it" } },
      });
      // The list follows the board: the finished run is counted without a reload.
      await row.locator("td", { hasText: "1 succeeded" }).waitFor();
      await shot("workers-running");

      const run = (await s.call("GET", "/v1/runs?entry=e-1")).body.items[0];
      await page.goto(`${s.url}/#/runs/${run.id}`);
      await page.locator("#retry-run").click();
      await page.waitForURL((url) => !url.hash.endsWith(run.id) && url.hash.startsWith("#/runs/"));
      await page.locator("#run-state", { hasText: "succeeded" }).waitFor();
      // The agents to run again with arrive after the run's state (their own request): wait for them.
      await page.locator("#run-again-agent option").first().waitFor({ state: "attached" });
      expect(await page.locator("#run-again-agent option").allTextContents()).toEqual([
        "codex (gpt-test, as Coder runs it)",
      ]);
      await shot("run-retried");
      const again = (await s.call("GET", "/v1/runs?role=Builder")).body.items.map((r: { id: string }) => r.id);
      expect(again).toHaveLength(2);

      await page.goto(`${s.url}/#/workers`);
      await page.locator("#workers .stop-worker").click();
      await page.locator("#workers tr[data-worker] .badge", { hasText: "stopped" }).waitFor();
      await shot("workers-stopped");
      expect((await s.call("GET", "/v1/workers")).body.items[0].state).toBe("stopped");
    },
  );
});
