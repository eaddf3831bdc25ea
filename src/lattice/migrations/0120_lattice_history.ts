import type { Migration } from "../../store/index.js";

/**
 * Indexes for reading runs as of a time (Kai's runs collector): runs of a role by when they
 * finished, events of a run by arrival (counted up to a cutoff from the index alone), and the
 * sightings of an environment proposal.
 */
const sql = `
CREATE INDEX lattice_runs_finished ON lattice_runs (project_id, role, finished_ms);
CREATE INDEX lattice_run_events_received ON lattice_run_events (run_id, received_ms);
CREATE INDEX lattice_env_proposal_sightings_proposal ON lattice_env_proposal_sightings (proposal_id);
`;

export const m0120: Migration = {
  version: 120,
  name: "lattice indexes for reading runs as of a time",
  up: { sqlite: sql, postgres: sql },
};
