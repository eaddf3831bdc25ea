import { type Dialect, marks } from "../../store/index.js";

/**
 * The types the event type index leaves out (migration 140): the narration every run is mostly
 * made of. The types looked up by type (terminal events, waits, artifacts, actions, proposals)
 * are indexed.
 */
export const UNINDEXED_EVENT_TYPES = ["INFO", "PHASE_FINISHED", "PHASE_STARTED"] as const;

/**
 * The index's condition, per dialect, as migrations 140 and 150 created it (they keep their own
 * copy, as a migration must; test/lattice/runs/run-events-by-type.test.ts holds the index to it).
 * A query uses the index only when its WHERE clause holds this very term (SQLite does not derive
 * it from `event_type IN (…)`), so lookups of indexed types add it. On SQLite it is a range (the
 * left-out types sort together, and `NOT IN` of three values costs a temporary-table lookup per
 * inserted row); PostgreSQL orders text by the database's collation, so it gets the list.
 */
export const EVENT_TYPE_INDEX_TERM: Readonly<Record<Dialect, string>> = {
  sqlite: `(event_type < 'INFO' OR event_type > 'PHASE_STARTED')`,
  postgres: `event_type NOT IN (${UNINDEXED_EVENT_TYPES.map((t) => `'${t}'`).join(", ")})`,
};

/**
 * A JOIN of the stored event a row names (its run and event id, as SQL expressions), as `alias`
 * (its \`received_ms\` is when the supervisor stored it): for readers outside this sub-module, so
 * that only the runs sub-module names its tables.
 */
export function joinRunEvent(alias: string, runId: string, eventId: string): string {
  return `JOIN lattice_run_events ${alias} ON ${alias}.run_id = ${runId} AND ${alias}.event_id = ${eventId}`;
}

const UNINDEXED: ReadonlySet<string> = new Set(UNINDEXED_EVENT_TYPES);

/**
 * The SQL that picks a run's events of these types (`event_type IN (…)`, with its parameters):
 * with the type index's own condition added when every type asked for is indexed, so that only
 * those entries are read (see migration 140); otherwise the run's rows are read in order.
 */
export function eventTypeFilter(dialect: Dialect, types: readonly string[]): { sql: string; params: string[] } {
  const sql = `event_type IN (${marks(types.length)})`;
  return {
    sql: types.some((t) => UNINDEXED.has(t)) ? sql : `${sql} AND ${EVENT_TYPE_INDEX_TERM[dialect]}`,
    params: [...types],
  };
}
