/**
 * Extension points of the supervisor. Actions (lattice-c), environment proposals, accepted
 * environment adjustments and the OA gate plug in here; each has a default that behaves sensibly
 * when nothing is plugged in.
 */
import type { Entry } from "../../blackboard/index.js";
import type { GateDecision, RunRecord, StoredEvent } from "../runs/index.js";

/** What a sink gets: the run as stored when the event was stored, and the stored event. */
export interface SinkContext {
  run: RunRecord;
  event: StoredEvent;
  /** True when reconciliation hands over an event again (the sink must be idempotent). */
  redelivery: boolean;
}

/**
 * Called once for every newly stored ACTION_REQUEST event, after it is committed; called again
 * for events not yet marked dispatched when a supervisor reconciles after a crash. The event is
 * marked dispatched when the returned promise resolves (with the outcome, if any, kept on the
 * event). A blocking action resumes the sprite with `Supervisor.resumeRun` once it has its result.
 */
export interface ActionSink {
  onActionRequest(ctx: SinkContext): Promise<Record<string, unknown> | void>;
  /**
   * Actions a reconciling supervisor must hand over again whatever the state of their run (its
   * event may be marked dispatched already): pending, cut off mid-attempt, or with their blocked
   * sprite not resumed. Identified by run and ACTION_REQUEST event.
   */
  orphaned?(projectId: string): Promise<Array<{ run_id: string; event_id: string }>>;
}

/** Called once for every newly stored ENVIRONMENT_PROPOSAL event (same delivery rules). */
export interface ProposalSink {
  onEnvironmentProposal(ctx: SinkContext): Promise<Record<string, unknown> | void>;
}

/** Accepted environment adjustments for a role, applied before its sprite starts. */
export interface EnvironmentAdjustments {
  /** Shell commands run in the workspace (sh -c, scrubbed environment) before the sprite; a failure fails the run. */
  preinstall: string[];
  /** Extra environment variables for the sprite (names that look secret are refused). */
  env: Record<string, string>;
  /** Directories put first on the sprite's PATH, after the run's shims (installed or selected tools). */
  path?: string[];
  /** The sandbox's network for this run, overriding the config's `sandbox_network`. */
  network?: "host" | "none";
}

export interface RunEnvironmentProvider {
  adjustmentsFor(role: string, context: { entry: Entry | null; runId: string }): Promise<EnvironmentAdjustments>;
}

/** Asked before a run starts. DENY: no run, the entry stays open; CONDITIONAL: run, conditions kept on the run. */
export interface RunGate {
  /** The decision, or null when the gate has nothing to judge (e.g. no OA surfaces in the project). */
  decide(request: { role: string; entry: Entry | null; command: string[] }): Promise<GateDecision | null>;
}

export interface SupervisorHooks {
  actions?: ActionSink;
  proposals?: ProposalSink;
  environment?: RunEnvironmentProvider;
  gate?: RunGate;
}

export const NO_ADJUSTMENTS: EnvironmentAdjustments = { preinstall: [], env: {} };

/** A gate made from a function (tests, OA's SafeOPSDecision wired by the integrator). */
export function gateFrom(fn: RunGate["decide"]): RunGate {
  return { decide: fn };
}
