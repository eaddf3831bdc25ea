/**
 * The runs collector: supervisor runs of a lane's roles as they stood at the window's end, read
 * through the lattice module's queries (runs, their events, actions, environment proposals and
 * the local forge's pull requests). Events are counted in SQL, never loaded; only the few event
 * types Kai shows (ARTIFACT, WAITING) are read.
 *
 * Which runs: those of the lane's roles created at or before the cutoff that had not finished
 * before the window started (still going, waiting, or finished inside the window or later), plus
 * the latest run, created by the cutoff, of each of the lane's blackboard entries read, so that
 * every step shows its run even when that run is older than the window. A run created after the
 * cutoff is absent.
 *
 * A run's state at the cutoff, as far as its records allow:
 * - finished at or before the cutoff: its final state, and `finished_at`;
 * - otherwise, unchanged since the cutoff: its state as stored (`starting` is reported `queued`);
 * - otherwise (it moved on after the cutoff): `waiting` when its last WAITING event received by
 *   the cutoff came after its last resume by then, else `running` — no `finished_at`.
 * A waiting run's checkpoint, expected inputs and `since` come from that WAITING event. Events,
 * artifacts, actions and proposal sightings count only when recorded by the cutoff. An action
 * changed after the cutoff is reported `pending` (it had been requested, its outcome came later);
 * an OPEN_PR shows its pull request only when it had succeeded by then, and a local-forge pull
 * request only once opened by then (its state is the stored one: the local forge keeps no history
 * of state changes). A proposal decided after the cutoff is `pending`, its count the sightings by then.
 */
import type { LaneConfig } from "../../config/light/index.js";
import type {
  ActionRecord,
  ActionStore,
  EnvironmentProposal,
  ProposalStore,
  RunEventAt,
  RunRecord,
  RunStore,
} from "../../lattice/index.js";
import type { LocalForge, LocalPullRequest } from "../../forge/index.js";
import type { RunEvidence, RunState, EvidenceWindow } from "./types.js";

/**
 * What the collector reads runs with (the lattice module's stores of one project). Only the runs
 * are read when the window holds none; the others are the one query each that Kai asks of them,
 * so the composition root can open their stores on that first question.
 */
export interface RunReaders {
  runs: RunStore;
  actions: Pick<ActionStore, "forRuns">;
  proposals: Pick<ProposalStore, "sightedIn">;
  /** The local forge, for the titles and states of the pull requests OPEN_PR opened there. */
  forge: Pick<LocalForge, "byNumbers"> | null;
}

const KAI_STATE: Record<RunRecord["state"], RunState> = {
  starting: "queued",
  running: "running",
  waiting: "waiting",
  succeeded: "succeeded",
  failed: "failed",
  canceled: "canceled",
};

const str = (v: unknown): string | null => (typeof v === "string" && v !== "" ? v : null);
const payloadOf = (e: RunEventAt): Record<string, unknown> =>
  e.event.payload !== null && typeof e.event.payload === "object" ? (e.event.payload as Record<string, unknown>) : {};

function artifactOf(e: RunEventAt): { path: string; kind: string } | null {
  const p = payloadOf(e);
  const meta = p.metadata !== null && typeof p.metadata === "object" ? (p.metadata as Record<string, unknown>) : {};
  const path = str(meta.path) ?? str(p.ref) ?? str(p.url);
  return path === null ? null : { path, kind: String(p.kind ?? "") };
}

function waitingOf(e: RunEventAt): NonNullable<RunEvidence["waiting"]> {
  const p = payloadOf(e);
  const expected =
    p.expected_inputs !== null && typeof p.expected_inputs === "object"
      ? (p.expected_inputs as Record<string, string>)
      : {};
  return { checkpoint: String(p.checkpoint_id ?? ""), expected_inputs: expected, since: e.received_at };
}

/** State, finish time and waiting details at `cut` (see the module comment for the rule). */
function stateAt(
  run: RunRecord,
  lastWaiting: RunEventAt | undefined,
  lastResume: string | undefined,
  cut: number,
): Pick<RunEvidence, "state" | "finished_at" | "waiting"> {
  if (run.finished_at !== null && Date.parse(run.finished_at) <= cut)
    return { state: KAI_STATE[run.state], finished_at: run.finished_at, waiting: null };
  const waitingThen =
    lastWaiting !== undefined &&
    (lastResume === undefined || Date.parse(lastResume) < Date.parse(lastWaiting.received_at));
  if (Date.parse(run.updated_at) <= cut) {
    const state = KAI_STATE[run.state];
    return { state, finished_at: null, waiting: state === "waiting" && lastWaiting ? waitingOf(lastWaiting) : null };
  }
  return waitingThen
    ? { state: "waiting", finished_at: null, waiting: waitingOf(lastWaiting!) }
    : { state: "running", finished_at: null, waiting: null };
}

function actionOf(a: ActionRecord, cut: number, pulls: Map<number, LocalPullRequest>): RunEvidence["actions"][number] {
  const settled = Date.parse(a.updated_at) <= cut;
  const status = settled ? a.state : "pending";
  const result = status === "succeeded" && a.action === "OPEN_PR" ? (a.result ?? {}) : {};
  const number = typeof result.number === "number" && Number.isInteger(result.number) ? result.number : null;
  const local = number !== null && result.forge === "local" ? pulls.get(number) : undefined;
  // A local pull request not opened by the cutoff (by its own record) is not shown.
  const pr = number !== null && (result.forge !== "local" || local !== undefined) ? number : null;
  return {
    id: a.idempotency_key,
    type: a.action,
    status,
    pr_number: pr,
    url: pr === null ? null : (local?.url ?? str(result.url)),
    title: pr === null ? null : (local?.title ?? str(a.parameters.title)),
    pr_state: pr === null ? null : (local?.state ?? null),
  };
}

function groupBy<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const item of items) {
    const list = out.get(key(item));
    if (list) list.push(item);
    else out.set(key(item), [item]);
  }
  return out;
}

function proposalSummary(p: EnvironmentProposal): string {
  const details = Object.entries(p.details).map(([k, v]) => `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`);
  return `${p.adjustment_type}${details.length > 0 ? ` (${details.join(", ")})` : ""} after ${p.observed_failure.phase} exited ${p.observed_failure.exit_code}`;
}

/** The lane's runs at the window's end, oldest first (see the module comment for which, and how). */
export async function collectRuns(
  readers: RunReaders,
  lane: LaneConfig,
  window: EvidenceWindow,
  entryIds: readonly string[],
  roleNames?: readonly string[],
): Promise<RunEvidence[]> {
  const cut = window.until.getTime();
  // The lane's roles by default; what_changed reads every configured role's (the project's runs).
  const roles = new Set([...lane.roles.map((r) => r.name), ...(roleNames ?? [])]);
  const [overlapping, ofEntries] = await Promise.all([
    readers.runs.overlapping({ roles: [...roles], sinceMs: window.since.getTime(), untilMs: cut }),
    readers.runs.latestOfEntries(entryIds, cut),
  ]);
  const byId = new Map([...overlapping, ...ofEntries].filter((r) => roles.has(r.role)).map((r) => [r.id, r]));
  const runs = [...byId.values()].sort(
    (a, b) => Date.parse(a.created_at) - Date.parse(b.created_at) || a.id.localeCompare(b.id),
  );
  if (runs.length === 0) return [];
  const ids = runs.map((r) => r.id);
  const [counts, events, resumes, actions, sightings, usage] = await Promise.all([
    readers.runs.eventCounts(ids, cut),
    readers.runs.eventsOfTypes(ids, ["ARTIFACT", "WAITING"], cut),
    readers.runs.lastResumes(ids, cut),
    readers.actions.forRuns(ids, cut),
    readers.proposals.sightedIn(ids, cut),
    readers.runs.usageOf(ids),
  ]);
  const localNumbers = actions.flatMap((a) =>
    a.action === "OPEN_PR" && a.result?.forge === "local" && typeof a.result.number === "number"
      ? [a.result.number]
      : [],
  );
  const pulls = new Map(
    (readers.forge && localNumbers.length > 0
      ? await readers.forge.byNumbers([...new Set(localNumbers)], cut)
      : []
    ).map((p) => [p.number, p]),
  );
  const eventsOf = groupBy(events, (e) => e.run_id);
  const actionsOf = groupBy(actions, (a) => a.run_id);
  const proposalsOf = groupBy(sightings, (s) => s.run_id);
  return runs.map((run) => {
    const own = eventsOf.get(run.id) ?? [];
    return {
      run_id: run.id,
      role: run.role,
      // A run started by hand for no entry belongs to no step, but counts among the role's runs.
      entry_id: run.entry_id ?? "",
      ...stateAt(run, own.filter((e) => e.event_type === "WAITING").at(-1), resumes.get(run.id), cut),
      started_at: run.created_at,
      artifacts: own.flatMap((e) => (e.event_type === "ARTIFACT" ? (artifactOf(e) ?? []) : [])),
      actions: (actionsOf.get(run.id) ?? []).map((a) => actionOf(a, cut, pulls)),
      events: counts.get(run.id) ?? 0,
      usage: usage.get(run.id) ?? [],
      cycle: run.cycle
        ? {
            branch: run.cycle.branch,
            commit: run.cycle.commit ?? null,
            pull_request: run.cycle.pull_request?.number ?? null,
            merged: run.cycle.merged ?? null,
          }
        : null,
      environment_proposals: (proposalsOf.get(run.id) ?? []).map(({ proposal: p }) => ({
        id: p.id,
        status: p.status,
        summary: proposalSummary(p),
        count: p.count,
      })),
    };
  });
}
