/**
 * The run page's conversation in headless Chromium, with the real Codex CLI against the scripted
 * Responses server: the agent's message (Markdown rendered, markup kept as text), its MCP tool call
 * and its command with the exit code and folded output show while its turn is still under way (the
 * next model request is held until the page has shown them); then the agent waits, and the resume
 * form's array rows and a follow-up message resume the same session, the message shown as the
 * person's turn.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Browser, type Page } from "playwright-core";
import { haveChromium, launchChromium } from "./browser.js";
import type { RunRecord } from "../../src/lattice/index.js";
import { useFakeOpenAI } from "../helpers/openai-fixture.js";
import { REPO_ROOT } from "../helpers/proc.js";
import { openSqliteTestStore, type TestStore } from "../helpers/stores.js";
import { TOKENS, startServer, type TestServer } from "../server/helpers.js";

const ARTIFACTS = join(REPO_ROOT, "test-artifacts/console");
const MCP_ECHO = fileURLToPath(new URL("../lattice/agents/fixtures/mcp-echo.mjs", import.meta.url));
const KEY = "codex-console-key/local";

describe.skipIf(!haveChromium)("a run's conversation in headless Chromium", () => {
  let ts: TestStore;
  const fake = useFakeOpenAI({ clearRequests: false });
  let s: TestServer;
  let browser: Browser;
  let page: Page;
  const shot = (name: string) => page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    ts = await openSqliteTestStore();
    const runner = {
      agent: "codex",
      model: "gpt-test",
      timeout_s: 120,
      args: [
        "-c",
        `mcp_servers.echo.command=${JSON.stringify(process.execPath)}`,
        "-c",
        `mcp_servers.echo.args=[${JSON.stringify(MCP_ECHO)}]`,
      ],
    };
    s = await startServer(ts, {
      consoleDir: join(REPO_ROOT, "dist/console"),
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", OPENAI_API_KEY: KEY },
      config: {
        model: { base_url: fake.baseURL },
        lanes: [
          {
            layer: "test",
            name: "build",
            roles: [{ name: "Builder", allowed_kinds: ["build_request"], runner, credentials: ["OPENAI_API_KEY"] }],
          },
        ],
      },
    });
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(`${s.url}/`);
    await page.fill("input[name=token]", TOKENS.Human);
    await page.click("#signin button");
    await page.locator("#board").waitFor();
  });
  afterAll(async () => {
    await browser?.close();
    await s?.close();
    await ts?.cleanup();
  });

  it(
    "shows the agent's message, tool call and command while it works; resumes it with array rows and a follow-up message",
    { timeout: 180_000 },
    async () => {
      let release!: () => void;
      const held = new Promise<void>((r) => (release = r));
      fake.reply(
        {
          text: "I will read the **README** first. <img src=x onerror=alert(1)>",
          calls: [
            { namespace: "mcp__echo", name: "echo", arguments: { text: "ping" } },
            { name: "exec_command", arguments: { cmd: "printf 'line one\\nline two\\n'; exit 2" } },
          ],
        },
        {
          until: held,
          then: {
            calls: [
              {
                name: "exec_command",
                arguments: {
                  cmd: 'chk=$(pmagent checkpoint create) && pmagent emit WAITING --reason "which tags?" --checkpoint "$chk" --expect "tags=array<integer>"',
                },
              },
            ],
          },
        },
        { text: "Waiting for the tags." },
      );
      await s.server.ctx.board.post("Human", {
        id: "talk-1",
        to: "Builder",
        kind: "build_request",
        payload: { summary: "Tag the README" },
      });
      let started!: (id: string) => void;
      const recorded = new Promise<string>((r) => (started = r));
      // The fixture's kernel is DEGRADED, so its OA gate would deny feature work: decided here.
      const first = s.server.ctx.supervisor.startRun({
        role: "Builder",
        entryId: "talk-1",
        decided: { decision: "ALLOW", reasoning: "console test", conditions: [] },
        onStarted: (id) => started(id),
      });
      const runId = await Promise.race([
        recorded,
        first.then((r: RunRecord) =>
          Promise.reject(new Error(`the run ended before it was seen: ${r.state} ${r.reason}`)),
        ),
      ]);

      await page.goto(`${s.url}/#/runs/${runId}`);
      const turn = (kind: string) => page.locator(`#conversation li[data-kind="${kind}"]`);
      await turn("command").waitFor();
      // Still mid-turn: the model's next request is held.
      expect(await page.locator("#run-state").textContent()).toBe("running");
      expect(await turn("message").locator(".md strong").textContent()).toBe("README");
      expect(await turn("message").locator("img").count()).toBe(0);
      expect(await turn("message").textContent()).toContain("<img src=x onerror=alert(1)>");
      expect(await turn("tool").locator(".cmd").textContent()).toBe("echo.echo completed");
      await turn("tool").locator("details", { hasText: "result" }).locator("summary").click();
      expect(await turn("tool").locator("details", { hasText: "result" }).locator("pre").textContent()).toBe(
        "echo: ping",
      );
      expect(await turn("command").locator(".cmd").textContent()).toBe(
        "$ printf 'line one\\nline two\\n'; exit 2 exit 2",
      );
      const output = turn("command").locator("details[data-output]");
      expect(await output.getAttribute("open")).toBeNull();
      await output.locator("summary").click();
      expect(await output.locator("summary").textContent()).toBe("output (2 lines)");
      expect(await output.locator("pre").textContent()).toBe("line one\nline two\n");
      expect(await page.locator("#conversation-summary").textContent()).toBe(
        "1 message · 1 command (1 failed) · 1 tool call · 0 files changed · 0 tokens so far",
      );
      await shot("run-conversation-live");

      release();
      expect((await first).state).toBe("waiting");
      const form = page.locator(`[data-resume="${runId}"]`);
      await form.waitFor();
      const tags = form.locator('[data-input="tags"]');
      await tags.getByRole("button", { name: "Add item" }).click();
      await form.locator('button[type="submit"]').click();
      await page.locator(`[data-resume-error="${runId}"]`, { hasText: "tags[0]: enter a whole number" }).waitFor();
      await tags.locator("li[data-row] input").fill("3");
      await form.locator("textarea[data-follow-up]").fill("Use tag 3 for **now**.");
      fake.reply({ text: "Tagged it 3." });
      await form.locator('button[type="submit"]').click();
      await page.waitForFunction(() => document.getElementById("run-state")?.textContent === "succeeded");
      await turn("follow-up").waitFor();
      expect(await turn("follow-up").locator(".who").textContent()).toMatch(/^you /);
      expect(await turn("follow-up").locator(".md strong").textContent()).toBe("now");
      await turn("end").waitFor();
      // The same Codex session heard the message and the inputs.
      const resumed = JSON.stringify(fake.requests[3]!.body);
      expect(resumed).toContain("Waiting for the tags.");
      expect(resumed).toContain("Use tag 3 for **now**.");
      expect(resumed).toContain('\\"tags\\": [\\n    3\\n  ]');
      await shot("run-conversation-resumed");
    },
  );
});
