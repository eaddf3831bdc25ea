/** A `lattice_runs` row as stored, and its mapping to a RunRecord. */
import type { GateDecision, RunCycle, RunRecord, RunWaiting } from "./records.js";
import type { RunState } from "./states.js";

export interface RunRow {
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
  cycle_json?: string | null;
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

export const iso = (ms: number | null | undefined) =>
  ms === null || ms === undefined ? null : new Date(Number(ms)).toISOString();
export const num = (v: number | null | undefined) => (v === null || v === undefined ? null : Number(v));

export function toRecord(r: RunRow): RunRecord {
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
    cycle: r.cycle_json ? (JSON.parse(r.cycle_json) as RunCycle) : null,
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

/** A run's columns with its event count (skipped on the hot path: see RunStore.find). */
export const RUN_COLUMNS = `r.*, (SELECT COUNT(*) FROM lattice_run_events e WHERE e.run_id = r.id) AS event_count`;
