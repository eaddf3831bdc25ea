/**
 * Token usage from the real agent CLIs (Codex, Claude Code, Gemini CLI) driven against the local
 * model servers: the run's stored totals per model are what the servers reported, summed over
 * the requests the CLI made; a role's budget fails a run whose agent spent past it.
 */
import { describe, expect, it } from "vitest";
import { summarizeUsage } from "../../../src/lattice/index.js";
import { availableStoreKinds } from "../../helpers/stores.js";
import { startFakeAnthropic } from "../../helpers/fake-anthropic.js";
import { startFakeGemini } from "../../helpers/fake-gemini.js";
import { startFakeOpenAI } from "../../helpers/fake-openai.js";
import { agentProject } from "./helpers.js";

const kinds = await availableStoreKinds();
const ENTRY = { id: "e-1", to: "Builder", kind: "build_request", payload: { summary: "Say hello" } };

describe.each(kinds)("agents' token usage on $name", (kind) => {
  it(
    "Codex: totals are the Responses API's usage over its requests (cached and reasoning included), priced by the table",
    { timeout: 180_000 },
    async () => {
      const ts = await kind.open();
      const fake = await startFakeOpenAI();
      const tp = agentProject(ts, { agent: "codex", model: "gpt-test" }, ["OPENAI_API_KEY"], fake.baseURL);
      try {
        fake.reply({
          text: "Hello.",
          usage: { input_tokens: 1200, output_tokens: 80, cached_tokens: 1000, reasoning_tokens: 30 },
        });
        const sup = tp.supervisor(undefined, { env: { ...process.env, OPENAI_API_KEY: "k" } });
        await sup.board.post("Human", ENTRY);
        const run = await sup.startRun({ role: "Builder", entryId: "e-1" });
        expect(run.state, run.reason ?? "").toBe("succeeded");
        expect(fake.requests.length).toBe(1);
        const usage = await sup.runs.usage(run.id);
        expect(usage).toEqual([
          {
            model: "gpt-test",
            input_tokens: 1200,
            cached_input_tokens: 1000,
            output_tokens: 80,
            reasoning_tokens: 30,
            total_tokens: 1280,
            reports: 1,
          },
        ]);
        // 200 uncached at 2, 1000 cached at 0.5, 80 out at 10 (per million).
        expect(
          summarizeUsage(usage, { "gpt-test": { input_per_mtok: 2, output_per_mtok: 10, cached_input_per_mtok: 0.5 } })
            .cost,
        ).toBeCloseTo((200 * 2 + 1000 * 0.5 + 80 * 10) / 1e6, 9);
      } finally {
        await fake.close();
        await ts.cleanup();
        tp.cleanup();
      }
    },
  );

  it(
    "Claude Code: totals are the Messages API's usage over its requests (cache reads and writes as input)",
    { timeout: 240_000 },
    async () => {
      const ts = await kind.open();
      const fake = await startFakeAnthropic();
      const tp = agentProject(ts, { agent: "claude", model: "claude-test", base_url: fake.baseURL }, [
        "ANTHROPIC_API_KEY",
      ]);
      try {
        fake.reply(
          {
            tool: { name: "Bash", input: { command: "echo hi", description: "say hi" } },
            usage: {
              input_tokens: 300,
              output_tokens: 40,
              cache_read_input_tokens: 2000,
              cache_creation_input_tokens: 500,
            },
          },
          { text: "Said hi.", usage: { input_tokens: 100, output_tokens: 20, cache_read_input_tokens: 2500 } },
        );
        const sup = tp.supervisor(undefined, { env: { ...process.env, ANTHROPIC_API_KEY: "k" } });
        await sup.board.post("Human", ENTRY);
        const run = await sup.startRun({ role: "Builder", entryId: "e-1" });
        expect(run.state, run.reason ?? "").toBe("succeeded");
        expect(fake.requests.length).toBe(2);
        expect(await sup.runs.usage(run.id)).toEqual([
          {
            model: "claude-test",
            input_tokens: 300 + 2000 + 500 + 100 + 2500,
            cached_input_tokens: 4500,
            output_tokens: 60,
            reasoning_tokens: 0,
            total_tokens: 5460,
            reports: 1,
          },
        ]);
      } finally {
        await fake.close();
        await ts.cleanup();
        tp.cleanup();
      }
    },
  );

  it(
    "Gemini CLI: totals are the Gemini API's usageMetadata over its requests (thoughts as reasoning output)",
    { timeout: 240_000 },
    async () => {
      const ts = await kind.open();
      const fake = await startFakeGemini();
      const tp = agentProject(ts, { agent: "gemini", model: "gemini-test", base_url: fake.baseURL }, [
        "GEMINI_API_KEY",
      ]);
      try {
        fake.reply(
          {
            call: { name: "run_shell_command", args: { command: "echo hi" } },
            usage: {
              promptTokenCount: 400,
              candidatesTokenCount: 20,
              cachedContentTokenCount: 100,
              thoughtsTokenCount: 15,
              totalTokenCount: 435,
            },
          },
          { text: "Said hi.", usage: { promptTokenCount: 450, candidatesTokenCount: 10, totalTokenCount: 460 } },
        );
        const sup = tp.supervisor(undefined, { env: { ...process.env, GEMINI_API_KEY: "k" } });
        await sup.board.post("Human", ENTRY);
        const run = await sup.startRun({ role: "Builder", entryId: "e-1" });
        expect(run.state, run.reason ?? "").toBe("succeeded");
        expect(fake.requests.length).toBe(2);
        // Gemini CLI counts per model as the API names the one that answered (modelVersion, "fake" here).
        expect(await sup.runs.usage(run.id)).toEqual([
          {
            model: "fake",
            input_tokens: 850,
            cached_input_tokens: 100,
            output_tokens: 45,
            reasoning_tokens: 15,
            total_tokens: 895,
            reports: 1,
          },
        ]);
      } finally {
        await fake.close();
        await ts.cleanup();
        tp.cleanup();
      }
    },
  );

  it(
    "a role's token budget fails the run whose agent reported more, with the reason",
    { timeout: 180_000 },
    async () => {
      const ts = await kind.open();
      const fake = await startFakeOpenAI();
      const tp = agentProject(ts, { agent: "codex", model: "gpt-test" }, ["OPENAI_API_KEY"], fake.baseURL);
      tp.project.config.lanes[0]!.roles[0]!.budget = { max_tokens: 1000 };
      try {
        fake.reply({ text: "Hello.", usage: { input_tokens: 12_000, output_tokens: 345 } });
        const sup = tp.supervisor(undefined, { env: { ...process.env, OPENAI_API_KEY: "k" } });
        await sup.board.post("Human", ENTRY);
        const run = await sup.startRun({ role: "Builder", entryId: "e-1" });
        expect(run.state).toBe("failed");
        expect(run.reason).toBe("budget exceeded: 12,345 tokens > 1,000; the sprite was stopped");
        expect((await sup.board.get("e-1")).entry.status).toBe("error");
      } finally {
        await fake.close();
        await ts.cleanup();
        tp.cleanup();
      }
    },
  );
});
