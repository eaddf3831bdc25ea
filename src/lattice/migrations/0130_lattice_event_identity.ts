import type { Migration } from "../../store/index.js";

/**
 * An event's uniqueness in its run, keyed in time order: (run_id, event_ts, event_id) instead of
 * (run_id, event_id). The timestamp is part of the hashed content, so the two keys accept and
 * refuse exactly the same rows; but events arrive in time order, so new keys land at the end of the
 * index instead of at random places in it (a random 64-character hash made every insert of a
 * large run dirty its own index page, several times the cost of the row).
 */
const COLUMNS =
  "run_id, seq, attempt, event_id, event_type, source, outbox_line, event_json, received_ms, dispatched_ms, dispatch_json";

/** SQLite cannot drop a table's UNIQUE constraint: the table is rebuilt, with every index it had (0100, 0120). */
const sqlite = `
CREATE TABLE lattice_run_events_new (
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
  event_ts TEXT NOT NULL DEFAULT '',
  PRIMARY KEY (run_id, seq)
);
INSERT INTO lattice_run_events_new (${COLUMNS}, event_ts)
  SELECT ${COLUMNS}, COALESCE(json_extract(event_json, '$.timestamp'), '') FROM lattice_run_events;
DROP TABLE lattice_run_events;
ALTER TABLE lattice_run_events_new RENAME TO lattice_run_events;
CREATE UNIQUE INDEX lattice_run_events_identity ON lattice_run_events (run_id, event_ts, event_id);
CREATE INDEX lattice_run_events_type ON lattice_run_events (run_id, event_type);
CREATE INDEX lattice_run_events_received ON lattice_run_events (run_id, received_ms);
`;

const postgres = `
ALTER TABLE lattice_run_events ADD COLUMN event_ts TEXT NOT NULL DEFAULT '';
UPDATE lattice_run_events SET event_ts = COALESCE(event_json::json->>'timestamp', '');
ALTER TABLE lattice_run_events DROP CONSTRAINT lattice_run_events_run_id_event_id_key;
CREATE UNIQUE INDEX lattice_run_events_identity ON lattice_run_events (run_id, event_ts, event_id);
`;

export const m0130: Migration = {
  version: 130,
  name: "lattice event identity keyed in time order",
  up: { sqlite, postgres },
};
