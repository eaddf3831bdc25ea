import type { Migration } from "../../store/index.js";

/**
 * Resumes left for any worker (issue 33): `pmagent resume --queue` records the inputs; a worker of
 * the run's role on any machine takes the row in the transaction that moves the run from waiting
 * to starting, so one worker resumes it. Secret inputs never queue (they are not stored).
 */
export const m0240: Migration = {
  version: 240,
  name: "lattice resumes queued for any worker",
  up: `
CREATE TABLE lattice_resume_queue (
  run_id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL,
  role TEXT NOT NULL,
  inputs_json TEXT NOT NULL,
  context_json TEXT NOT NULL,
  queued_ms BIGINT NOT NULL
);
CREATE INDEX lattice_resume_queue_pick ON lattice_resume_queue (project_id, role, queued_ms);
`,
};
