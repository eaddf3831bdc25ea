import type { Dialect } from "../../store/index.js";
import type { Migration } from "../../store/index.js";
import { TYPE_INDEX_CONDITION } from "./0140_lattice_event_type_index.js";

/**
 * The lists of runs, actions, environment proposals and pull requests page by keyset in their sort
 * order: an index per filter the API offers, ending in the sort key, so a page is a seek and
 * `limit` rows. Runs: `created_ms, id` (the state and entry indexes of 0100 gain the key; `unsynced`
 * and the entry's runs still use them). A run's events of one type page by `seq`: the partial type
 * index (0140, same condition) gains `seq`. Actions: `created_ms, idempotency_key`; proposals:
 * `last_seen_ms, id`; pull requests: `number`.
 */
const sql = (dialect: Dialect) => `
DROP INDEX lattice_runs_state;
DROP INDEX lattice_runs_entry;
CREATE INDEX lattice_runs_created ON lattice_runs (project_id, created_ms, id);
CREATE INDEX lattice_runs_state ON lattice_runs (project_id, state, created_ms, id);
CREATE INDEX lattice_runs_role ON lattice_runs (project_id, role, created_ms, id);
CREATE INDEX lattice_runs_entry ON lattice_runs (project_id, entry_id, created_ms, id);
DROP INDEX lattice_run_events_type;
CREATE INDEX lattice_run_events_type ON lattice_run_events (run_id, event_type, seq) WHERE ${TYPE_INDEX_CONDITION[dialect]};
CREATE INDEX lattice_actions_created ON lattice_actions (project_id, created_ms, idempotency_key);
CREATE INDEX lattice_actions_state_created ON lattice_actions (project_id, state, created_ms, idempotency_key);
CREATE INDEX lattice_actions_run_created ON lattice_actions (project_id, run_id, created_ms, idempotency_key);
CREATE INDEX lattice_env_proposals_seen ON lattice_env_proposals (project_id, last_seen_ms, id);
CREATE INDEX lattice_env_proposals_status_seen ON lattice_env_proposals (project_id, status, last_seen_ms, id);
CREATE INDEX lattice_env_proposals_role_seen ON lattice_env_proposals (project_id, role, last_seen_ms, id);
CREATE INDEX lattice_forge_pulls_state ON lattice_forge_pulls (project_id, state, number);
`;

export const m0150: Migration = {
  version: 150,
  name: "lattice list indexes in the lists' sort order",
  up: { sqlite: sql("sqlite"), postgres: sql("postgres") },
};
