import type { Dialect } from "../../store/index.js";
import type { Migration } from "../../store/index.js";

/**
 * The types the event type index leaves out: the narration every run is mostly made of. The types
 * looked up by type (terminal events, waits, artifacts, actions, proposals) are indexed.
 */
export const UNINDEXED_EVENT_TYPES = ["INFO", "PHASE_FINISHED", "PHASE_STARTED"] as const;

/**
 * The index's condition, per dialect. A query uses the index only when its WHERE clause holds
 * this very term (SQLite does not derive it from `event_type IN (…)`), so lookups of indexed types
 * add it (see `eventTypeFilter` in the lattice module). On SQLite it is a range: the left-out types
 * sort together, and `NOT IN` of three values is a lookup in a temporary table for every row
 * inserted (callgrind: a third of the index's cost). PostgreSQL orders text by the database's
 * collation, so it gets the list.
 */
export const EVENT_TYPE_INDEX_TERM: Readonly<Record<Dialect, string>> = {
  sqlite: `(event_type < 'INFO' OR event_type > 'PHASE_STARTED')`,
  postgres: `event_type NOT IN (${UNINDEXED_EVENT_TYPES.map((t) => `'${t}'`).join(", ")})`,
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
CREATE INDEX lattice_run_events_type ON lattice_run_events (run_id, event_type) WHERE ${EVENT_TYPE_INDEX_TERM[dialect]};
`;

export const m0140: Migration = {
  version: 140,
  name: "lattice event type index over the types looked up by type",
  up: { sqlite: index("sqlite"), postgres: index("postgres") },
};
