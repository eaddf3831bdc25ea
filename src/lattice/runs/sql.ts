import { type Dialect, EVENT_TYPE_INDEX_TERM, UNINDEXED_EVENT_TYPES } from "../../store/index.js";

/** IN lists stay well under SQLite's and PostgreSQL's parameter limits. */
const IN_CHUNK = 500;

/** Run `f` over `values` in chunks of at most 500 (one `IN (…)` query each) and concatenate the rows. */
export async function inChunks<T, R>(values: readonly T[], f: (chunk: T[]) => Promise<R[]>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < values.length; i += IN_CHUNK) out.push(...(await f(values.slice(i, i + IN_CHUNK))));
  return out;
}

/** `?, ?, …` for n parameters. */
export const marks = (n: number): string => Array.from({ length: n }, () => "?").join(", ");

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
