/**
 * The README's endpoint fallback, through the real CLIs: a runner with no `base_url` (and no
 * `model.base_url`) reaches the server its CLI's own variable names (OPENAI_BASE_URL,
 * ANTHROPIC_BASE_URL, GOOGLE_GEMINI_BASE_URL), set in the supervisor's environment.
 */
import { describe, expect, it } from "vitest";
import { availableStoreKinds } from "../../helpers/stores.js";
import { startFakeAnthropic } from "../../helpers/fake-anthropic.js";
import { startFakeGemini } from "../../helpers/fake-gemini.js";
import { startFakeOpenAI } from "../../helpers/fake-openai.js";
import { agentProject } from "./helpers.js";

// Behaviour of the sprite's environment, not of the store: SQLite only.
const sqlite = (await availableStoreKinds()).find((k) => k.name === "sqlite")!;

describe("an agent's endpoint from its CLI's own variable", () => {
  const cases = [
    {
      agent: "codex",
      variable: "OPENAI_BASE_URL",
      key: "OPENAI_API_KEY",
      start: async () => {
        const f = await startFakeOpenAI();
        f.reply({ text: "Done by codex." });
        return f;
      },
    },
    {
      agent: "claude",
      variable: "ANTHROPIC_BASE_URL",
      key: "ANTHROPIC_API_KEY",
      start: async () => {
        const f = await startFakeAnthropic();
        f.reply({ text: "Done by claude." });
        return f;
      },
    },
    {
      agent: "gemini",
      variable: "GOOGLE_GEMINI_BASE_URL",
      key: "GEMINI_API_KEY",
      start: async () => {
        const f = await startFakeGemini();
        f.reply({ text: "Done by gemini." });
        return f;
      },
    },
  ] as const;
  it.each(cases)(
    "$agent reaches the server $variable names",
    { timeout: 180_000 },
    async ({ agent, variable, key, start }) => {
      const ts = await sqlite.open();
      const fake = await start();
      const tp = agentProject(ts, { agent, model: `${agent}-test` }, [key]);
      try {
        const sup = tp.supervisor(undefined, {
          env: { ...process.env, [key]: "endpoint-test-key", [variable]: fake.baseURL },
        });
        const run = await sup.startRun({ role: "Builder" });
        expect(run.state, run.reason ?? "").toBe("succeeded");
        expect(run.command).not.toContain("--base-url");
        expect(fake.requests.length).toBeGreaterThan(0);
        const completed = (await sup.runs.events(run.id)).find((e) => e.event_type === "COMPLETED");
        expect(completed?.event.payload).toEqual({ status: "success", summary: `Done by ${agent}.` });
      } finally {
        await fake.close();
        tp.cleanup();
        await ts.cleanup();
      }
    },
  );
});
