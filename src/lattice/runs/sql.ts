import { type Dialect, EVENT_TYPE_INDEX_TERM, UNINDEXED_EVENT_TYPES, marks } from "../../store/index.js";

const UNINDEXED: ReadonlySet<string> = new Set(UNINDEXED_EVENT_TYPES);

/**
 * The SQL that picks a run's events of these types (`event_type IN (…)`, with its parameters):
 * with the type index's own condition added when every type asked for is indexed, so that only
 * those entries are read (see migration 140); otherwise the run's rows are read in order.
 */
export function eventTypeFilter(dialect: Dialect, types: readonly string[]): { sql: string; params: string[] } {
  const sql = `event_type IN (${marks(types.length)})`;
  return { sql: types.some((t) => UNINDEXED.has(t)) ? sql : `${sql} AND ${EVENT_TYPE_INDEX_TERM[dialect]}`, params: [...types] };
}
