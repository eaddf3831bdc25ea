import type { Migration } from "../../store/index.js";

/**
 * Lattice actions (one row per ACTION_REQUEST, keyed by run id + event hash so a request seen
 * twice — stdout and outbox, or again after a restart — is one action), environment proposals
 * (deduplicated by fingerprint, with a count) and the local forge's pull requests.
 */
const sql = (serial: string) => `
CREATE TABLE lattice_actions (
  idempotency_key TEXT PRIMARY KEY,
  project_id TEXT NOT NULL,
  run_id TEXT NOT NULL,
  event_hash TEXT NOT NULL,
  role TEXT NOT NULL,
  work_item_id TEXT NOT NULL,
  action TEXT NOT NULL,
  parameters_json TEXT NOT NULL,
  blocking INTEGER NOT NULL,
  state TEXT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  next_attempt_at TEXT NOT NULL,
  next_attempt_ms BIGINT NOT NULL,
  owner TEXT,
  lease_expires_ms BIGINT,
  result_json TEXT,
  error_json TEXT,
  resumed INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL,
  created_ms BIGINT NOT NULL,
  updated_at TEXT NOT NULL,
  updated_ms BIGINT NOT NULL
);
CREATE INDEX lattice_actions_run ON lattice_actions (run_id, created_ms);
CREATE INDEX lattice_actions_due ON lattice_actions (project_id, state, next_attempt_ms);
CREATE TABLE lattice_env_proposals (
  id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL,
  role TEXT NOT NULL,
  fingerprint TEXT NOT NULL,
  adjustment_type TEXT NOT NULL,
  details_json TEXT NOT NULL,
  observed_failure_json TEXT NOT NULL,
  confidence DOUBLE PRECISION NOT NULL,
  evidence_json TEXT NOT NULL,
  scope TEXT NOT NULL,
  count INTEGER NOT NULL,
  status TEXT NOT NULL,
  first_run_id TEXT NOT NULL,
  last_run_id TEXT NOT NULL,
  first_seen_at TEXT NOT NULL,
  last_seen_at TEXT NOT NULL,
  last_seen_ms BIGINT NOT NULL,
  decided_by TEXT,
  decided_at TEXT,
  decided_seq INTEGER,
  UNIQUE (project_id, role, fingerprint)
);
CREATE INDEX lattice_env_proposals_role ON lattice_env_proposals (project_id, role, status);
CREATE TABLE lattice_env_proposal_sightings (
  run_id TEXT NOT NULL,
  event_id TEXT NOT NULL,
  proposal_id TEXT NOT NULL,
  PRIMARY KEY (run_id, event_id)
);
CREATE TABLE lattice_forge_pulls (
  seq ${serial},
  project_id TEXT NOT NULL,
  number INTEGER NOT NULL,
  head TEXT NOT NULL,
  base TEXT NOT NULL,
  title TEXT NOT NULL,
  body TEXT NOT NULL,
  head_sha TEXT NOT NULL,
  state TEXT NOT NULL,
  created_at TEXT NOT NULL,
  created_ms BIGINT NOT NULL,
  UNIQUE (project_id, number)
);
CREATE INDEX lattice_forge_pulls_head ON lattice_forge_pulls (project_id, head, state);
`;

export const m0110: Migration = {
  version: 110,
  name: "lattice actions, environment proposals, local forge pull requests",
  up: { sqlite: sql("INTEGER PRIMARY KEY AUTOINCREMENT"), postgres: sql("BIGSERIAL PRIMARY KEY") },
};
