import { hostname } from "node:os";
import { Redactor, canonicalJson, randomHex } from "../../core/index.js";
import {
  Keyset,
  Where,
  inChunks,
  marks,
  type Page,
  type PageRequest,
  type Queryable,
  type SqlParam,
  type Store,
} from "../../store/index.js";
import type { ActionRecord, ActionRequest, ActionState } from "./types.js";

interface Row {
  idempotency_key: string;
  project_id: string;
  run_id: string;
  event_hash: string;
  role: string;
  work_item_id: string;
  action: string;
  parameters_json: string;
  blocking: number | string;
  state: ActionState;
  attempts: number | string;
  next_attempt_at: string;
  next_attempt_ms: number | string;
  owner: string | null;
  lease_expires_ms: number | string | null;
  result_json: string | null;
  error_json: string | null;
  resumed: number | string;
  created_at: string;
  updated_at: string;
}

export function idempotencyKey(runId: string, eventHash: string): string {
  return `${runId}:${eventHash}`;
}

/** A process-unique owner name; host and pid let a restarted supervisor see that an owner died. */
export function newOwner(): string {
  return `${hostname()}:${process.pid}:${randomHex(4)}`;
}

/** Whether the process named in `owner` is certainly gone (same host, pid not alive). */
export function ownerIsDead(owner: string): boolean {
  const [host, pid] = owner.split(":");
  if (host !== hostname() || !pid || !/^\d+$/.test(pid)) return false;
  if (Number(pid) === process.pid) return false;
  try {
    process.kill(Number(pid), 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "ESRCH";
  }
}

function toRecord(r: Row): ActionRecord {
  return {
    idempotency_key: r.idempotency_key,
    project_id: r.project_id,
    run_id: r.run_id,
    event_hash: r.event_hash,
    role: r.role,
    work_item_id: r.work_item_id,
    action: r.action,
    parameters: JSON.parse(r.parameters_json) as Record<string, unknown>,
    blocking: Number(r.blocking) === 1,
    state: r.state,
    attempts: Number(r.attempts),
    next_attempt_at: r.next_attempt_at,
    result: r.result_json === null ? null : (JSON.parse(r.result_json) as Record<string, unknown>),
    error: r.error_json === null ? null : (JSON.parse(r.error_json) as { code: string; message: string }),
    resumed: Number(r.resumed) === 1,
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

export interface Claim {
  record: ActionRecord;
  /** The previous attempt was cut off while running. */
  interrupted: boolean;
}

/**
 * Action rows. Every state change is a conditional UPDATE (compare-and-set on state and owner),
 * so two supervisors, or a supervisor and its restarted self, never both run one attempt.
 */
/** Actions in the order they were requested (`created_ms, idempotency_key`). */
export const ACTION_KEYS = new Keyset(
  "actions",
  [
    { sql: "created_ms", type: "number" },
    { sql: "idempotency_key", type: "string" },
  ],
  "oldest",
);

export class ActionStore {
  constructor(
    private readonly store: Store,
    private readonly redactor: Redactor = new Redactor(),
    private readonly clock: () => number = Date.now,
  ) {}

  private now(): [string, number] {
    const ms = this.clock();
    return [new Date(ms).toISOString(), ms];
  }

  /** Record a request (a second call with the same key changes nothing). Returns the stored row. */
  async record(request: ActionRequest): Promise<ActionRecord> {
    const key = idempotencyKey(request.runId, request.eventHash);
    const [at, ms] = this.now();
    // Parameters are stored redacted: a sprite that leaks a token into a request must not persist it.
    const params = canonicalJson(this.redactor.redactValue(request.parameters));
    await this.store.run(
      `INSERT INTO lattice_actions (idempotency_key, project_id, run_id, event_hash, role, work_item_id, action, parameters_json, blocking, state, attempts, next_attempt_at, next_attempt_ms, created_at, created_ms, updated_at, updated_ms)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', 0, ?, ?, ?, ?, ?, ?) ON CONFLICT (idempotency_key) DO NOTHING`,
      [
        key,
        request.projectId,
        request.runId,
        request.eventHash,
        request.role,
        request.workItemId,
        request.action,
        params,
        request.blocking ? 1 : 0,
        at,
        ms,
        at,
        ms,
        at,
        ms,
      ],
    );
    return (await this.get(key))!;
  }

  async get(key: string): Promise<ActionRecord | undefined> {
    const row = await this.store.get<Row>("SELECT * FROM lattice_actions WHERE idempotency_key = ?", [key]);
    return row ? toRecord(row) : undefined;
  }

  async list(filter: { projectId?: string; runId?: string; state?: ActionState } = {}): Promise<ActionRecord[]> {
    const where: string[] = [];
    const params: SqlParam[] = [];
    for (const [column, value] of [
      ["project_id", filter.projectId],
      ["run_id", filter.runId],
      ["state", filter.state],
    ] as const) {
      if (value === undefined) continue;
      where.push(`${column} = ?`);
      params.push(value);
    }
    const rows = await this.store.all<Row>(
      `SELECT * FROM lattice_actions${where.length ? ` WHERE ${where.join(" AND ")}` : ""} ORDER BY created_ms, idempotency_key`,
      params,
    );
    return rows.map(toRecord);
  }

  /** One page of a project's actions in the order they were requested (oldest first by default), by cursor. */
  async page(
    projectId: string,
    filter: { runId?: string; state?: ActionState } = {},
    request: PageRequest = {},
  ): Promise<Page<ActionRecord>> {
    const where = new Where("project_id = ?", projectId)
      .when("run_id = ?", filter.runId)
      .when("state = ?", filter.state);
    const plan = ACTION_KEYS.plan(where, request);
    const rows = await this.store.all<Row & { created_ms: number | string }>(
      `SELECT * FROM lattice_actions WHERE ${where}${plan.sql}`,
      where.params,
    );
    return ACTION_KEYS.page(rows, plan, (r) => [r.created_ms, r.idempotency_key], toRecord);
  }

  /** The actions of these runs recorded by `untilMs`, oldest first (by the run index). */
  async forRuns(runIds: readonly string[], untilMs: number): Promise<ActionRecord[]> {
    const rows = await inChunks(runIds, (ids) =>
      this.store.all<Row & { created_ms: number | string }>(
        `SELECT * FROM lattice_actions WHERE run_id IN (${marks(ids.length)}) AND created_ms <= ?`,
        [...ids, untilMs],
      ),
    );
    return rows
      .sort((a, b) => Number(a.created_ms) - Number(b.created_ms) || a.idempotency_key.localeCompare(b.idempotency_key))
      .map(toRecord);
  }

  /**
   * Take the action for one attempt: a due pending action, or a running one whose owner is gone
   * (lease expired, or a dead process on this host). Returns undefined when it is not ours to run.
   */
  async claim(key: string, owner: string, leaseMs: number): Promise<Claim | undefined> {
    return this.store.transaction(async (tx) => {
      const row = await tx.get<Row>(
        `SELECT * FROM lattice_actions WHERE idempotency_key = ?${tx.dialect === "postgres" ? " FOR UPDATE" : ""}`,
        [key],
      );
      if (!row) return undefined;
      const [at, ms] = this.now();
      let interrupted = false;
      if (row.state === "pending") {
        if (Number(row.next_attempt_ms) > ms) return undefined;
      } else if (row.state === "running") {
        const expired = row.lease_expires_ms !== null && Number(row.lease_expires_ms) <= ms;
        if (!expired && !(row.owner !== null && ownerIsDead(row.owner))) return undefined;
        interrupted = true;
      } else return undefined;
      await tx.run(
        "UPDATE lattice_actions SET state = 'running', owner = ?, lease_expires_ms = ?, attempts = attempts + 1, updated_at = ?, updated_ms = ? WHERE idempotency_key = ?",
        [owner, ms + leaseMs, at, ms, key],
      );
      return { record: toRecord({ ...row, state: "running", owner, attempts: Number(row.attempts) + 1 }), interrupted };
    });
  }

  /** Extend the lease of an attempt still running. */
  async heartbeat(key: string, owner: string, leaseMs: number): Promise<boolean> {
    const r = await this.store.run(
      "UPDATE lattice_actions SET lease_expires_ms = ? WHERE idempotency_key = ? AND state = 'running' AND owner = ?",
      [this.clock() + leaseMs, key, owner],
    );
    return r.changes === 1;
  }

  /** End an attempt; refused (false) when the attempt was taken over meanwhile. */
  async finish(
    key: string,
    owner: string,
    outcome:
      | { state: "succeeded"; result: Record<string, unknown> }
      | { state: "failed" | "unknown"; error: { code: string; message: string } }
      | { state: "pending"; error: { code: string; message: string }; retryAtMs: number },
    tx?: Queryable,
  ): Promise<boolean> {
    const [at, ms] = this.now();
    const q = tx ?? this.store;
    const result = outcome.state === "succeeded" ? canonicalJson(this.redactor.redactValue(outcome.result)) : null;
    const error = outcome.state === "succeeded" ? null : canonicalJson(this.redactor.redactValue(outcome.error));
    const retryMs = outcome.state === "pending" ? outcome.retryAtMs : ms;
    const r = await q.run(
      `UPDATE lattice_actions SET state = ?, result_json = ?, error_json = ?, owner = NULL, lease_expires_ms = NULL, next_attempt_at = ?, next_attempt_ms = ?, updated_at = ?, updated_ms = ?
       WHERE idempotency_key = ? AND state = 'running' AND owner = ?`,
      [outcome.state, result, error, new Date(retryMs).toISOString(), retryMs, at, ms, key, owner],
    );
    return r.changes === 1;
  }

  /** Record that the blocked sprite was resumed with the outcome. */
  async markResumed(key: string): Promise<void> {
    await this.store.run("UPDATE lattice_actions SET resumed = 1 WHERE idempotency_key = ?", [key]);
  }

  /**
   * What a restarted supervisor must carry on with: actions pending, running under an owner that
   * is gone (lease expired, or a dead process on this host), or finished with their blocked sprite
   * not resumed yet. An action a live owner is carrying out is left to it.
   */
  async orphaned(projectId: string): Promise<ActionRecord[]> {
    const ms = this.clock();
    const rows = await this.store.all<Row>(
      "SELECT * FROM lattice_actions WHERE project_id = ? AND (state IN ('pending', 'running') OR (blocking = 1 AND resumed = 0)) ORDER BY created_ms, idempotency_key",
      [projectId],
    );
    const live = (r: Row) =>
      r.state === "running" &&
      r.owner !== null &&
      !ownerIsDead(r.owner) &&
      (r.lease_expires_ms === null || Number(r.lease_expires_ms) > ms);
    return rows.filter((r) => !live(r)).map(toRecord);
  }

  /** Actions not finished, or finished but whose blocked sprite has not been resumed yet. */
  async unfinished(projectId: string): Promise<ActionRecord[]> {
    const rows = await this.store.all<Row>(
      "SELECT * FROM lattice_actions WHERE project_id = ? AND (state IN ('pending', 'running') OR (blocking = 1 AND resumed = 0)) ORDER BY created_ms, idempotency_key",
      [projectId],
    );
    return rows.map(toRecord);
  }
}
