/**
 * Usage and budgets from the command line: `pmagent run --max-tokens/--max-cost`, the tokens and
 * cost `runs show`, `runs list` and `runs usage` print, and the errors bad flags get.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCli } from "../helpers/proc.js";
import { availableStoreKinds, type TestStore } from "../helpers/stores.js";
import { scenarioSprite } from "../lattice/helpers.js";

const kinds = await availableStoreKinds();

const usage = (model: string, input: number, output: number) => ({
  emit: "INFO",
  payload: { message: "usage", kind: "token_usage", metadata: { model, input_tokens: input, output_tokens: output } },
});
const completed = { emit: "COMPLETED", payload: { status: "success" } };

describe.each(kinds)("pmagent usage and budgets on $name", (kind) => {
  let ts: TestStore;
  let root: string;
  let env: NodeJS.ProcessEnv;
  const sprite = (name: string, scenario: unknown) => scenarioSprite(root, name, scenario);
  const cli = (args: string[]) => runCli(args, { cwd: root, env });

  beforeAll(async () => {
    ts = await kind.open();
    root = mkdtempSync(join(tmpdir(), "pmagent-cli-usage-"));
    env = { ...process.env, ...ts.env };
    const config = {
      project_id: "cli",
      prices: {
        big: { input_per_mtok: 10, output_per_mtok: 30 },
        small: { input_per_mtok: 1, output_per_mtok: 2, cached_input_per_mtok: 0.1 },
      },
      lanes: [
        {
          layer: "t",
          name: "l",
          roles: [
            { name: "Builder", allowed_kinds: ["build_request"] },
            { name: "Checker", allowed_kinds: ["check_request"], budget: { max_tokens: 100 } },
          ],
        },
      ],
    };
    writeFileSync(join(root, "pmagent.config.json"), JSON.stringify(config));
  });
  afterAll(async () => {
    await ts.cleanup();
    rmSync(root, { recursive: true, force: true });
  });

  it("shows a run's tokens and cost (per model when several) in run, runs show, runs list and runs usage", async () => {
    const r = await cli([
      "run",
      "--role",
      "Builder",
      "--",
      ...sprite("two-models", { steps: [usage("big", 100_000, 10_000), usage("small", 50_000, 5_000), completed] }),
    ]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    // big: 1.00 + 0.30; small: 0.05 + 0.01.
    expect(r.stdout).toContain("usage: 165,000 tokens (150,000 in; 15,000 out), cost 1.36");
    const id = r.stdout.split(/\s/)[0]!;
    const show = await cli(["runs", "show", id]);
    expect(show.stdout).toContain("usage:      165,000 tokens (150,000 in; 15,000 out), cost 1.36");
    expect(show.stdout).toContain("  big: 110,000 tokens (100,000 in; 10,000 out), cost 1.30");
    expect(show.stdout).toContain("  small: 55,000 tokens (50,000 in; 5,000 out), cost 0.0600");
    const json = JSON.parse((await cli(["runs", "show", id, "--format", "json"])).stdout) as {
      usage: Record<string, unknown>;
    };
    expect(json.usage).toMatchObject({
      total_tokens: 165_000,
      input_tokens: 150_000,
      output_tokens: 15_000,
      cost: 1.36,
      unpriced: [],
    });
    expect((await cli(["runs", "list"])).stdout).toContain(`${id}  succeeded  Builder  3 events, 165,000 tokens`);
    const byRole = JSON.parse((await cli(["runs", "usage", "--format", "json"])).stdout) as {
      by: string;
      groups: Array<Record<string, unknown>>;
      total: Record<string, unknown>;
    };
    expect(byRole.groups).toEqual([
      expect.objectContaining({ key: "Builder", runs: 1, total_tokens: 165_000, cost: 1.36 }),
    ]);
    const byModel = await cli(["runs", "usage", "--by", "model"]);
    expect(byModel.stdout).toBe(
      "big  1 run  110,000 tokens (100,000 in; 10,000 out), cost 1.30\nsmall  1 run  55,000 tokens (50,000 in; 5,000 out), cost 0.0600\ntotal  165,000 tokens (150,000 in; 15,000 out), cost 1.36\n",
    );
    const byDay = JSON.parse((await cli(["runs", "usage", "--by", "day", "--format", "json"])).stdout) as {
      groups: Array<{ key: string }>;
    };
    expect(byDay.groups.map((g) => g.key)).toEqual([new Date().toISOString().slice(0, 10)]);
  });

  it("--max-tokens stops a run past it (exit 1, the reason); a role's budget does too", async () => {
    const r = await cli([
      "run",
      "--role",
      "Builder",
      "--max-tokens",
      "1000",
      "--",
      ...sprite("spender", { steps: [usage("small", 5000, 10), { sleep: 600_000 }, completed] }),
    ]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain("failed  Builder");
    expect(r.stdout).toContain("budget exceeded: 5,010 tokens > 1,000; the sprite was stopped");
    const role = await cli([
      "run",
      "--role",
      "Checker",
      "--",
      ...sprite("checker", { steps: [usage("small", 90, 20), { sleep: 600_000 }, completed] }),
    ]);
    expect(role.code).toBe(1);
    expect(role.stdout).toContain("budget exceeded: 110 tokens > 100; the sprite was stopped");
    // The run's own limit replaces the role's.
    const roomier = await cli([
      "run",
      "--role",
      "Checker",
      "--max-tokens",
      "500",
      "--",
      ...sprite("checker2", { steps: [usage("small", 90, 20), completed] }),
    ]);
    expect(roomier.code).toBe(0);
  });

  it("--max-cost stops a run whose tokens cost more by the price table", async () => {
    const r = await cli([
      "run",
      "--role",
      "Builder",
      "--max-cost",
      "0.5",
      "--",
      ...sprite("costly", { steps: [usage("big", 100_000, 0), { sleep: 600_000 }, completed] }),
    ]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain("budget exceeded: cost 1.00 > 0.5; the sprite was stopped");
  });

  it.each([
    [["--max-tokens", "0"], "--max-tokens must be between 1 and ∞, got 0"],
    [["--max-tokens", "lots"], '--max-tokens expects a whole number, got "lots"'],
    [["--max-cost", "-1"], '--max-cost expects a positive amount (e.g. 2.50), got "-1"'],
    [["--max-cost", "1e3"], '--max-cost expects a positive amount (e.g. 2.50), got "1e3"'],
    [["--max-cost", "0"], '--max-cost expects a positive amount (e.g. 2.50), got "0"'],
  ])("refuses %j (exit 2) with what to give", async (flags, message) => {
    const r = await cli(["run", "--role", "Builder", ...flags, "--", "true"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(message);
  });

  it("refuses a bad --by for runs usage", async () => {
    const r = await cli(["runs", "usage", "--by", "week"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("Allowed choices are role, cycle, day, model");
  });
});

describe("--max-cost without a price table", () => {
  it("is refused before the run starts, saying to add prices", async () => {
    const root = mkdtempSync(join(tmpdir(), "pmagent-cli-noprice-"));
    try {
      writeFileSync(
        join(root, "pmagent.config.json"),
        JSON.stringify({
          project_id: "cli",
          lanes: [{ layer: "t", name: "l", roles: [{ name: "Builder", allowed_kinds: ["b"] }] }],
        }),
      );
      const r = await runCli(["run", "--role", "Builder", "--max-cost", "1", "--", "true"], { cwd: root });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('--max-cost needs a price table: add "prices"');
      const runs = await runCli(["runs", "list"], { cwd: root });
      expect(runs.stdout).toContain("no runs");
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
