/**
 * Runs as stored: one row per run in `lattice_runs`, its events once each in `lattice_run_events`
 * (identity = hash of the event's canonical JSON), its capped log, protocol errors, hard-rule
 * violations, resumes and gate decisions. Everything the CLI, API and Kai read about runs.
 */
import { NotFoundError } from "../../core/index.js";
import { Where, limitClause, type Dialect, type Queryable, type SqlParam, type Store } from "../../store/index.js";
import { eventTypeFilter, inChunks, marks } from "./sql.js";

export const RUN_STATES = ["starting", "running", "waiting", "succeeded", "failed", "canceled"] as const;
export type RunState = (typeof RUN_STATES)[number];
export const TERMINAL_RUN_STATES: readonly RunState[] = ["succeeded", "failed", "canceled"];
export const UNFINISHED_RUN_STATES: readonly RunState[] = ["starting", "running"];
const UNFINISHED_OR_WAITING: readonly RunState[] = ["starting", "running", "waiting"];

/**
 * SQL condition on a `lattice_runs` row (unaliased): the run is not fenced. A worker's run is
 * fenced once another worker took its entry over: the other worker holds the entry's claim, or
 * has started a newer run of the entry (the claim is gone once that run finished the entry). The
 * claim and the run's generation are the fencing tokens; a `pmagent run` without a worker is never fenced.
 */
export const RUN_NOT_FENCED = `NOT EXISTS (SELECT 1 FROM bb_entries b WHERE b.project_id = lattice_runs.project_id AND b.id = lattice_runs.entry_id AND b.claimed_by IS NOT NULL AND b.claimed_by <> lattice_runs.worker)
  AND NOT EXISTS (SELECT 1 FROM lattice_runs n WHERE n.project_id = lattice_runs.project_id AND n.entry_id = lattice_runs.entry_id AND n.created_ms >= lattice_runs.created_ms AND n.id <> lattice_runs.id AND n.worker <> lattice_runs.worker)`;

export function isTerminalRunState(state: RunState): boolean {
  return TERMINAL_RUN_STATES.includes(state);
}

/** What a WAITING event asked for, kept on the run while it waits. */
export interface RunWaiting {
  event_id: string;
  reason: string;
  checkpoint_id: string;
  expected_inputs: Record<string, string>;
}

export type GateDecisionKind = "ALLOW" | "DENY" | "CONDITIONAL";

export interface GateDecision {
  decision: GateDecisionKind;
  reasoning: string;
  conditions: string[];
}

export interface RunRecord {
  id: string;
  project_id: string;
  role: string;
  entry_id: string | null;
  sprite_id: string;
  work_item_id: string;
  state: RunState;
  command: string[];
  workspace: string;
  checkpoint_dir: string;
  /** Supervisor-owned directory of the run (shims, home, violations), outside the workspace. */
  run_dir: string;
  /** The claim holder, when a worker claimed the entry. */
  worker: string | null;
  host: string;
  supervisor_pid: number | null;
  sprite_pid: number | null;
  /** Launches so far: 1 for the first, +1 per resume. */
  attempt: number;
  outbox: { offset: number; line_no: number };
  /** Bytes of the current attempt's stdout/stderr files already stored. */
  stdout_offset: number;
  stderr_offset: number;
  sprite_started: string | null;
  entry_synced: boolean;
  waiting: RunWaiting | null;
  gate: GateDecision | null;
  exit_code: number | null;
  exit_signal: string | null;
  /** Why the run failed or was canceled. */
  reason: string | null;
  log_bytes: number;
  log_truncated: boolean;
  event_count: number;
  created_at: string;
  updated_at: string;
  finished_at: string | null;
}

export interface StoredEvent {
  run_id: string;
  seq: number;
  /** sha256 of the event's canonical JSON. */
  id: string;
  event_type: string;
  /** Where the event was first seen. */
  source: "stdout" | "outbox";
  outbox_line: number | null;
  /** The event as stored (secrets redacted). */
  event: Record<string, unknown>;
  received_at: string;
  dispatched_at: string | null;
  dispatch: Record<string, unknown> | null;
}

export interface RunLogLine {
  seq: number;
  stream: "stdout" | "stderr" | "supervisor";
  text: string;
  at: string;
}

export interface ProtocolErrorRecord {
  id: number;
  source: "stdout" | "outbox";
  line_no: number | null;
  reason: string;
  excerpt: string;
  at: string;
}

export interface ViolationRecord {
  line_no: number;
  rule: string;
  detail: string;
  at: string;
}

export interface RunListFilter {
  state?: RunState | RunState[];
  role?: string;
  entryId?: string;
  limit?: number;
}

interface RunRow {
  id: string;
  project_id: string;
  role: string;
  entry_id: string | null;
  sprite_id: string;
  work_item_id: string;
  state: RunState;
  command_json: string;
  workspace: string;
  checkpoint_dir: string;
  run_dir: string;
  worker: string | null;
  host: string;
  supervisor_pid: number | null;
  sprite_pid: number | null;
  attempt: number;
  outbox_offset: number;
  outbox_line: number;
  stdout_offset: number;
  stderr_offset: number;
  sprite_started: string | null;
  entry_synced: number;
  waiting_json: string | null;
  gate_json: string | null;
  exit_code: number | null;
  exit_signal: string | null;
  reason: string | null;
  log_bytes: number;
  log_truncated: number;
  created_at: string;
  created_ms: number;
  updated_ms: number;
  finished_ms: number | null;
  event_count?: number;
}

const iso = (ms: number | null | undefined) => (ms === null || ms === undefined ? null : new Date(Number(ms)).toISOString());
const num = (v: number | null | undefined) => (v === null || v === undefined ? null : Number(v));

function toRecord(r: RunRow): RunRecord {
  return {
    id: r.id,
    project_id: r.project_id,
    role: r.role,
    entry_id: r.entry_id,
    sprite_id: r.sprite_id,
    work_item_id: r.work_item_id,
    state: r.state,
    command: JSON.parse(r.command_json) as string[],
    workspace: r.workspace,
    checkpoint_dir: r.checkpoint_dir,
    run_dir: r.run_dir,
    worker: r.worker,
    host: r.host,
    supervisor_pid: num(r.supervisor_pid),
    sprite_pid: num(r.sprite_pid),
    attempt: Number(r.attempt),
    outbox: { offset: Number(r.outbox_offset), line_no: Number(r.outbox_line) },
    stdout_offset: Number(r.stdout_offset),
    stderr_offset: Number(r.stderr_offset),
    sprite_started: r.sprite_started,
    entry_synced: Number(r.entry_synced) === 1,
    waiting: r.waiting_json ? (JSON.parse(r.waiting_json) as RunWaiting) : null,
    gate: r.gate_json ? (JSON.parse(r.gate_json) as GateDecision) : null,
    exit_code: num(r.exit_code),
    exit_signal: r.exit_signal,
    reason: r.reason,
    log_bytes: Number(r.log_bytes),
    log_truncated: Number(r.log_truncated) === 1,
    event_count: Number(r.event_count ?? 0),
    created_at: r.created_at,
    updated_at: iso(r.updated_ms)!,
    finished_at: iso(r.finished_ms),
  };
}

/** `where` narrowed to events of these types (see eventTypeFilter). */
function byTypes(dialect: Dialect, where: Where, types: readonly string[]): Where {
  const f = eventTypeFilter(dialect, types);
  return where.add(f.sql, ...f.params);
}

const RUN_COLUMNS = `r.*, (SELECT COUNT(*) FROM lattice_run_events e WHERE e.run_id = r.id) AS event_count`;

export interface NewRun {
  id: string;
  project_id: string;
  role: string;
  entry_id: string | null;
  sprite_id: string;
  work_item_id: string;
  command: string[];
  workspace: string;
  checkpoint_dir: string;
  run_dir: string;
  worker: string | null;
  host: string;
  supervisor_pid: number;
  gate: GateDecision | null;
}

/** Field changes of a run; `state` moves are guarded by `from` so a canceled run stays canceled. */
export interface RunPatch {
  state?: RunState;
  supervisor_pid?: number | null;
  sprite_pid?: number | null;
  sprite_started?: string | null;
  attempt?: number;
  waiting?: RunWaiting | null;
  exit_code?: number | null;
  exit_signal?: string | null;
  reason?: string | null;
  entry_synced?: boolean;
  worker?: string | null;
  finished?: boolean;
  /** A new attempt reads its own stdout/stderr files from the start. */
  resetStreams?: boolean;
}

/** Runs of some roles whose life overlaps a time span, for reading runs as they stood at `untilMs`. */
export interface RunWindowFilter {
  roles: readonly string[];
  sinceMs: number;
  untilMs: number;
}

/** An event as of a cutoff, without its dispatch bookkeeping. */
export interface RunEventAt {
  run_id: string;
  seq: number;
  event_type: string;
  event: Record<string, unknown>;
  received_at: string;
}

/** Reads and writes of run rows (the ingest path writes events itself, in batches). */
export class RunStore {
  constructor(
    readonly store: Store,
    readonly projectId: string,
    private readonly clock: () => number = Date.now,
  ) {}

  async create(run: NewRun): Promise<RunRecord> {
    const now = this.clock();
    await this.store.run(
      `INSERT INTO lattice_runs (id, project_id, role, entry_id, sprite_id, work_item_id, state, command_json, workspace, checkpoint_dir, run_dir, worker, host,
         supervisor_pid, sprite_pid, sprite_started, attempt, outbox_offset, outbox_line, stdout_offset, stderr_offset, waiting_json, gate_json, exit_code, exit_signal, reason, log_bytes,
         log_truncated, entry_synced, created_at, created_ms, updated_ms, finished_ms)
       VALUES (?, ?, ?, ?, ?, ?, 'starting', ?, ?, ?, ?, ?, ?, ?, NULL, NULL, 1, 0, 1, 0, 0, NULL, ?, NULL, NULL, NULL, 0, 0, 0, ?, ?, ?, NULL)`,
      [run.id, run.project_id, run.role, run.entry_id, run.sprite_id, run.work_item_id, JSON.stringify(run.command), run.workspace, run.checkpoint_dir, run.run_dir,
        run.worker, run.host, run.supervisor_pid, run.gate ? JSON.stringify(run.gate) : null, new Date(now).toISOString(), now, now],
    );
    return this.get(run.id);
  }

  /** `counted: false` skips counting the events (event_count 0): for the hot path. */
  async find(id: string, q: Queryable = this.store, counted = true): Promise<RunRecord | undefined> {
    const row = await q.get<RunRow>(`SELECT ${counted ? RUN_COLUMNS : "r.*"} FROM lattice_runs r WHERE r.id = ? AND r.project_id = ?`, [id, this.projectId]);
    return row ? toRecord(row) : undefined;
  }

  async get(id: string, q: Queryable = this.store, counted = true): Promise<RunRecord> {
    const run = await this.find(id, q, counted);
    if (!run) throw new NotFoundError("run_not_found", `run ${id} does not exist in project ${this.projectId} (see \`pmagent runs list\`)`, { run: id });
    return run;
  }

  async list(filter: RunListFilter = {}): Promise<RunRecord[]> {
    const states = filter.state === undefined ? [] : Array.isArray(filter.state) ? filter.state : [filter.state];
    const where = new Where("r.project_id = ?", this.projectId).in("r.state", states).when("r.role = ?", filter.role).when("r.entry_id = ?", filter.entryId);
    const limit = limitClause(filter.limit);
    const rows = await this.store.all<RunRow>(`SELECT ${RUN_COLUMNS} FROM lattice_runs r WHERE ${where} ORDER BY r.created_ms, r.id${limit}`, where.params);
    return rows.map(toRecord);
  }

  /**
   * Runs of these roles created by `untilMs` that had not finished before `sinceMs`: those not
   * finished yet, and those finished after `sinceMs` (two indexed queries, by state and by
   * finish time). Event counts are not included (see `eventCounts`).
   */
  async overlapping(filter: RunWindowFilter): Promise<RunRecord[]> {
    if (filter.roles.length === 0) return [];
    const roles = marks(filter.roles.length);
    // Roles are checked here, not in SQL: with `role IN (…)` SQLite walks every run of the roles
    // (lattice_runs_finished) instead of the few unfinished ones (lattice_runs_state).
    const wanted = new Set(filter.roles);
    const unfinished = (
      await this.store.all<RunRow>(`SELECT r.* FROM lattice_runs r WHERE r.project_id = ? AND r.state IN (${marks(UNFINISHED_OR_WAITING.length)}) AND r.created_ms <= ?`, [
        this.projectId,
        ...UNFINISHED_OR_WAITING,
        filter.untilMs,
      ])
    ).filter((r) => wanted.has(r.role));
    const finished = await this.store.all<RunRow>(
      `SELECT r.* FROM lattice_runs r WHERE r.project_id = ? AND r.role IN (${roles}) AND r.finished_ms > ? AND r.created_ms <= ?`,
      [this.projectId, ...filter.roles, filter.sinceMs, filter.untilMs],
    );
    const byId = new Map([...unfinished, ...finished].map((r) => [r.id, r]));
    return [...byId.values()].map(toRecord).sort((a, b) => Date.parse(a.created_at) - Date.parse(b.created_at) || a.id.localeCompare(b.id));
  }

  /** The latest run (created by `untilMs`) of each of these entries, by the entry index. */
  async latestOfEntries(entryIds: readonly string[], untilMs: number): Promise<RunRecord[]> {
    const rows = await inChunks(entryIds, (ids) =>
      this.store.all<RunRow>(`SELECT r.* FROM lattice_runs r WHERE r.project_id = ? AND r.entry_id IN (${marks(ids.length)}) AND r.created_ms <= ?`, [this.projectId, ...ids, untilMs]),
    );
    const latest = new Map<string, RunRow>();
    for (const r of rows) {
      const seen = latest.get(r.entry_id!);
      if (!seen || Number(r.created_ms) > Number(seen.created_ms) || (Number(r.created_ms) === Number(seen.created_ms) && r.id > seen.id)) latest.set(r.entry_id!, r);
    }
    return [...latest.values()].map(toRecord);
  }

  /** How many events each run had received by `untilMs`, counted in SQL (runs without any are absent). */
  async eventCounts(runIds: readonly string[], untilMs: number): Promise<Map<string, number>> {
    const rows = await inChunks(runIds, (ids) =>
      this.store.all<{ run_id: string; n: number | string }>(
        `SELECT run_id, COUNT(*) AS n FROM lattice_run_events WHERE run_id IN (${marks(ids.length)}) AND received_ms <= ? GROUP BY run_id`,
        [...ids, untilMs],
      ),
    );
    return new Map(rows.map((r) => [r.run_id, Number(r.n)]));
  }

  /** Events of these types received by `untilMs`, per run in arrival order (only those types are read). */
  async eventsOfTypes(runIds: readonly string[], types: readonly string[], untilMs: number): Promise<RunEventAt[]> {
    if (types.length === 0) return [];
    const byType = eventTypeFilter(this.store.dialect, types);
    const rows = await inChunks(runIds, (ids) =>
      this.store.all<{ run_id: string; seq: number | string; event_type: string; event_json: string; received_ms: number | string }>(
        `SELECT run_id, seq, event_type, event_json, received_ms FROM lattice_run_events
         WHERE run_id IN (${marks(ids.length)}) AND ${byType.sql} AND received_ms <= ? ORDER BY run_id, seq`,
        [...ids, ...byType.params, untilMs],
      ),
    );
    return rows.map((r) => ({ run_id: r.run_id, seq: Number(r.seq), event_type: r.event_type, event: JSON.parse(r.event_json) as Record<string, unknown>, received_at: iso(Number(r.received_ms))! }));
  }

  /** When each run was last resumed by `untilMs` (runs never resumed by then are absent). */
  async lastResumes(runIds: readonly string[], untilMs: number): Promise<Map<string, string>> {
    const rows = await inChunks(runIds, (ids) =>
      this.store.all<{ run_id: string; at_ms: number | string }>(
        `SELECT run_id, MAX(at_ms) AS at_ms FROM lattice_resumes WHERE run_id IN (${marks(ids.length)}) AND at_ms <= ? GROUP BY run_id`,
        [...ids, untilMs],
      ),
    );
    return new Map(rows.map((r) => [r.run_id, iso(Number(r.at_ms))!]));
  }

  /**
   * Apply a patch; with `from`, only while the run is in one of those states (returns false when
   * it is not, e.g. a cancel got there first).
   */
  async update(id: string, patch: RunPatch, from?: readonly RunState[], q: Queryable = this.store): Promise<boolean> {
    const sets: string[] = ["updated_ms = ?"];
    const now = this.clock();
    const params: SqlParam[] = [now];
    const put = (col: string, v: SqlParam) => {
      sets.push(`${col} = ?`);
      params.push(v);
    };
    if (patch.state !== undefined) put("state", patch.state);
    if (patch.supervisor_pid !== undefined) put("supervisor_pid", patch.supervisor_pid);
    if (patch.sprite_pid !== undefined) put("sprite_pid", patch.sprite_pid);
    if (patch.sprite_started !== undefined) put("sprite_started", patch.sprite_started);
    if (patch.attempt !== undefined) put("attempt", patch.attempt);
    if (patch.waiting !== undefined) put("waiting_json", patch.waiting ? JSON.stringify(patch.waiting) : null);
    if (patch.exit_code !== undefined) put("exit_code", patch.exit_code);
    if (patch.exit_signal !== undefined) put("exit_signal", patch.exit_signal);
    if (patch.reason !== undefined) put("reason", patch.reason);
    if (patch.entry_synced !== undefined) put("entry_synced", patch.entry_synced ? 1 : 0);
    if (patch.worker !== undefined) put("worker", patch.worker);
    if (patch.finished) put("finished_ms", now);
    if (patch.resetStreams) {
      put("stdout_offset", 0);
      put("stderr_offset", 0);
    }
    params.push(id, this.projectId);
    let guard = "";
    if (from && from.length > 0) {
      guard = ` AND state IN (${from.map(() => "?").join(", ")})`;
      params.push(...from);
    }
    const r = await q.run(`UPDATE lattice_runs SET ${sets.join(", ")} WHERE id = ? AND project_id = ?${guard}`, params);
    return r.changes === 1;
  }

  /** Runs whose terminal entry change (done/error/next entry) has not been made yet. */
  async unsynced(): Promise<RunRecord[]> {
    const rows = await this.store.all<RunRow>(
      `SELECT ${RUN_COLUMNS} FROM lattice_runs r WHERE r.project_id = ? AND r.entry_synced = 0 AND r.entry_id IS NOT NULL AND r.state IN ('succeeded', 'failed', 'canceled') ORDER BY r.created_ms`,
      [this.projectId],
    );
    return rows.map(toRecord);
  }

  /**
   * A run's events in outbox order (the order the sprite wrote them; events only stdout saw follow,
   * in arrival order), or with `order: "seq"` in the order they were stored — the order to page in
   * with `afterSeq`. `types` reads only those (from the type index, not the whole run).
   */
  async events(runId: string, options: { type?: string; types?: readonly string[]; afterSeq?: number; limit?: number; order?: "outbox" | "seq" } = {}): Promise<StoredEvent[]> {
    await this.get(runId);
    if (options.types?.length === 0) return [];
    const where = new Where("run_id = ?", runId);
    if (options.type !== undefined) byTypes(this.store.dialect, where, [options.type]);
    if (options.types) byTypes(this.store.dialect, where, options.types);
    where.when("seq > ?", options.afterSeq);
    return this.eventRows(where, limitClause(options.limit), options.order ?? "outbox");
  }

  private async eventRows(where: Where, limit: string, order: "outbox" | "seq" = "outbox"): Promise<StoredEvent[]> {
    const orderBy = order === "seq" ? "seq" : "CASE WHEN outbox_line IS NULL THEN 1 ELSE 0 END, outbox_line, seq";
    const rows = await this.store.all<{ run_id: string; seq: number; event_id: string; event_type: string; source: "stdout" | "outbox"; outbox_line: number | null; event_json: string; received_ms: number; dispatched_ms: number | null; dispatch_json: string | null }>(
      `SELECT run_id, seq, event_id, event_type, source, outbox_line, event_json, received_ms, dispatched_ms, dispatch_json FROM lattice_run_events
       WHERE ${where} ORDER BY ${orderBy}${limit}`,
      where.params,
    );
    return rows.map((r) => ({
      run_id: r.run_id,
      seq: Number(r.seq),
      id: r.event_id,
      event_type: r.event_type,
      source: r.source,
      outbox_line: num(r.outbox_line),
      event: JSON.parse(r.event_json) as Record<string, unknown>,
      received_at: iso(r.received_ms)!,
      dispatched_at: iso(r.dispatched_ms),
      dispatch: r.dispatch_json ? (JSON.parse(r.dispatch_json) as Record<string, unknown>) : null,
    }));
  }

  /** The attempt's last event (by seq) of these types, as stored. */
  async lastEventOfTypes(runId: string, attempt: number, types: readonly string[]): Promise<{ event_id: string; event_type: string; event_json: string } | undefined> {
    const where = byTypes(this.store.dialect, new Where("run_id = ? AND attempt = ?", runId, attempt), types);
    return this.store.get(`SELECT event_id, event_type, event_json FROM lattice_run_events WHERE ${where} ORDER BY seq DESC LIMIT 1`, where.params);
  }

  /** Record that `event` was handed to its sink (by its key in the run: one row, whatever the run's size). */
  async markDispatched(event: Pick<StoredEvent, "run_id" | "seq">, outcome: Record<string, unknown> | null = null): Promise<void> {
    await this.store.run(`UPDATE lattice_run_events SET dispatched_ms = ?, dispatch_json = ? WHERE run_id = ? AND seq = ?`, [
      this.clock(),
      outcome ? JSON.stringify(outcome) : null,
      event.run_id,
      event.seq,
    ]);
  }

  /** Events of these types not yet handed to their sink (reconciliation calls the sinks again); only those rows are read. */
  async undispatched(runId: string, types: readonly string[]): Promise<StoredEvent[]> {
    if (types.length === 0) return [];
    return this.eventRows(byTypes(this.store.dialect, new Where("run_id = ?", runId), types).add("dispatched_ms IS NULL"), "");
  }

  /**
   * Undispatched events of these types in every run of the project, whatever the run's state (a
   * run may have finished right after asking for an action; its supervisor died before handing it over).
   */
  async undispatchedAll(types: readonly string[]): Promise<StoredEvent[]> {
    if (types.length === 0) return [];
    const f = eventTypeFilter(this.store.dialect, types);
    // Per run through the type index (run_id, event_type): the narration of big runs is not read.
    const where = new Where(`run_id IN (SELECT id FROM lattice_runs WHERE project_id = ?)`, this.projectId).add(f.sql, ...f.params).add("dispatched_ms IS NULL");
    return this.eventRows(where, "", "seq");
  }

  /** One event of a run by its id, looked up among the events of `type` (through the type index). */
  async eventById(runId: string, eventId: string, type: string): Promise<StoredEvent | undefined> {
    const where = byTypes(this.store.dialect, new Where("run_id = ?", runId), [type]).add("event_id = ?", eventId);
    return (await this.eventRows(where, " LIMIT 1", "seq"))[0];
  }

  async logs(runId: string, options: { stream?: string; afterSeq?: number; limit?: number } = {}): Promise<RunLogLine[]> {
    await this.get(runId);
    const where = new Where("run_id = ?", runId).when("stream = ?", options.stream).when("seq > ?", options.afterSeq);
    const limit = limitClause(options.limit);
    const rows = await this.store.all<{ seq: number; stream: RunLogLine["stream"]; text: string; at_ms: number }>(
      `SELECT seq, stream, text, at_ms FROM lattice_run_logs WHERE ${where} ORDER BY seq${limit}`,
      where.params,
    );
    return rows.map((r) => ({ seq: Number(r.seq), stream: r.stream, text: r.text, at: iso(r.at_ms)! }));
  }

  async protocolErrors(runId: string): Promise<ProtocolErrorRecord[]> {
    const rows = await this.store.all<{ id: number; source: "stdout" | "outbox"; line_no: number | null; reason: string; excerpt: string; at_ms: number }>(
      `SELECT id, source, line_no, reason, excerpt, at_ms FROM lattice_protocol_errors WHERE run_id = ? ORDER BY id`,
      [runId],
    );
    return rows.map((r) => ({ id: Number(r.id), source: r.source, line_no: num(r.line_no), reason: r.reason, excerpt: r.excerpt, at: iso(r.at_ms)! }));
  }

  async violations(runId: string): Promise<ViolationRecord[]> {
    const rows = await this.store.all<{ line_no: number; rule: string; detail: string; at_ms: number }>(
      `SELECT line_no, rule, detail, at_ms FROM lattice_violations WHERE run_id = ? ORDER BY line_no`,
      [runId],
    );
    return rows.map((r) => ({ line_no: Number(r.line_no), rule: r.rule, detail: r.detail, at: iso(r.at_ms)! }));
  }

  async recordProtocolError(runId: string, source: "stdout" | "outbox", lineNo: number | null, reason: string, excerpt: string, q: Queryable = this.store): Promise<void> {
    await q.run(`INSERT INTO lattice_protocol_errors (run_id, source, line_no, reason, excerpt, at_ms) VALUES (?, ?, ?, ?, ?, ?)`, [runId, source, lineNo, reason, excerpt, this.clock()]);
  }

  /** Record a resume; false when this exact resume (same key) was recorded before. */
  async recordResume(runId: string, key: string, checkpointId: string, attempt: number, q: Queryable = this.store): Promise<boolean> {
    const r = await q.run(
      `INSERT INTO lattice_resumes (run_id, resume_key, checkpoint_id, attempt, at_ms) VALUES (?, ?, ?, ?, ?) ON CONFLICT (run_id, resume_key) DO NOTHING`,
      [runId, key, checkpointId, attempt, this.clock()],
    );
    return r.changes === 1;
  }

  async hasResume(runId: string, key: string): Promise<boolean> {
    return (await this.store.get(`SELECT 1 AS one FROM lattice_resumes WHERE run_id = ? AND resume_key = ?`, [runId, key])) !== undefined;
  }

  async recordGateDecision(entryId: string, entryVersion: number, role: string, d: GateDecision, runId: string | null): Promise<void> {
    await this.store.run(
      `INSERT INTO lattice_gate_decisions (project_id, entry_id, entry_version, role, decision, reasoning, conditions_json, run_id, at_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [this.projectId, entryId, entryVersion, role, d.decision, d.reasoning, JSON.stringify(d.conditions), runId, this.clock()],
    );
  }

  /** The latest gate decision about an entry, with the entry version it was made for. */
  async lastGateDecision(entryId: string): Promise<(GateDecision & { entry_version: number; at: string }) | undefined> {
    const row = await this.store.get<{ decision: GateDecisionKind; reasoning: string; conditions_json: string; entry_version: number; at_ms: number }>(
      `SELECT decision, reasoning, conditions_json, entry_version, at_ms FROM lattice_gate_decisions WHERE project_id = ? AND entry_id = ? ORDER BY id DESC LIMIT 1`,
      [this.projectId, entryId],
    );
    if (!row) return undefined;
    return { decision: row.decision, reasoning: row.reasoning, conditions: JSON.parse(row.conditions_json) as string[], entry_version: Number(row.entry_version), at: iso(row.at_ms)! };
  }
}
