import type { Migration } from "../../store/index.js";

const common = (serial: string) => `
CREATE TABLE bb_entries (
  project_id TEXT NOT NULL,
  id TEXT NOT NULL,
  version INTEGER NOT NULL,
  status TEXT NOT NULL,
  from_actor TEXT NOT NULL,
  to_actor TEXT NOT NULL,
  kind TEXT NOT NULL,
  created_ms BIGINT NOT NULL,
  updated_ms BIGINT NOT NULL,
  entry_json TEXT NOT NULL,
  content_hash TEXT NOT NULL,
  claimed_by TEXT,
  lease_expires_ms BIGINT,
  PRIMARY KEY (project_id, id)
);
CREATE INDEX bb_entries_pick ON bb_entries (project_id, to_actor, status, created_ms, id);
CREATE INDEX bb_entries_updated ON bb_entries (project_id, updated_ms);
CREATE TABLE bb_history (
  seq ${serial},
  project_id TEXT NOT NULL,
  entry_id TEXT NOT NULL,
  version INTEGER NOT NULL,
  at TEXT NOT NULL,
  at_ms BIGINT NOT NULL,
  actor TEXT NOT NULL,
  action TEXT NOT NULL,
  from_status TEXT,
  to_status TEXT NOT NULL,
  changes_json TEXT NOT NULL
);
CREATE INDEX bb_history_entry ON bb_history (project_id, entry_id, seq);
CREATE INDEX bb_history_time ON bb_history (project_id, at_ms);
`;

export const m0001: Migration = {
  version: 1,
  name: "blackboard entries and history",
  up: {
    sqlite: common("INTEGER PRIMARY KEY AUTOINCREMENT"),
    postgres: common("BIGSERIAL PRIMARY KEY"),
  },
};
