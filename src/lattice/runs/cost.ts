/**
 * What a run's tokens cost by the config's price table (`prices`: model → per-million-token
 * prices, "*" for any model not named). Cost is worked out when it is read, from the tokens
 * stored per model: a corrected price table prices past runs too.
 */
import type { PriceConfig } from "../../config/light/index.js";
import { sumTokens, type ModelUsage, type TokenCounts } from "./usage.js";

export type PriceTable = Record<string, PriceConfig>;

/** Cost of a set of model usages: null when some tokens had no price (`unpriced` names their models). */
export interface Cost {
  cost: number | null;
  unpriced: string[];
}

export function priceOf(prices: PriceTable, model: string): PriceConfig | undefined {
  return prices[model] ?? prices["*"];
}

/** One model's tokens at one price: uncached input, cached input and output each at theirs. */
export function tokenCost(t: TokenCounts, price: PriceConfig): number {
  const cached = Math.min(t.cached_input_tokens, t.input_tokens);
  const cachedPrice = price.cached_input_per_mtok ?? price.input_per_mtok;
  return (
    ((t.input_tokens - cached) * price.input_per_mtok +
      cached * cachedPrice +
      t.output_tokens * price.output_per_mtok) /
    1_000_000
  );
}

export function costOf(usage: Iterable<ModelUsage>, prices: PriceTable): Cost {
  // No price table: no cost, and nothing to say about it.
  if (Object.keys(prices).length === 0) return { cost: null, unpriced: [] };
  let cost = 0;
  const unpriced = new Set<string>();
  for (const u of usage) {
    if (u.total_tokens === 0) continue;
    const price = priceOf(prices, u.model);
    if (price === undefined) unpriced.add(u.model || "(model not reported)");
    else cost += tokenCost(u, price);
  }
  return { cost: unpriced.size > 0 ? null : roundCost(cost), unpriced: [...unpriced].sort() };
}

/** Costs to a millionth: sums of float products stay readable and compare equal across stores. */
export const roundCost = (n: number): number => Math.round(n * 1_000_000) / 1_000_000;

/** A run's (or a group's) usage as shown: its tokens, cost, and each model's share. */
export interface UsageSummary extends TokenCounts {
  cost: number | null;
  unpriced: string[];
  models: Array<ModelUsage & { cost: number | null }>;
}

export function summarizeUsage(models: readonly ModelUsage[], prices: PriceTable): UsageSummary {
  const { cost, unpriced } = costOf(models, prices);
  const priced = models.map((m) => ({ ...m, cost: costOf([m], prices).cost }));
  return { ...sumTokens(models), cost, unpriced, models: priced };
}

/** Limits a run is held to (its role's budget, with the run's own limits in their place where given). */
export interface BudgetLimits {
  max_tokens?: number;
  max_cost?: number;
}

const int = (n: number) => n.toLocaleString("en-US");

/** Why `usage` breaks `budget`, or null when it stays within it. */
export function budgetBreach(budget: BudgetLimits, usage: readonly ModelUsage[], prices: PriceTable): string | null {
  const tokens = sumTokens(usage).total_tokens;
  if (budget.max_tokens !== undefined && tokens > budget.max_tokens)
    return `budget exceeded: ${int(tokens)} tokens > ${int(budget.max_tokens)}`;
  if (budget.max_cost !== undefined && tokens > 0) {
    const { cost, unpriced } = costOf(usage, prices);
    // A cost budget that cannot be counted does not let the run spend on unchecked.
    if (cost === null)
      return `budget cannot be checked: no price for ${unpriced.join(", ")} in the config's prices (max_cost ${budget.max_cost})`;
    if (cost > budget.max_cost) return `budget exceeded: cost ${formatCost(cost)} > ${budget.max_cost}`;
  }
  return null;
}

/** A cost for people: 4 decimals under 1, else 2. */
export function formatCost(cost: number | null): string {
  if (cost === null) return "?";
  return cost < 1 ? cost.toFixed(4) : cost.toFixed(2);
}
