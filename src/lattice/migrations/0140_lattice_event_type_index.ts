import type { Dialect } from "../../store/index.js";
import type { Migration } from "../../store/index.js";

/**
 * The index's condition, per dialect, as this migration created it (frozen here; lattice/runs'
 * EVENT_TYPE_INDEX_TERM is the same term, which its lookups add so that the index is used). It
 * leaves out the narration every run is mostly made of: INFO, PHASE_FINISHED, PHASE_STARTED. On
 * SQLite it is a range: the left-out types sort together, and `NOT IN` of three values is a lookup
 * in a temporary table for every row inserted (callgrind: a third of the index's cost).
 * PostgreSQL orders text by the database's collation, so it gets the list.
 */
export const TYPE_INDEX_CONDITION: Readonly<Record<Dialect, string>> = {
  sqlite: `(event_type < 'INFO' OR event_type > 'PHASE_STARTED')`,
  postgres: `event_type NOT IN ('INFO', 'PHASE_FINISHED', 'PHASE_STARTED')`,
};

/**
 * An entry of the full type index landed mid-index (after the run's other entries of its type,
 * before those of the next type), so every insert sought from the root and every full page was
 * split with its siblings: measured with callgrind, the index was 36% of the instructions of
 * storing an event. Indexing only the types looked up by type keeps the lookups and drops most of
 * that cost.
 */
const index = (dialect: Dialect) => `
DROP INDEX lattice_run_events_type;
CREATE INDEX lattice_run_events_type ON lattice_run_events (run_id, event_type) WHERE ${TYPE_INDEX_CONDITION[dialect]};
`;

export const m0140: Migration = {
  version: 140,
  name: "lattice event type index over the types looked up by type",
  up: { sqlite: index("sqlite"), postgres: index("postgres") },
};
