import type { Migration } from "../../store/index.js";

const common = (serial: string) => `
CREATE TABLE lattice_runs (
  id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL,
  role TEXT NOT NULL,
  entry_id TEXT,
  sprite_id TEXT NOT NULL,
  work_item_id TEXT NOT NULL,
  state TEXT NOT NULL,
  command_json TEXT NOT NULL,
  workspace TEXT NOT NULL,
  checkpoint_dir TEXT NOT NULL,
  run_dir TEXT NOT NULL,
  worker TEXT,
  host TEXT NOT NULL,
  supervisor_pid INTEGER,
  sprite_pid INTEGER,
  sprite_started TEXT,
  attempt INTEGER NOT NULL,
  outbox_offset BIGINT NOT NULL,
  outbox_line BIGINT NOT NULL,
  stdout_offset BIGINT NOT NULL,
  stderr_offset BIGINT NOT NULL,
  waiting_json TEXT,
  gate_json TEXT,
  exit_code INTEGER,
  exit_signal TEXT,
  reason TEXT,
  log_bytes BIGINT NOT NULL,
  log_truncated INTEGER NOT NULL,
  entry_synced INTEGER NOT NULL,
  created_at TEXT NOT NULL,
  created_ms BIGINT NOT NULL,
  updated_ms BIGINT NOT NULL,
  finished_ms BIGINT
);
CREATE INDEX lattice_runs_state ON lattice_runs (project_id, state, created_ms);
CREATE INDEX lattice_runs_entry ON lattice_runs (project_id, entry_id);
CREATE TABLE lattice_run_events (
  run_id TEXT NOT NULL,
  seq BIGINT NOT NULL,
  attempt INTEGER NOT NULL,
  event_id TEXT NOT NULL,
  event_type TEXT NOT NULL,
  source TEXT NOT NULL,
  outbox_line BIGINT,
  event_json TEXT NOT NULL,
  received_ms BIGINT NOT NULL,
  dispatched_ms BIGINT,
  dispatch_json TEXT,
  PRIMARY KEY (run_id, seq),
  UNIQUE (run_id, event_id)
);
CREATE INDEX lattice_run_events_type ON lattice_run_events (run_id, event_type);
CREATE TABLE lattice_run_logs (
  run_id TEXT NOT NULL,
  seq BIGINT NOT NULL,
  stream TEXT NOT NULL,
  text TEXT NOT NULL,
  at_ms BIGINT NOT NULL,
  PRIMARY KEY (run_id, seq)
);
CREATE TABLE lattice_protocol_errors (
  id ${serial},
  run_id TEXT NOT NULL,
  source TEXT NOT NULL,
  line_no BIGINT,
  reason TEXT NOT NULL,
  excerpt TEXT NOT NULL,
  at_ms BIGINT NOT NULL
);
CREATE INDEX lattice_protocol_errors_run ON lattice_protocol_errors (run_id, id);
CREATE TABLE lattice_violations (
  run_id TEXT NOT NULL,
  line_no BIGINT NOT NULL,
  rule TEXT NOT NULL,
  detail TEXT NOT NULL,
  at_ms BIGINT NOT NULL,
  PRIMARY KEY (run_id, line_no)
);
CREATE TABLE lattice_resumes (
  run_id TEXT NOT NULL,
  resume_key TEXT NOT NULL,
  checkpoint_id TEXT NOT NULL,
  attempt INTEGER NOT NULL,
  at_ms BIGINT NOT NULL,
  PRIMARY KEY (run_id, resume_key)
);
CREATE TABLE lattice_gate_decisions (
  id ${serial},
  project_id TEXT NOT NULL,
  entry_id TEXT NOT NULL,
  entry_version INTEGER NOT NULL,
  role TEXT NOT NULL,
  decision TEXT NOT NULL,
  reasoning TEXT NOT NULL,
  conditions_json TEXT NOT NULL,
  run_id TEXT,
  at_ms BIGINT NOT NULL
);
CREATE INDEX lattice_gate_decisions_entry ON lattice_gate_decisions (project_id, entry_id, id);
`;

/** Runs, their events (once each), capped logs, protocol errors, hard-rule violations, resumes, gate decisions. */
export const m0100: Migration = {
  version: 100,
  name: "lattice runs and events",
  up: {
    sqlite: common("INTEGER PRIMARY KEY AUTOINCREMENT"),
    postgres: common("BIGSERIAL PRIMARY KEY"),
  },
};
