/**
 * Runs as stored: one row per run in `lattice_runs`, its events once each in `lattice_run_events`
 * (identity = hash of the event's canonical JSON), its capped log, protocol errors, hard-rule
 * violations, resumes and gate decisions. Everything the CLI, API and Kai read about runs.
 * The record types are in records.ts, the row mapping in rows.ts, the reads as of a cutoff in window.ts.
 */
import { NotFoundError } from "../../core/index.js";
import * as queue from "./resume-queue.js";
import type { QueuedResume } from "./resume-queue.js";
import {
  Keyset,
  Where,
  limitClause,
  type Dialect,
  type Page,
  type PageRequest,
  type Queryable,
  type SqlParam,
  type Store,
} from "../../store/index.js";
import type {
  GateDecision,
  GateDecisionKind,
  NewRun,
  ProtocolErrorRecord,
  RunEventAt,
  RunListFilter,
  RunLogLine,
  RunPatch,
  RunCycle,
  RunRecord,
  RunWindowFilter,
  StoredEvent,
  ViolationRecord,
} from "./records.js";
import { RUN_COLUMNS, iso, num, toRecord, type RunRow } from "./rows.js";
import { notifyRunProgress } from "./progress.js";
import { eventTypeFilter } from "./sql.js";
import type { RunState } from "./states.js";
import * as asOf from "./window.js";
import { usageOfRuns } from "./usage-store.js";
import type { ModelUsage } from "./usage.js";

/** `where` narrowed to events of these types (see eventTypeFilter). */
function byTypes(dialect: Dialect, where: Where, types: readonly string[]): Where {
  const f = eventTypeFilter(dialect, types);
  return where.add(f.sql, ...f.params);
}

/** Runs in creation order (`created_ms, id`), oldest first unless asked newest. */
export const RUN_KEYS = new Keyset(
  "runs",
  [
    { sql: "r.created_ms", type: "number" },
    { sql: "r.id", type: "string" },
  ],
  "oldest",
);

/** A run's events in the order they were stored (`seq`), oldest first unless asked newest. */
export const EVENT_KEYS = new Keyset("events", [{ sql: "seq", type: "number" }], "oldest");

/** Reads and writes of run rows (a run's output, as ingest batches it, is written by RunOutputWriter). */
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
      [
        run.id,
        run.project_id,
        run.role,
        run.entry_id,
        run.sprite_id,
        run.work_item_id,
        JSON.stringify(run.command),
        run.workspace,
        run.checkpoint_dir,
        run.run_dir,
        run.worker,
        run.host,
        run.supervisor_pid,
        run.gate ? JSON.stringify(run.gate) : null,
        new Date(now).toISOString(),
        now,
        now,
      ],
    );
    return this.get(run.id);
  }

  /** `counted: false` skips counting the events (event_count 0): for the hot path. */
  async find(id: string, q: Queryable = this.store, counted = true): Promise<RunRecord | undefined> {
    const row = await q.get<RunRow>(
      `SELECT ${counted ? RUN_COLUMNS : "r.*"} FROM lattice_runs r WHERE r.id = ? AND r.project_id = ?`,
      [id, this.projectId],
    );
    return row ? toRecord(row) : undefined;
  }

  /**
   * The pull request an earlier run of the cycle on `branch` recorded, newest first. A scan of the
   * project's runs with a cycle (rare next to their events); an index would need a JSON column.
   */
  async cyclePullRequest(branch: string): Promise<{ number: number; url: string } | null> {
    const needle = `%${JSON.stringify({ branch }).slice(1, -1)}%`;
    const rows = await this.store.all<{ cycle_json: string }>(
      "SELECT cycle_json FROM lattice_runs WHERE project_id = ? AND cycle_json LIKE ? ORDER BY created_ms DESC",
      [this.projectId, needle],
    );
    for (const r of rows) {
      const cycle = JSON.parse(r.cycle_json) as RunCycle;
      if (cycle.branch === branch && cycle.pull_request) return cycle.pull_request;
    }
    return null;
  }

  async get(id: string, q: Queryable = this.store, counted = true): Promise<RunRecord> {
    const run = await this.find(id, q, counted);
    if (!run)
      throw new NotFoundError(
        "run_not_found",
        `run ${id} does not exist in project ${this.projectId} (see \`pmagent runs list\`)`,
        { run: id },
      );
    return run;
  }

  /** The run's reported token usage, per model (see usage.ts); empty when it reported none. */
  async usage(runId: string): Promise<ModelUsage[]> {
    return (await usageOfRuns(this.store, [runId])).get(runId) ?? [];
  }

  /** Several runs' usage, per run and model. */
  usageOf(runIds: readonly string[]): Promise<Map<string, ModelUsage[]>> {
    return usageOfRuns(this.store, runIds);
  }

  async list(filter: RunListFilter = {}): Promise<RunRecord[]> {
    const states = filter.state === undefined ? [] : Array.isArray(filter.state) ? filter.state : [filter.state];
    const where = new Where("r.project_id = ?", this.projectId)
      .in("r.state", states)
      .when("r.role = ?", filter.role)
      .when("r.entry_id = ?", filter.entryId);
    const limit = limitClause(filter.limit);
    const rows = await this.store.all<RunRow>(
      `SELECT ${RUN_COLUMNS} FROM lattice_runs r WHERE ${where} ORDER BY r.created_ms, r.id${limit}`,
      where.params,
    );
    return rows.map(toRecord);
  }

  /** One page of runs in creation order (oldest first by default), by cursor (see Keyset in store). */
  async page(filter: Omit<RunListFilter, "limit"> = {}, request: PageRequest = {}): Promise<Page<RunRecord>> {
    const states = filter.state === undefined ? [] : Array.isArray(filter.state) ? filter.state : [filter.state];
    const where = new Where("r.project_id = ?", this.projectId)
      .in("r.state", states)
      .when("r.role = ?", filter.role)
      .when("r.entry_id = ?", filter.entryId);
    const plan = RUN_KEYS.plan(where, request);
    const rows = await this.store.all<RunRow>(
      `SELECT ${RUN_COLUMNS} FROM lattice_runs r WHERE ${where}${plan.sql}`,
      where.params,
    );
    return RUN_KEYS.page(rows, plan, (r) => [r.created_ms, r.id], toRecord);
  }

  /** Runs of these roles whose life overlaps the span (see window.ts). */
  overlapping(filter: RunWindowFilter): Promise<RunRecord[]> {
    return asOf.overlapping(this.store, this.projectId, filter);
  }

  /** The latest run (created by `untilMs`) of each of these entries (see window.ts). */
  latestOfEntries(entryIds: readonly string[], untilMs: number): Promise<RunRecord[]> {
    return asOf.latestOfEntries(this.store, this.projectId, entryIds, untilMs);
  }

  /** How many events each run had received by `untilMs` (see window.ts). */
  eventCounts(runIds: readonly string[], untilMs: number): Promise<Map<string, number>> {
    return asOf.eventCounts(this.store, runIds, untilMs);
  }

  /** Events of these types received by `untilMs`, per run in arrival order (see window.ts). */
  eventsOfTypes(runIds: readonly string[], types: readonly string[], untilMs: number): Promise<RunEventAt[]> {
    return asOf.eventsOfTypes(this.store, runIds, types, untilMs);
  }

  /** When each run was last resumed by `untilMs` (see window.ts). */
  lastResumes(runIds: readonly string[], untilMs: number): Promise<Map<string, string>> {
    return asOf.lastResumes(this.store, runIds, untilMs);
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
    if (patch.cycle !== undefined) put("cycle_json", patch.cycle ? JSON.stringify(patch.cycle) : null);
    if (patch.exit_code !== undefined) put("exit_code", patch.exit_code);
    if (patch.exit_signal !== undefined) put("exit_signal", patch.exit_signal);
    if (patch.reason !== undefined) put("reason", patch.reason);
    if (patch.entry_synced !== undefined) put("entry_synced", patch.entry_synced ? 1 : 0);
    if (patch.worker !== undefined) put("worker", patch.worker);
    if (patch.finished) put("finished_ms", now);
    if (patch.place)
      for (const col of ["host", "workspace", "checkpoint_dir", "run_dir"] as const) put(col, patch.place[col]);
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
    if (r.changes !== 1) return false;
    await notifyRunProgress(q, id);
    return true;
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
  async events(
    runId: string,
    options: {
      type?: string;
      types?: readonly string[];
      afterSeq?: number;
      limit?: number;
      order?: "outbox" | "seq";
    } = {},
  ): Promise<StoredEvent[]> {
    await this.get(runId);
    if (options.types?.length === 0) return [];
    const where = new Where("run_id = ?", runId);
    if (options.type !== undefined) byTypes(this.store.dialect, where, [options.type]);
    if (options.types) byTypes(this.store.dialect, where, options.types);
    where.when("seq > ?", options.afterSeq);
    return this.eventRows(where, limitClause(options.limit), options.order ?? "outbox");
  }

  /** One page of a run's events in the order they were stored (`seq`; oldest first by default), by cursor. */
  async eventsPage(
    runId: string,
    options: { type?: string } = {},
    request: PageRequest = {},
  ): Promise<Page<StoredEvent>> {
    await this.get(runId, this.store, false);
    const where = new Where("run_id = ?", runId);
    if (options.type !== undefined) byTypes(this.store.dialect, where, [options.type]);
    const plan = EVENT_KEYS.plan(where, request);
    const rows = await this.store.all<EventRow>(
      `SELECT ${EVENT_COLUMNS} FROM lattice_run_events WHERE ${where}${plan.sql}`,
      where.params,
    );
    return EVENT_KEYS.page(rows, plan, (r) => [r.seq], toEvent);
  }

  private async eventRows(where: Where, limit: string, order: "outbox" | "seq" = "outbox"): Promise<StoredEvent[]> {
    const orderBy = order === "seq" ? "seq" : "CASE WHEN outbox_line IS NULL THEN 1 ELSE 0 END, outbox_line, seq";
    const rows = await this.store.all<EventRow>(
      `SELECT ${EVENT_COLUMNS} FROM lattice_run_events WHERE ${where} ORDER BY ${orderBy}${limit}`,
      where.params,
    );
    return rows.map(toEvent);
  }

  /** The attempt's last event (by seq) of these types, as stored. */
  async lastEventOfTypes(
    runId: string,
    attempt: number,
    types: readonly string[],
  ): Promise<{ event_id: string; event_type: string; event_json: string } | undefined> {
    const where = byTypes(this.store.dialect, new Where("run_id = ? AND attempt = ?", runId, attempt), types);
    return this.store.get(
      `SELECT event_id, event_type, event_json FROM lattice_run_events WHERE ${where} ORDER BY seq DESC LIMIT 1`,
      where.params,
    );
  }

  /** Record that `event` was handed to its sink (by its key in the run: one row, whatever the run's size). */
  async markDispatched(
    event: Pick<StoredEvent, "run_id" | "seq">,
    outcome: Record<string, unknown> | null = null,
  ): Promise<void> {
    await this.store.run(
      `UPDATE lattice_run_events SET dispatched_ms = ?, dispatch_json = ? WHERE run_id = ? AND seq = ?`,
      [this.clock(), outcome ? JSON.stringify(outcome) : null, event.run_id, event.seq],
    );
  }

  /** Events of these types not yet handed to their sink (reconciliation calls the sinks again); only those rows are read. */
  async undispatched(runId: string, types: readonly string[]): Promise<StoredEvent[]> {
    if (types.length === 0) return [];
    return this.eventRows(
      byTypes(this.store.dialect, new Where("run_id = ?", runId), types).add("dispatched_ms IS NULL"),
      "",
    );
  }

  /**
   * Undispatched events of these types in every run of the project, whatever the run's state (a
   * run may have finished right after asking for an action; its supervisor died before handing it over).
   */
  async undispatchedAll(types: readonly string[]): Promise<StoredEvent[]> {
    if (types.length === 0) return [];
    const f = eventTypeFilter(this.store.dialect, types);
    // Per run through the type index (run_id, event_type): the narration of big runs is not read.
    const where = new Where(`run_id IN (SELECT id FROM lattice_runs WHERE project_id = ?)`, this.projectId)
      .add(f.sql, ...f.params)
      .add("dispatched_ms IS NULL");
    return this.eventRows(where, "", "seq");
  }

  /** One event of a run by its id, looked up among the events of `type` (through the type index). */
  async eventById(runId: string, eventId: string, type: string): Promise<StoredEvent | undefined> {
    const where = byTypes(this.store.dialect, new Where("run_id = ?", runId), [type]).add("event_id = ?", eventId);
    return (await this.eventRows(where, " LIMIT 1", "seq"))[0];
  }

  async logs(
    runId: string,
    options: { stream?: string; afterSeq?: number; limit?: number } = {},
  ): Promise<RunLogLine[]> {
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
    return this.protocolRows(runId, "error");
  }

  /** Events stored as they are but worth telling the sprite's author about (an identity not the run's). */
  async protocolWarnings(runId: string): Promise<ProtocolErrorRecord[]> {
    return this.protocolRows(runId, "warning");
  }

  private async protocolRows(runId: string, severity: "error" | "warning"): Promise<ProtocolErrorRecord[]> {
    const rows = await this.store.all<{
      id: number;
      source: "stdout" | "outbox";
      line_no: number | null;
      reason: string;
      excerpt: string;
      at_ms: number;
    }>(
      `SELECT id, source, line_no, reason, excerpt, at_ms FROM lattice_protocol_errors WHERE run_id = ? AND severity = ? ORDER BY id`,
      [runId, severity],
    );
    return rows.map((r) => ({
      id: Number(r.id),
      source: r.source,
      line_no: num(r.line_no),
      reason: r.reason,
      excerpt: r.excerpt,
      at: iso(r.at_ms)!,
    }));
  }

  async violations(runId: string): Promise<ViolationRecord[]> {
    const rows = await this.store.all<{ line_no: number; rule: string; detail: string; at_ms: number }>(
      `SELECT line_no, rule, detail, at_ms FROM lattice_violations WHERE run_id = ? ORDER BY line_no`,
      [runId],
    );
    return rows.map((r) => ({ line_no: Number(r.line_no), rule: r.rule, detail: r.detail, at: iso(r.at_ms)! }));
  }

  async recordProtocolError(
    runId: string,
    error: Omit<ProtocolErrorRecord, "id" | "at">,
    q: Queryable = this.store,
  ): Promise<void> {
    await q.run(
      `INSERT INTO lattice_protocol_errors (run_id, source, line_no, reason, excerpt, at_ms) VALUES (?, ?, ?, ?, ?, ?)`,
      [runId, error.source, error.line_no, error.reason, error.excerpt, this.clock()],
    );
  }

  /** Record a resume; false when this exact resume (same key) was recorded before. */
  async recordResume(
    runId: string,
    key: string,
    checkpointId: string,
    attempt: number,
    q: Queryable = this.store,
  ): Promise<boolean> {
    const r = await q.run(
      `INSERT INTO lattice_resumes (run_id, resume_key, checkpoint_id, attempt, at_ms) VALUES (?, ?, ?, ?, ?) ON CONFLICT (run_id, resume_key) DO NOTHING`,
      [runId, key, checkpointId, attempt, this.clock()],
    );
    return r.changes === 1;
  }

  /** Leave a resume for any worker of `role`; false when one is queued for the run already. */
  queueResume(
    runId: string,
    role: string,
    inputs: Record<string, unknown>,
    context: Record<string, unknown>,
    q: Queryable = this.store,
  ): Promise<boolean> {
    return queue.queueResume(q, this.projectId, { run_id: runId, role, inputs, context, queued_ms: this.clock() });
  }

  queuedResumes(roles: readonly string[], limit: number): Promise<QueuedResume[]> {
    return queue.queuedResumes(this.store, this.projectId, roles, limit);
  }

  queuedResume(runId: string): Promise<QueuedResume | undefined> {
    return queue.queuedResume(this.store, this.projectId, runId);
  }

  dropQueuedResume(runId: string, q: Queryable = this.store): Promise<boolean> {
    return queue.dropQueuedResume(q, this.projectId, runId);
  }

  async hasResume(runId: string, key: string): Promise<boolean> {
    return (
      (await this.store.get(`SELECT 1 AS one FROM lattice_resumes WHERE run_id = ? AND resume_key = ?`, [
        runId,
        key,
      ])) !== undefined
    );
  }

  async recordGateDecision(
    entryId: string,
    entryVersion: number,
    role: string,
    d: GateDecision,
    runId: string | null,
  ): Promise<void> {
    await this.store.run(
      `INSERT INTO lattice_gate_decisions (project_id, entry_id, entry_version, role, decision, reasoning, conditions_json, run_id, at_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        this.projectId,
        entryId,
        entryVersion,
        role,
        d.decision,
        d.reasoning,
        JSON.stringify(d.conditions),
        runId,
        this.clock(),
      ],
    );
  }

  /** The latest gate decision about an entry, with the entry version it was made for. */
  async lastGateDecision(entryId: string): Promise<(GateDecision & { entry_version: number; at: string }) | undefined> {
    const row = await this.store.get<{
      decision: GateDecisionKind;
      reasoning: string;
      conditions_json: string;
      entry_version: number;
      at_ms: number;
    }>(
      `SELECT decision, reasoning, conditions_json, entry_version, at_ms FROM lattice_gate_decisions WHERE project_id = ? AND entry_id = ? ORDER BY id DESC LIMIT 1`,
      [this.projectId, entryId],
    );
    if (!row) return undefined;
    return {
      decision: row.decision,
      reasoning: row.reasoning,
      conditions: JSON.parse(row.conditions_json) as string[],
      entry_version: Number(row.entry_version),
      at: iso(row.at_ms)!,
    };
  }
}

const EVENT_COLUMNS =
  "run_id, seq, event_id, event_type, source, outbox_line, event_json, received_ms, dispatched_ms, dispatch_json";

interface EventRow {
  run_id: string;
  seq: number;
  event_id: string;
  event_type: string;
  source: "stdout" | "outbox";
  outbox_line: number | null;
  event_json: string;
  received_ms: number;
  dispatched_ms: number | null;
  dispatch_json: string | null;
}

function toEvent(r: EventRow): StoredEvent {
  return {
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
  };
}
