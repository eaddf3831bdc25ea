/**
 * Starting a run for an entry on a person's word: the entry claimed as a worker would claim it (the
 * gate asked first), then run. A run again (retry, or another agent) is a new run of the same
 * entry; an entry already finished (done, error and canceled are terminal) is re-opened as a new
 * entry with the same addressee, kind, payload and target documents, which the new run takes.
 */
import { isTerminal, type StoredEntry } from "../../blackboard/index.js";
import { findRole, type RoleConfig } from "../../config/index.js";
import { ConflictError, RefusedError, randomHex } from "../../core/index.js";
import { agentArgv } from "../agents/index.js";
import { isTerminalRunState, type RunRecord } from "../runs/index.js";
import type { Supervisor } from "./supervisor.js";

export interface ClaimedStart {
  /** Resolves with the run's id once it is recorded (rejects with `finished` when the start is refused). */
  recorded: Promise<string>;
  /** Settles when the run has finished here. */
  finished: Promise<RunRecord>;
}

/** A claimer name for a run a person started: `<actor>@<where>-<random>`. */
export function personalClaimer(actor: string, where: string): string {
  return `${actor}@${where}-${randomHex(3)}`;
}

/**
 * Ask the gate, claim `stored` for `role` as `worker` and start its run with `command` (default:
 * the role's runner). Refused when the gate denies, or when the entry is not open for the role.
 */
export async function claimAndStart(
  sup: Supervisor,
  o: { role: RoleConfig; stored: StoredEntry; worker: string; command?: string[] },
): Promise<ClaimedStart> {
  const { role, stored, worker } = o;
  const entryId = stored.entry.id;
  const command = o.command ?? agentArgv(sup.project.config, role, undefined) ?? [];
  // The gate is asked before the claim, as a worker asks it: a denied entry stays open, unclaimed.
  const decided = await sup.askGate(role.name, stored, command);
  if (decided?.decision === "DENY")
    throw new RefusedError(
      "run_denied",
      `the run gate denied a run of ${role.name} for entry ${entryId}: ${decided.reasoning || "no reason given"}`,
      { decision: decided },
    );
  const claimed = await sup.board.claim(worker, role.name, role.allowed_kinds, undefined, { entryId });
  if (!claimed) {
    throw new ConflictError(
      "entry_not_open",
      `entry ${entryId} is ${stored.entry.status}${stored.claimed_by ? ` (claimed by ${stored.claimed_by})` : ""}: only an open entry of a kind ${role.name} takes (${role.allowed_kinds.join(", ")}) can be started`,
      { entry: entryId },
    );
  }
  // A takeover of an entry whose lease expired: the previous claimer's run must not run on beside this one.
  await sup.fenceEntry(entryId, worker);
  let started!: (id: string) => void;
  const recorded = new Promise<string>((resolve) => (started = resolve));
  const finished = sup.startRun({
    role: role.name,
    entryId,
    worker,
    ...(o.command ? { command: o.command } : {}),
    onStarted: started,
    ...(decided ? { decided } : {}),
  });
  return { recorded: Promise.race([recorded, finished.then(() => recorded)]), finished };
}

export interface RerunOptions {
  /** Who asks (a re-opened entry is posted as them, from the original's writer). */
  actor: string;
  /** Another configured agent; default: the same command as the run had. */
  agent?: string;
  /** Where the claimer name says it comes from (`console`, `cli`). */
  where: string;
}

export interface Rerun extends ClaimedStart {
  entryId: string;
  /** The finished entry a new one was posted for, or null when the run's own entry was open again. */
  reopenedFrom: string | null;
}

/** Run a finished run's entry again: the same command (a retry) or another configured agent's. */
export async function rerun(sup: Supervisor, runId: string, o: RerunOptions): Promise<Rerun> {
  const humans = sup.project.config.humans;
  if (!humans.includes(o.actor))
    throw new RefusedError(
      "permission_refused",
      `${o.actor} may not run a run again: only a human (${humans.join(", ")}) may`,
      { actor: o.actor },
    );
  const prev = await sup.runs.get(runId);
  if (!isTerminalRunState(prev.state))
    throw new ConflictError(
      "run_not_finished",
      `run ${runId} is ${prev.state}: cancel it first (pmagent runs cancel ${runId}), then run it again`,
      { run: runId },
    );
  if (!prev.entry_id)
    throw new RefusedError(
      "run_without_entry",
      `run ${runId} ran without an entry: there is no entry to run again; start it with pmagent run --role ${prev.role}`,
      { run: runId },
    );
  const config = sup.project.config;
  const { role } = findRole(config, prev.role);
  const command = o.agent === undefined ? prev.command : agentArgv(config, role, o.agent);
  let stored = await sup.board.get(prev.entry_id);
  let reopenedFrom: string | null = null;
  if (isTerminal(stored.entry.status)) {
    const e = stored.entry;
    reopenedFrom = e.id;
    const input = {
      from: e.from,
      to: e.to,
      kind: e.kind,
      payload: e.payload,
      target_docs: e.target_docs,
      note: `re-opened from ${e.id} to run it again (run ${runId} was ${prev.state})`,
    };
    stored = (await sup.board.post(o.actor, input, `entry ${e.id} re-opened`)).stored;
  }
  const started = await claimAndStart(sup, {
    role,
    stored,
    worker: personalClaimer(o.actor, o.where),
    ...(command ? { command } : {}),
  });
  return { ...started, entryId: stored.entry.id, reopenedFrom };
}
