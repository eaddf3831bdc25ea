/** Reads of runs' token usage (written by ingest with the events) and writes of a run's own budget. */
import { inChunks, marks, type Queryable } from "../../store/index.js";
import type { ModelUsage } from "./usage.js";

/** A run's own limits (`pmagent run --max-tokens/--max-cost`), beside its role's. */
export interface RunBudget {
  max_tokens?: number;
  max_cost?: number;
}

interface UsageRow {
  run_id: string;
  model: string;
  input_tokens: number | string;
  cached_input_tokens: number | string;
  output_tokens: number | string;
  reasoning_tokens: number | string;
  total_tokens: number | string;
  reports: number | string;
}

const toUsage = (r: UsageRow): ModelUsage => ({
  model: r.model,
  input_tokens: Number(r.input_tokens),
  cached_input_tokens: Number(r.cached_input_tokens),
  output_tokens: Number(r.output_tokens),
  reasoning_tokens: Number(r.reasoning_tokens),
  total_tokens: Number(r.total_tokens),
  reports: Number(r.reports),
});

/** Each run's usage per model (runs without a report are absent). */
export async function usageOfRuns(q: Queryable, runIds: readonly string[]): Promise<Map<string, ModelUsage[]>> {
  const rows = await inChunks(runIds, (chunk) =>
    q.all<UsageRow>(
      `SELECT * FROM lattice_run_usage WHERE run_id IN (${marks(chunk.length)}) ORDER BY run_id, model`,
      chunk,
    ),
  );
  const out = new Map<string, ModelUsage[]>();
  for (const r of rows) {
    const list = out.get(r.run_id) ?? [];
    list.push(toUsage(r));
    out.set(r.run_id, list);
  }
  return out;
}

export async function setRunBudget(q: Queryable, runId: string, budget: RunBudget): Promise<void> {
  await q.run(
    `INSERT INTO lattice_run_budgets (run_id, max_tokens, max_cost) VALUES (?, ?, ?) ON CONFLICT (run_id) DO UPDATE SET max_tokens = excluded.max_tokens, max_cost = excluded.max_cost`,
    [runId, budget.max_tokens ?? null, budget.max_cost ?? null],
  );
}

export async function runBudget(q: Queryable, runId: string): Promise<RunBudget | null> {
  const row = await q.get<{ max_tokens: number | string | null; max_cost: number | string | null }>(
    `SELECT max_tokens, max_cost FROM lattice_run_budgets WHERE run_id = ?`,
    [runId],
  );
  if (!row) return null;
  return {
    ...(row.max_tokens !== null ? { max_tokens: Number(row.max_tokens) } : {}),
    ...(row.max_cost !== null ? { max_cost: Number(row.max_cost) } : {}),
  };
}
