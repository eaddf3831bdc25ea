import type { Migration } from "../../store/index.js";

/**
 * A run's place in its lane cycle: the cycle's branch, where the run started on it, the commit it
 * handed on and the cycle's pull request (JSON, null for runs outside a cycle and runs from before).
 */
const up = `ALTER TABLE lattice_runs ADD COLUMN cycle_json TEXT;`;

export const m0180: Migration = {
  version: 180,
  name: "lattice run cycle (branch, start, commit, pull request)",
  up: { sqlite: up, postgres: up },
};
