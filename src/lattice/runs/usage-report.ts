/**
 * Runs' usage grouped (by role, cycle, day or model) with each group's cost, and the one-line text
 * the CLI, Kai and the console show for a run's or a group's usage.
 */
import { cycleRootId, findRole, type Config } from "../../config/light/index.js";
import { costOf, formatCost, type PriceTable } from "./cost.js";
import type { RunRecord } from "./records.js";
import { addTokens, noTokens, type ModelUsage, type TokenCounts } from "./usage.js";

export const USAGE_GROUPINGS = ["role", "cycle", "day", "model"] as const;
export type UsageGrouping = (typeof USAGE_GROUPINGS)[number];

export interface UsageGroup extends TokenCounts {
  /** The role, cycle (its root entry id; "(no entry)" for runs without one), day (YYYY-MM-DD) or model. */
  key: string;
  runs: number;
  cost: number | null;
  unpriced: string[];
}

/** The cycle a run belongs to: its entry's cycle root in its role's lane (the entry id when the role is gone), null without an entry. */
export function cycleOfRun(config: Config, run: Pick<RunRecord, "role" | "entry_id">): string | null {
  if (run.entry_id === null) return null;
  try {
    return cycleRootId(findRole(config, run.role).lane, run.entry_id);
  } catch {
    return run.entry_id;
  }
}

/** The calendar day of an instant in `timeZone` (default UTC), as YYYY-MM-DD. */
export function dayOf(iso: string, timeZone = "UTC"): string {
  return new Intl.DateTimeFormat("en-CA", { timeZone, year: "numeric", month: "2-digit", day: "2-digit" }).format(
    new Date(iso),
  );
}

/** Group the runs' usage (runs without any are left out), in key order; `timeZone` counts days (default: the config's, else UTC). */
export function groupUsage(
  config: Config,
  runs: readonly RunRecord[],
  usage: ReadonlyMap<string, ModelUsage[]>,
  by: UsageGrouping,
  timeZone = config.timezone,
): UsageGroup[] {
  const groups = new Map<string, { tokens: TokenCounts; runs: Set<string>; models: ModelUsage[] }>();
  for (const run of runs) {
    const models = usage.get(run.id);
    if (!models || models.length === 0) continue;
    for (const m of models) {
      const key =
        by === "role"
          ? run.role
          : by === "cycle"
            ? (cycleOfRun(config, run) ?? "(no entry)")
            : by === "day"
              ? dayOf(run.created_at, timeZone)
              : m.model || "(model not reported)";
      let g = groups.get(key);
      if (!g) groups.set(key, (g = { tokens: noTokens(), runs: new Set(), models: [] }));
      addTokens(g.tokens, m);
      g.runs.add(run.id);
      g.models.push(m);
    }
  }
  return [...groups.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([key, g]) => ({ key, runs: g.runs.size, ...g.tokens, ...costOf(g.models, config.prices as PriceTable) }));
}

const int = (n: number) => n.toLocaleString("en-US");

/** "12,345 tokens (10,000 in, 2,000 cached; 2,345 out, 300 reasoning), cost 0.0123" — or "no usage reported". */
export function usageText(u: TokenCounts & { cost: number | null; unpriced: string[] }): string {
  if (u.total_tokens === 0) return "no usage reported";
  const input = `${int(u.input_tokens)} in${u.cached_input_tokens ? `, ${int(u.cached_input_tokens)} cached` : ""}`;
  const output = `${int(u.output_tokens)} out${u.reasoning_tokens ? `, ${int(u.reasoning_tokens)} reasoning` : ""}`;
  const cost =
    u.cost !== null
      ? `cost ${formatCost(u.cost)}`
      : u.unpriced.length
        ? `cost unknown (no price for ${u.unpriced.join(", ")})`
        : "";
  return `${int(u.total_tokens)} tokens (${input}; ${output})${cost ? `, ${cost}` : ""}`;
}
