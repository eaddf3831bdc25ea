/** The price table and role budgets in pmagent.config.json: what is accepted, and what each bad value is told. */
import { describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/index.js";

const config = (extra: Record<string, unknown>, role: Record<string, unknown> = {}) =>
  JSON.stringify({
    project_id: "demo",
    lanes: [{ layer: "l", name: "n", roles: [{ name: "Dev", allowed_kinds: ["k"], ...role }] }],
    ...extra,
  });

describe("prices and budgets in the config", () => {
  it("accepts a price table (cached price optional, '*' for any model) and a role budget", () => {
    const c = parseConfig(
      config(
        {
          prices: {
            "gpt-5": { input_per_mtok: 1.25, output_per_mtok: 10, cached_input_per_mtok: 0.125 },
            "*": { input_per_mtok: 3, output_per_mtok: 15 },
          },
        },
        { budget: { max_tokens: 100000, max_cost: 2.5 } },
      ),
      "cfg.json",
    );
    expect(c.prices["gpt-5"]).toEqual({ input_per_mtok: 1.25, output_per_mtok: 10, cached_input_per_mtok: 0.125 });
    expect(c.lanes[0]!.roles[0]!.budget).toEqual({ max_tokens: 100000, max_cost: 2.5 });
    expect(parseConfig(config({}), "cfg.json").prices).toEqual({});
  });

  it.each([
    [
      "a negative price",
      { prices: { m: { input_per_mtok: -1, output_per_mtok: 1 } } },
      {},
      "$.prices.m.input_per_mtok: Too small: expected number to be >=0",
    ],
    [
      "a price without output_per_mtok",
      { prices: { m: { input_per_mtok: 1 } } },
      {},
      "$.prices.m.output_per_mtok: Invalid input: expected number, received undefined",
    ],
    [
      "a price as text",
      { prices: { m: { input_per_mtok: "1$", output_per_mtok: 1 } } },
      {},
      "$.prices.m.input_per_mtok: Invalid input: expected number, received string",
    ],
    [
      "an unknown price field",
      { prices: { m: { input_per_mtok: 1, output_per_mtok: 1, per_call: 2 } } },
      {},
      '$.prices.m: Unrecognized key: "per_call"',
    ],
    ["an empty budget", {}, { budget: {} }, "$.lanes[0].roles[0].budget: give max_tokens, max_cost or both"],
    [
      "a fractional token budget",
      {},
      { budget: { max_tokens: 10.5 } },
      "$.lanes[0].roles[0].budget.max_tokens: Invalid input: expected int, received number",
    ],
    [
      "a zero cost budget",
      { prices: { m: { input_per_mtok: 1, output_per_mtok: 1 } } },
      { budget: { max_cost: 0 } },
      "$.lanes[0].roles[0].budget.max_cost: Too small: expected number to be >0",
    ],
    [
      "a cost budget without prices",
      {},
      { budget: { max_cost: 1 } },
      '$.lanes[0].roles[0].budget.max_cost: role Dev has a cost budget but the config has no prices: add "prices"',
    ],
  ])("refuses %s, naming the path and what to fix", (_what, extra, role, message) => {
    expect(() => parseConfig(config(extra, role), "cfg.json")).toThrow(message);
  });
});
