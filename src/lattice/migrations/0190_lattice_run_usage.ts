import type { Migration } from "../../store/index.js";

/**
 * Token usage per run and model, added to in the transaction that stores the usage events (so a
 * crash or a re-read never counts a report twice or loses one), and a run's own budget (`pmagent
 * run --max-tokens/--max-cost`; a role's budget is read from the config). Cost is not stored: it
 * is the tokens at the config's prices when read.
 */
const sql = (real: string) => `
CREATE TABLE lattice_run_usage (
  run_id TEXT NOT NULL,
  model TEXT NOT NULL,
  input_tokens BIGINT NOT NULL,
  cached_input_tokens BIGINT NOT NULL,
  output_tokens BIGINT NOT NULL,
  reasoning_tokens BIGINT NOT NULL,
  total_tokens BIGINT NOT NULL,
  reports INTEGER NOT NULL,
  PRIMARY KEY (run_id, model)
);
CREATE TABLE lattice_run_budgets (
  run_id TEXT PRIMARY KEY,
  max_tokens BIGINT,
  max_cost ${real}
);
`;

export const m0190: Migration = {
  version: 190,
  name: "lattice run usage (tokens per run and model) and run budgets",
  up: { sqlite: sql("REAL"), postgres: sql("DOUBLE PRECISION") },
};
