/**
 * Token usage and budgets through the supervisor: usage reports a sprite emits (stdout and
 * outbox copies) are totalled once each per model with the events; a budget stops a run that
 * goes past it, the run failed with the reason; bad run budgets are refused before a run starts.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Blackboard } from "../../../src/blackboard/index.js";
import { summarizeUsage } from "../../../src/lattice/index.js";
import { availableStoreKinds, type TestStore } from "../../helpers/stores.js";
import { testProject, type TestProject } from "../helpers.js";

const kinds = await availableStoreKinds();

const usage = (model: string | null, input: number, output: number, more: Record<string, number> = {}) => ({
  emit: "INFO",
  payload: {
    message: `${input} in, ${output} out`,
    kind: "token_usage",
    metadata: { ...(model ? { model } : {}), input_tokens: input, output_tokens: output, ...more },
  },
});
const completed = { emit: "COMPLETED", payload: { status: "success", summary: "done" } };
/** Runs until stopped: only a budget (or a cancel) ends it. */
const forever = { sleep: 600_000 };

describe.each(kinds)("token usage and budgets on $name", (kind) => {
  let ts: TestStore;
  let tp: TestProject;
  beforeEach(async () => {
    ts = await kind.open();
  });
  afterEach(async () => {
    await ts.cleanup();
    tp.cleanup();
  });

  function project(budget?: Record<string, unknown>, prices?: Record<string, unknown>): void {
    tp = testProject(ts, {
      ...(prices ? { prices } : {}),
      lanes: [
        {
          layer: "test",
          name: "build",
          roles: [{ name: "Builder", allowed_kinds: ["build_request"], ...(budget ? { budget } : {}) }],
        },
      ],
    });
  }

  it("totals each model's reports once (stdout and outbox copies of one event count once), with the role agent's `usage` kind too", async () => {
    project(undefined, { "gpt-x": { input_per_mtok: 2, output_per_mtok: 8, cached_input_per_mtok: 0.5 } });
    const first = usage("gpt-x", 1000, 100, { cached_input_tokens: 400, reasoning_tokens: 30 });
    const command = tp.sprite("usage", {
      steps: [
        first,
        usage("gpt-x", 500, 50),
        {
          emit: "INFO",
          payload: {
            message: "role agent",
            kind: "usage",
            metadata: { model: "gpt-x", input_tokens: 10, output_tokens: 5, total_tokens: 15 },
          },
        },
        usage(null, 7, 3),
        { emit: "INFO", payload: { message: "not usage", kind: "progress", metadata: { input_tokens: 99999 } } },
        completed,
      ],
    });
    const sup = tp.supervisor();
    const run = await sup.startRun({ role: "Builder", command });
    expect(run.state).toBe("succeeded");
    const models = await sup.runs.usage(run.id);
    expect(models).toEqual([
      {
        model: "",
        input_tokens: 7,
        cached_input_tokens: 0,
        output_tokens: 3,
        reasoning_tokens: 0,
        total_tokens: 10,
        reports: 1,
      },
      {
        model: "gpt-x",
        input_tokens: 1510,
        cached_input_tokens: 400,
        output_tokens: 155,
        reasoning_tokens: 30,
        total_tokens: 1665,
        reports: 3,
      },
    ]);
    const summary = summarizeUsage(models, tp.project.config.prices);
    expect(summary.total_tokens).toBe(1675);
    // A model with no price leaves the run's cost unknown, and says which.
    expect(summary.cost).toBeNull();
    expect(summary.unpriced).toEqual(["(model not reported)"]);
    // gpt-x: 1110 uncached input at 2, 400 cached at 0.5, 155 output at 8 (per million).
    expect(summary.models.find((m) => m.model === "gpt-x")!.cost).toBeCloseTo(
      (1110 * 2 + 400 * 0.5 + 155 * 8) / 1e6,
      9,
    );
    expect(summarizeUsage(models, { "*": { input_per_mtok: 1, output_per_mtok: 1 } }).cost).toBeCloseTo(1675 / 1e6, 9);
  });

  it("a role's token budget stops the run that goes past it: failed with the reason, sprite stopped, entry in error", async () => {
    project({ max_tokens: 1000 });
    const board = new Blackboard(ts.store, { projectId: "demo", humans: ["Human"] });
    await board.post("Human", { id: "e-1", to: "Builder", kind: "build_request", payload: { summary: "spend" } });
    const command = tp.sprite("spender", { steps: [usage("m", 600, 100), usage("m", 5000, 745), forever, completed] });
    const sup = tp.supervisor();
    const run = await sup.startRun({ role: "Builder", entryId: "e-1", command });
    expect(run.state).toBe("failed");
    expect(run.reason).toBe("budget exceeded: 6,445 tokens > 1,000; the sprite was stopped");
    // Stopped as a cancel stops a sprite: the run's record keeps its pid, the process is gone.
    expect(() => process.kill(run.sprite_pid!, 0)).toThrow();
    expect((await sup.runs.usage(run.id))[0]!.total_tokens).toBe(6445);
    expect((await board.get("e-1")).entry.status).toBe("error");
  });

  it("a run's own cost budget (over its role's) stops it by the price table", async () => {
    project({ max_tokens: 1_000_000 }, { m: { input_per_mtok: 10, output_per_mtok: 30 } });
    // 100k in, 10k out: 1.00 + 0.30 = 1.30 > 1.
    const command = tp.sprite("costly", { steps: [usage("m", 100_000, 10_000), forever, completed] });
    const run = await tp.supervisor().startRun({ role: "Builder", command, budget: { max_cost: 1 } });
    expect(run.state).toBe("failed");
    expect(run.reason).toBe("budget exceeded: cost 1.30 > 1; the sprite was stopped");
  });

  it("a cost budget that cannot be counted (a model without a price) stops the run, naming the model", async () => {
    project({ max_cost: 5 }, { known: { input_per_mtok: 1, output_per_mtok: 1 } });
    const command = tp.sprite("unpriced", { steps: [usage("mystery-model", 10, 10), forever, completed] });
    const run = await tp.supervisor().startRun({ role: "Builder", command });
    expect(run.state).toBe("failed");
    expect(run.reason).toBe(
      "budget cannot be checked: no price for mystery-model in the config's prices (max_cost 5); the sprite was stopped",
    );
  });

  it("a run within its budget succeeds", async () => {
    project({ max_tokens: 1000 });
    const command = tp.sprite("thrifty", { steps: [usage("m", 600, 100), completed] });
    const run = await tp.supervisor().startRun({ role: "Builder", command });
    expect(run.state).toBe("succeeded");
  });

  it.each([
    [{ max_tokens: 0 }, "invalid_budget", "--max-tokens must be a positive whole number, got 0"],
    [{ max_tokens: 1.5 }, "invalid_budget", "--max-tokens must be a positive whole number, got 1.5"],
    [{ max_cost: -1 }, "invalid_budget", "--max-cost must be a positive number, got -1"],
    [{ max_cost: 2 }, "no_prices", "--max-cost needs a price table"],
  ])("a bad run budget %j is refused before the run starts", async (budget, code, message) => {
    project();
    const sup = tp.supervisor();
    await expect(sup.startRun({ role: "Builder", command: ["true"], budget })).rejects.toMatchObject({
      code,
      message: expect.stringContaining(message) as unknown,
    });
    expect(await sup.runs.list()).toEqual([]);
  });
});
