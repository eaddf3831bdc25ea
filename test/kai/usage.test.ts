/** Kai's lane_status: the lane's runs' reported tokens and cost, in total and per role, cycle and day, and one line of the digest. */
import { beforeAll, describe, expect, it } from "vitest";
import { openProject } from "../../src/app/index.js";
import { answer, type LaneStatus } from "../../src/kai/index.js";
import { availableStoreKinds } from "../helpers/stores.js";
import { useSupervisorFixture } from "../helpers/supervisor-fixture.js";

const kinds = await availableStoreKinds();

const usage = (model: string, input: number, output: number) => ({
  emit: "INFO",
  payload: { message: "usage", kind: "token_usage", metadata: { model, input_tokens: input, output_tokens: output } },
});
const completed = { emit: "COMPLETED", payload: { status: "success" } };

describe.each(kinds)("Kai's lane status counts the lane's usage ($name)", (kind) => {
  const fx = useSupervisorFixture(kind, {
    config: { prices: { big: { input_per_mtok: 10, output_per_mtok: 30 } } },
    git: true,
    scope: "all",
  });
  const ask = async () =>
    answer(
      {
        version: "kai_request_v1",
        request_id: "t-usage",
        from: { actor_type: "human" },
        project_id: "demo",
        type: "lane_status",
        lane: { layer: "test", name: "build" },
        params: {},
      },
      {
        config: fx.tp.project.config,
        sources: await (await openProject({ project: fx.tp.project, store: fx.ts.store })).kaiSources(),
      },
    );

  beforeAll(async () => {
    const sup = fx.tp.supervisor();
    await fx.board.post("Human", {
      id: "req-1",
      to: "Builder",
      kind: "build_request",
      payload: { summary: "fix the cache" },
    });
    await sup.startRun({
      role: "Builder",
      entryId: "req-1",
      command: fx.tp.sprite("builder", { steps: [usage("big", 100_000, 10_000), completed] }),
    });
    await sup.startRun({
      role: "Reviewer",
      entryId: "req-1-review",
      command: fx.tp.sprite("reviewer", { steps: [usage("big", 20_000, 1_000), usage("other", 500, 500), completed] }),
    });
  }, 120_000);

  it("in the payload: total, by role, by cycle and by day, a model without a price making a group's cost unknown", async () => {
    const res = await ask();
    if (res.status !== "ok" || res.payload.kind !== "lane_status_v1") throw new Error(JSON.stringify(res));
    const data = res.payload.data as LaneStatus;
    const builder = {
      runs: 1,
      input_tokens: 100_000,
      cached_input_tokens: 0,
      output_tokens: 10_000,
      reasoning_tokens: 0,
      total_tokens: 110_000,
      cost: 1.3,
      unpriced: [],
    };
    const reviewer = {
      runs: 1,
      input_tokens: 20_500,
      cached_input_tokens: 0,
      output_tokens: 1_500,
      reasoning_tokens: 0,
      total_tokens: 22_000,
      cost: null,
      unpriced: ["other"],
    };
    const both = {
      runs: 2,
      input_tokens: 120_500,
      cached_input_tokens: 0,
      output_tokens: 11_500,
      reasoning_tokens: 0,
      total_tokens: 132_000,
      cost: null,
      unpriced: ["other"],
    };
    expect(data.usage).toEqual({
      total: both,
      by_role: [
        { key: "Builder", ...builder },
        { key: "Reviewer", ...reviewer },
      ],
      by_cycle: [{ key: "req-1", ...both }],
      by_day: [{ key: new Date().toISOString().slice(0, 10), ...both }],
    });
    expect(res.summary_md).toContain(
      "- Usage: 132,000 tokens (120,500 in; 11,500 out), cost unknown (no price for other) over 2 runs; by role: Builder 110,000 (1.30), Reviewer 22,000",
    );
  });
});
