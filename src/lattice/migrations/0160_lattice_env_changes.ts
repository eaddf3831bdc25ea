import type { Migration } from "../../store/index.js";

/**
 * What accepting an environment proposal did (one row per accepted proposal): applied (with its
 * effect: tools installed, PATH directories, variables, the sandbox's network), failed (with its
 * reason; nothing applied) or undone.
 */
const sql = `
CREATE TABLE lattice_env_changes (
  id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL,
  proposal_id TEXT NOT NULL,
  applies_to TEXT NOT NULL,
  adjustment_type TEXT NOT NULL,
  status TEXT NOT NULL,
  effect_json TEXT NOT NULL,
  reason TEXT,
  applied_by TEXT NOT NULL,
  applied_at TEXT NOT NULL,
  applied_ms BIGINT NOT NULL,
  undone_by TEXT,
  undone_at TEXT,
  UNIQUE (project_id, proposal_id)
);
CREATE INDEX lattice_env_changes_role ON lattice_env_changes (project_id, applies_to, status);
`;

export const m0160: Migration = {
  version: 160,
  name: "lattice environment changes (what accepted proposals applied)",
  up: { sqlite: sql, postgres: sql },
};
