/**
 * A person runs a one-role team from the console, end to end, as a user would: `pmagent init
 * --lane code` in a fresh repository, the Developer role given the real Codex CLI (against the
 * scripted local Responses server), `pmagent serve` in its own process, and headless Chromium:
 * sign in, post an entry, start a worker in the server with the Codex agent, watch the agent's
 * command and message appear in its conversation, answer its WAITING with a follow-up message,
 * review the pull request's per-file diff and merge it; the repository's branch then holds the
 * change. Screenshots of each step are kept in test-artifacts/console-walk.
 */
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Browser, type Page } from "playwright-core";
import { haveChromium, launchChromium } from "./browser.js";
import { REPO_ROOT, serveCli, type Served } from "../helpers/proc.js";
import {
  AGENT_KEYS,
  agentRole,
  freshRepository,
  git,
  pmagent,
  setRoles,
  startAgentServers,
  type AgentServers,
  type Repo,
} from "../helpers/team-lanes.js";

const ARTIFACTS = join(REPO_ROOT, "test-artifacts/console-walk");

const TOKEN = "walk-token-5f1c9a";

describe.skipIf(!haveChromium)("a person runs the team from the console (real Codex CLI, scripted model)", () => {
  let servers: AgentServers;
  let repo: Repo;
  let served: Served;
  let browser: Browser;
  let page: Page;
  const shot = (name: string) => page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    servers = await startAgentServers();
    repo = freshRepository("pmagent-console-walk-", { "README.md": "# greeter\n" });
    await pmagent(repo, ["init", "--lane", "code", "--project-id", "walk"]);
    git(repo.dir, "add", ".");
    git(repo.dir, "commit", "-q", "-m", "pmagent: the code lane");
    setRoles(repo, { Developer: agentRole(servers, "codex") });
    served = await serveCli({
      cwd: repo.dir,
      env: { PATH: process.env.PATH, HOME: repo.home, ...AGENT_KEYS, PMAGENT_TOKENS: `${TOKEN}=Human` },
    });
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await served?.stop();
    await servers?.close();
  });

  it(
    "signs in, posts an entry, starts a worker with Codex, watches it work, answers its question with a follow-up, merges its pull request",
    { timeout: 300_000 },
    async () => {
      // The agent's two turns: write the file and ask which greeting word; then use the answer.
      servers.codex.reply(
        {
          calls: [
            {
              name: "exec_command",
              arguments: {
                cmd: `mkdir -p src && printf 'def greet(name):\\n    return "Hi " + name\\n' > src/greet.py && chk=$(pmagent checkpoint create) && pmagent emit WAITING --reason "Which greeting word?" --checkpoint "$chk" --expect word=string`,
              },
            },
          ],
        },
        { text: "Waiting for the greeting word." },
      );
      // (Its second command reads the answer as an agent's tools can: `pmagent resume-info`.)
      const word = `pmagent resume-info --no-mark | node -e 'let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => process.stdout.write(JSON.parse(s).resume.inputs.word))'`;
      servers.codex.reply(
        {
          calls: [
            {
              name: "exec_command",
              arguments: {
                cmd: `word=$(${word}) && printf 'def greet(name):\\n    return "%s " + name\\n' "$word" > src/greet.py`,
              },
            },
          ],
        },
        { text: "Wrote src/greet.py with the word." },
      );

      await page.goto(`${served.url}/`);
      await page.fill("input[name=token]", TOKEN);
      await page.click("#signin button");
      await page.locator("#board").waitFor();
      await shot("1-signed-in");

      // A new entry for the Developer, from the board's form.
      await page.locator("#new-entry-holder summary").click();
      await page.selectOption("#new-to", "Developer");
      await page.selectOption("#new-kind", "code_request");
      await page.fill("#new-summary", "Add src/greet.py with greet(name)");
      await page.fill("#new-details", "Ask me which greeting word to use.");
      await shot("2-new-entry");
      await page.click("#new-entry button[type=submit]");
      await page.locator("#entry-payload").waitFor();

      // A worker hosted by the server, for the Developer, running Codex: it claims the entry.
      await page.goto(`${served.url}/#/workers`);
      await page.selectOption("#worker-role", "Developer");
      await page.selectOption("#worker-agent", "codex");
      await page.click("#start-worker button[type=submit]");
      const running = page.locator("[data-worker] td.current a").first();
      await running.waitFor({ timeout: 120_000 });
      await shot("3-worker-running");
      await running.click();

      // The run page streams the agent's conversation while it runs: its command, then its message.
      await page
        .locator('#conversation [data-kind="command"]', { hasText: "src/greet.py" })
        .waitFor({ timeout: 120_000 });
      await page
        .locator('#conversation [data-kind="message"]', { hasText: "Waiting for the greeting word." })
        .waitFor({ timeout: 120_000 });
      await page.locator("#run-state", { hasText: "waiting" }).waitFor({ timeout: 120_000 });
      await shot("4-agent-waiting");

      // Answer the agent's question, with a follow-up message for its session.
      const form = page.locator("#resume-holder form");
      await form.locator('input[name="word"]').fill("Hello");
      await form.locator("textarea[data-follow-up]").fill("Keep the function to one line, please.");
      await form.locator("button[type=submit]").click();
      await page.locator("#run-state", { hasText: "succeeded" }).waitFor({ timeout: 120_000 });
      await page
        .locator('#conversation [data-kind="follow-up"]', { hasText: "Keep the function to one line" })
        .waitFor();
      await page
        .locator('#conversation [data-kind="message"]', { hasText: "Wrote src/greet.py with the word." })
        .waitFor();
      await shot("5-agent-done");
      // The file both attempts wrote is one artifact.
      expect(await page.locator("#artifacts li").allTextContents()).toEqual(["file src/greet.py"]);
      // The resumed turn went to the same Codex session, with the answer and the message in it.
      const resumedTurn = servers.codex.requests
        .map((r) => JSON.stringify(r.body))
        .find((b) => b.includes("Lattice resumed you from checkpoint"));
      expect(resumedTurn).toContain("Waiting for the greeting word.");
      expect(resumedTurn).toContain('\\"word\\": \\"Hello\\"');
      expect(resumedTurn).toContain("Keep the function to one line, please.");

      // The cycle's pull request: its per-file diff, then Merge.
      await page.goto(`${served.url}/#/prs/1`);
      const file = page.locator('[data-pr="1"] details.diff-file[data-file="src/greet.py"]');
      await file.waitFor();
      expect(await file.locator(".add").allTextContents()).toContain('+    return "Hello " + name');
      await shot("6-pull-request");
      await page.click("#pr-merge-1");
      await page.locator("#pr-merged-1").waitFor();
      await shot("7-merged");

      // As the README says, the merged branch comes into the repository from the forge.
      git(repo.dir, "fetch", "-q", repo.bare, "main");
      git(repo.dir, "merge", "-q", "--ff-only", "FETCH_HEAD");
      expect(readFileSync(join(repo.dir, "src/greet.py"), "utf8")).toBe(
        'def greet(name):\n    return "Hello " + name\n',
      );
    },
  );
});
