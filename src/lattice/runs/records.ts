/** Runs and what they recorded, as the run store returns and takes them. */
import type { RunState } from "./states.js";

/** What a WAITING event asked for, kept on the run while it waits. */
export interface RunWaiting {
  event_id: string;
  reason: string;
  checkpoint_id: string;
  expected_inputs: Record<string, string>;
  /**
   * The sprite's HOME (an agent's session) as it was at the WAITING, kept beside the checkpoint
   * where checkpoints are shared, so a resume on another machine continues the same conversation.
   */
  home_checkpoint_id?: string;
  /**
   * What the supervisor holds for the person who resumes the run: the result of a blocking action
   * that did not itself satisfy `expected_inputs` (a PR_REVIEW after OPEN_PR). It is handed over in
   * the resume's `context`.
   */
  context?: Record<string, unknown>;
}

export type GateDecisionKind = "ALLOW" | "DENY" | "CONDITIONAL";

export interface GateDecision {
  decision: GateDecisionKind;
  reasoning: string;
  conditions: string[];
}

/**
 * A run's place in its lane cycle: the cycle's branch in the forge, the branch the cycle's pull
 * request goes to, the commit the run started from, and (once it succeeded) the commit it handed
 * on and the cycle's pull request.
 */
export interface RunCycle {
  /** The cycle's root request id. */
  id: string;
  branch: string;
  base: string;
  start: string;
  /** The branch's head after this run's work was committed onto it; null when the run changed nothing. */
  commit?: string | null;
  pull_request?: { number: number; url: string } | null;
  /** The base's commit when this run's approval merged the cycle's pull request (lane `merge_pull_request`). */
  merged?: string | null;
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
  /** The lane cycle the run works on (its branch), or null. */
  cycle: RunCycle | null;
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
  cycle?: RunCycle | null;
  exit_code?: number | null;
  exit_signal?: string | null;
  reason?: string | null;
  entry_synced?: boolean;
  worker?: string | null;
  finished?: boolean;
  /** A new attempt reads its own stdout/stderr files from the start. */
  resetStreams?: boolean;
  /** The run moved to another machine (a resume there). */
  place?: RunPlace;
}

/** Where a run lives: its machine and that machine's paths for it. */
export interface RunPlace {
  host: string;
  workspace: string;
  checkpoint_dir: string;
  run_dir: string;
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
