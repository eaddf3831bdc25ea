/**
 * Reads of runs as they stood at a cutoff (`untilMs`): the runs of a window, their event counts,
 * events and resumes by then. Each query goes through an index (see the comments); RunStore
 * exposes them as its methods.
 */
import { inChunks, marks, type Store } from "../../store/index.js";
import type { RunEventAt, RunRecord, RunWindowFilter } from "./records.js";
import { iso, toRecord, type RunRow } from "./rows.js";
import { eventTypeFilter } from "./sql.js";
import { UNFINISHED_OR_WAITING } from "./states.js";

/**
 * Runs of these roles created by `untilMs` that had not finished before `sinceMs`: those not
 * finished yet, and those finished after `sinceMs` (two indexed queries, by state and by
 * finish time). Event counts are not included (see `eventCounts`).
 */
export async function overlapping(store: Store, projectId: string, filter: RunWindowFilter): Promise<RunRecord[]> {
  if (filter.roles.length === 0) return [];
  const roles = marks(filter.roles.length);
  // Roles are checked here, not in SQL: with `role IN (…)` SQLite walks every run of the roles
  // (lattice_runs_finished) instead of the few unfinished ones (lattice_runs_state).
  const wanted = new Set(filter.roles);
  const unfinished = (
    await store.all<RunRow>(
      `SELECT r.* FROM lattice_runs r WHERE r.project_id = ? AND r.state IN (${marks(UNFINISHED_OR_WAITING.length)}) AND r.created_ms <= ?`,
      [projectId, ...UNFINISHED_OR_WAITING, filter.untilMs],
    )
  ).filter((r) => wanted.has(r.role));
  const finished = await store.all<RunRow>(
    `SELECT r.* FROM lattice_runs r WHERE r.project_id = ? AND r.role IN (${roles}) AND r.finished_ms > ? AND r.created_ms <= ?`,
    [projectId, ...filter.roles, filter.sinceMs, filter.untilMs],
  );
  const byId = new Map([...unfinished, ...finished].map((r) => [r.id, r]));
  return [...byId.values()]
    .map(toRecord)
    .sort((a, b) => Date.parse(a.created_at) - Date.parse(b.created_at) || a.id.localeCompare(b.id));
}

/** The latest run (created by `untilMs`) of each of these entries, by the entry index. */
export async function latestOfEntries(
  store: Store,
  projectId: string,
  entryIds: readonly string[],
  untilMs: number,
): Promise<RunRecord[]> {
  const rows = await inChunks(entryIds, (ids) =>
    store.all<RunRow>(
      `SELECT r.* FROM lattice_runs r WHERE r.project_id = ? AND r.entry_id IN (${marks(ids.length)}) AND r.created_ms <= ?`,
      [projectId, ...ids, untilMs],
    ),
  );
  const latest = new Map<string, RunRow>();
  for (const r of rows) {
    const seen = latest.get(r.entry_id!);
    if (
      !seen ||
      Number(r.created_ms) > Number(seen.created_ms) ||
      (Number(r.created_ms) === Number(seen.created_ms) && r.id > seen.id)
    )
      latest.set(r.entry_id!, r);
  }
  return [...latest.values()].map(toRecord);
}

/** How many events each run had received by `untilMs`, counted in SQL (runs without any are absent). */
export async function eventCounts(
  store: Store,
  runIds: readonly string[],
  untilMs: number,
): Promise<Map<string, number>> {
  const rows = await inChunks(runIds, (ids) =>
    store.all<{ run_id: string; n: number | string }>(
      `SELECT run_id, COUNT(*) AS n FROM lattice_run_events WHERE run_id IN (${marks(ids.length)}) AND received_ms <= ? GROUP BY run_id`,
      [...ids, untilMs],
    ),
  );
  return new Map(rows.map((r) => [r.run_id, Number(r.n)]));
}

/** Events of these types received by `untilMs`, per run in arrival order (only those types are read). */
export async function eventsOfTypes(
  store: Store,
  runIds: readonly string[],
  types: readonly string[],
  untilMs: number,
): Promise<RunEventAt[]> {
  if (types.length === 0) return [];
  const byType = eventTypeFilter(store.dialect, types);
  const rows = await inChunks(runIds, (ids) =>
    store.all<{
      run_id: string;
      seq: number | string;
      event_type: string;
      event_json: string;
      received_ms: number | string;
    }>(
      `SELECT run_id, seq, event_type, event_json, received_ms FROM lattice_run_events
       WHERE run_id IN (${marks(ids.length)}) AND ${byType.sql} AND received_ms <= ? ORDER BY run_id, seq`,
      [...ids, ...byType.params, untilMs],
    ),
  );
  return rows.map((r) => ({
    run_id: r.run_id,
    seq: Number(r.seq),
    event_type: r.event_type,
    event: JSON.parse(r.event_json) as Record<string, unknown>,
    received_at: iso(Number(r.received_ms))!,
  }));
}

/** When each run was last resumed by `untilMs` (runs never resumed by then are absent). */
export async function lastResumes(
  store: Store,
  runIds: readonly string[],
  untilMs: number,
): Promise<Map<string, string>> {
  const rows = await inChunks(runIds, (ids) =>
    store.all<{ run_id: string; at_ms: number | string }>(
      `SELECT run_id, MAX(at_ms) AS at_ms FROM lattice_resumes WHERE run_id IN (${marks(ids.length)}) AND at_ms <= ? GROUP BY run_id`,
      [...ids, untilMs],
    ),
  );
  return new Map(rows.map((r) => [r.run_id, iso(Number(r.at_ms))!]));
}
