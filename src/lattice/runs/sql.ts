import { type Dialect, marks } from "../../store/index.js";
import { EVENT_TYPE_INDEX_TERM, UNINDEXED_EVENT_TYPES } from "../migrations/index.js";

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
