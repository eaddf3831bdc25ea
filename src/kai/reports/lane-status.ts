import type { LaneConfig } from "../../config/light/index.js";
import type { PriceTable } from "../../lattice/runs/index.js";
import { laneUsage } from "./usage.js";
import { UTC, type Zone } from "./zone.js";
import {
  entryLinks,
  type BoardEntryEvidence,
  type GitCommit,
  type GithubEvidence,
  type KaiEvidence,
  type RunEvidence,
  type RepoCycle,
  stateView,
  type StateView,
} from "../evidence/index.js";
import { laneCycles, latestRunByEntry, type Cycle } from "./cycles.js";
import type { Evidence, LaneStatus, Step, StepStatus, SuggestedAction } from "./schema.js";

export interface LaneContext {
  project_id: string;
  lane: LaneConfig;
  humans: string[];
  as_of: Date;
  /** The config's price table, for the lane's usage (absent: no cost). */
  prices?: PriceTable;
  /** The zone the usage's days are counted in (default UTC). */
  zone?: Zone;
}

const ENTRY_STEP_STATUS: Record<string, StepStatus> = {
  open: "pending",
  in_progress: "in_progress",
  done: "completed",
  error: "error",
  canceled: "skipped",
};

function stepStatus(entry: BoardEntryEvidence | undefined, run: RunEvidence | undefined): StepStatus {
  if (!entry) return "not_started";
  if (entry.status === "open" || entry.status === "in_progress") {
    if (run?.state === "waiting") return "waiting";
    if (run?.state === "failed") return "error";
    if (run?.state === "running") return "in_progress";
  }
  return ENTRY_STEP_STATUS[entry.status] ?? "pending";
}

/**
 * The step's main artifact: the run's first JSON artifact, else what the entries name — the one
 * the role wrote (its output) before the one sent to it (its input).
 */
function artifactPath(entries: BoardEntryEvidence[], run: RunEvidence | undefined): string | null {
  const artifacts = run?.artifacts.map((a) => a.path) ?? [];
  const fromRun = artifacts.find((p) => p.endsWith(".json")) ?? artifacts[0];
  return fromRun ?? entries.map((e) => entryLinks(e).artifact_path).find((p) => p !== null) ?? null;
}

/** The Actions run the entries name (the one sent to the role, else the one it wrote); else the supervisor run that carried it. */
function runId(entries: BoardEntryEvidence[], run: RunEvidence | undefined): string | null {
  return entries.map((e) => entryLinks(e).run_id).find((id) => id !== null) ?? run?.run_id ?? null;
}

/** The workflow of that run: GitHub's name for it, else the entries', else the lane role's (as what_changed names it). */
function workflowName(
  ctx: LaneContext,
  entries: BoardEntryEvidence[],
  run: RunEvidence | undefined,
  github: GithubEvidence | null,
): string | null {
  const ids = entries.map((e) => entryLinks(e).run_id).filter((id) => id !== null);
  const actions = github?.workflow_runs.find((r) => ids.includes(r.id));
  const named = actions?.name ?? entries.map((e) => entryLinks(e).workflow).find((w) => w !== null);
  return named ?? (run ? `${ctx.lane.layer}/${ctx.lane.name}:${run.role}` : null);
}

export function entryEvidence(entry: BoardEntryEvidence): Evidence {
  return { type: "entry", id: entry.id, title: entry.summary || entry.kind, at: entry.updated_at };
}

function runEvidence(run: RunEvidence): Evidence {
  return {
    type: "run",
    id: run.run_id,
    title: `${run.role} run (${run.state})`,
    at: run.finished_at ?? run.started_at,
  };
}

function buildSteps(
  ctx: LaneContext,
  cycle: Cycle | undefined,
  runs: RunEvidence[],
  github: GithubEvidence | null,
): Step[] {
  const lastRun = latestRunByEntry(runs);
  return ctx.lane.roles.map((role) => {
    const entry = cycle?.entries.filter((e) => e.to === role.name).at(-1);
    const run = entry ? lastRun.get(entry.id) : undefined;
    // What the role wrote after taking its entry carries its output (the origin's roles name their artifact and run there).
    const written = entry
      ? cycle!.entries
          .filter((e) => e.from === role.name && Date.parse(e.created_at) >= Date.parse(entry.created_at))
          .at(-1)
      : undefined;
    const forRun = [entry, written].filter((e) => e !== undefined);
    const forArtifact = [written, entry].filter((e) => e !== undefined);
    return {
      role: role.name,
      status: stepStatus(entry, run),
      latest_entry: entry
        ? {
            entry_id: entry.id,
            kind: entry.kind,
            entry_status: entry.status,
            blackboard_issue: entry.source_issue,
            blackboard_comment_id: entry.source_comment_id,
            actions_workflow: workflowName(ctx, forRun, run, github),
            actions_run_id: runId(forRun, run),
            artifact_path: artifactPath(forArtifact, run),
            updated_at: entry.updated_at,
            summary: entry.summary,
          }
        : null,
      run: run
        ? {
            run_id: run.run_id,
            state: run.state,
            started_at: run.started_at,
            finished_at: run.finished_at,
            waiting_for: run.state === "waiting" ? Object.keys(run.waiting?.expected_inputs ?? {}) : [],
            events: run.events,
            artifacts: run.artifacts.map((a) => a.path),
            pull_requests: run.actions.flatMap((a) => (a.pr_number === null ? [] : [a.pr_number])),
          }
        : null,
    };
  });
}

/**
 * Whether the lane's work ends in its STATE document: one of its roles picks an apply kind (the
 * doc_update lane's Tsugu). Only such a lane is told its STATE document lags a completed cycle.
 */
export function appliesToState(lane: Pick<LaneConfig, "roles">): boolean {
  return lane.roles.some((r) => r.allowed_kinds.some((k) => /apply/i.test(k)));
}

const DAY_MS = 86_400_000;

const PRIORITY = { high: 0, medium: 1, low: 2 } as const;
const MAX_GAP_ACTIONS = 3;
/** A Gap list the STATE document has not changed for this long is asked to be confirmed. */
const STALE_GAP_DAYS = 14;

/** What lane_status found, that the suggested actions are derived from. */
export interface LaneFindings {
  cycles: Cycle[];
  steps: Step[];
  runs: RunEvidence[];
  view: StateView;
  github: GithubEvidence | null;
  /** The latest cycle as the repository shows it, when the board has none. */
  fromRepo?: RepoCycle | undefined;
}

/** What to do next, derived only from what was found; most urgent first. */
export function suggestActions(ctx: LaneContext, found: LaneFindings): SuggestedAction[] {
  const { cycles, steps, runs, view, github, fromRepo } = found;
  const actions: SuggestedAction[] = [];
  const latest = cycles.at(-1);
  const roleNames = new Set(ctx.lane.roles.map((r) => r.name));
  const entryById = new Map((latest?.entries ?? []).map((e) => [e.id, e]));
  for (const step of steps) {
    const entry = step.latest_entry ? entryById.get(step.latest_entry.entry_id) : undefined;
    if (!entry) continue;
    const evidence = [
      entryEvidence(entry),
      ...(step.run ? [runEvidence(runs.find((r) => r.run_id === step.run!.run_id)!)] : []),
    ];
    if (step.status === "error") {
      actions.push({
        id: `fix-${entry.id}`,
        title: `Investigate the failed ${step.role} step (entry ${entry.id})`,
        owner: ctx.humans[0] ?? "Human",
        priority: "high",
        reason:
          step.run?.state === "failed"
            ? `${step.role}'s run ${step.run.run_id} failed`
            : `entry ${entry.id} is in status error`,
        evidence,
      });
    } else if (step.status === "waiting" && step.run) {
      const inputs = step.run.waiting_for.length > 0 ? step.run.waiting_for.join(", ") : "its inputs";
      actions.push({
        id: `resume-${step.run.run_id}`,
        title: `Provide ${inputs} to resume ${step.role}'s run ${step.run.run_id}`,
        owner: ctx.humans[0] ?? "Human",
        priority: "high",
        reason: `run ${step.run.run_id} is waiting for input`,
        evidence,
      });
    } else if (step.status === "pending" && !step.run) {
      actions.push({
        id: `pick-${entry.id}`,
        title: `Start a worker for ${step.role} to pick entry ${entry.id} (pmagent worker --role ${step.role})`,
        owner: step.role,
        priority: "medium",
        reason: `entry ${entry.id} is open and no run has started for it`,
        evidence,
      });
    }
  }
  for (const run of runs.filter((r) => roleNames.has(r.role))) {
    for (const proposal of run.environment_proposals.filter((p) => p.status === "pending")) {
      if (actions.some((a) => a.id === `decide-env-${proposal.id}`)) continue;
      actions.push({
        id: `decide-env-${proposal.id}`,
        title: `Accept or reject ${run.role}'s environment proposal ${proposal.id}: ${proposal.summary}`,
        owner: ctx.humans[0] ?? "Human",
        priority: "medium",
        reason: `proposal ${proposal.id} is pending (seen ${proposal.count} time${proposal.count === 1 ? "" : "s"})`,
        evidence: [{ type: "environment_proposal", id: proposal.id, title: proposal.summary }, runEvidence(run)],
      });
    }
  }
  const lastCompleted = [...cycles].reverse().find((c) => c.status === "completed");
  if (
    appliesToState(ctx.lane) &&
    lastCompleted?.completed_at &&
    (view.updated_at === null || Date.parse(view.updated_at) < Date.parse(lastCompleted.completed_at))
  ) {
    actions.push({
      id: "update-state-doc",
      title: `Update ${view.state_file} with the outcome of ${lastCompleted.id}`,
      owner: ctx.humans[0] ?? "Human",
      priority: "medium",
      reason:
        view.updated_at === null
          ? `${view.state_file} does not exist, and ${lastCompleted.id} completed at ${lastCompleted.completed_at}`
          : `${view.state_file} last changed at ${view.updated_at}, before ${lastCompleted.id} completed at ${lastCompleted.completed_at}`,
      evidence: [
        {
          type: "file",
          id: view.state_file,
          path: view.state_file,
          ...(view.updated_at ? { at: view.updated_at } : {}),
        },
        entryEvidence(lastCompleted.root),
      ],
    });
  }
  for (const pr of openPullsOfLane(steps, runs, github)) {
    actions.push({
      id: `review-pr-${pr.number}`,
      title: `Review and merge PR #${pr.number}: ${pr.title}`,
      owner: ctx.humans[0] ?? "Human",
      priority: "medium",
      reason: `PR #${pr.number} opened by the lane is still open`,
      evidence: [{ type: "pr", id: String(pr.number), title: pr.title, ...(pr.url ? { url: pr.url } : {}) }],
    });
  }
  if (latest?.status === "blocked" && !actions.some((a) => a.priority === "high")) {
    const reached = steps.filter((s) => s.status !== "not_started").at(-1)?.role ?? ctx.lane.roles[0]!.name;
    actions.push({
      id: `unblock-${latest.id}`,
      title: `${latest.id} stopped at ${reached}: post its follow-up entry or cancel the cycle`,
      owner: ctx.humans[0] ?? "Human",
      priority: "high",
      reason: `every entry of ${latest.id} is finished but the lane's last role was not reached`,
      evidence: latest.entries.map(entryEvidence),
    });
  }
  const first = ctx.lane.roles[0]!;
  if (fromRepo) {
    const by = fromRepo.apply
      ? fromRepo.apply.pr_number !== null
        ? `PR #${fromRepo.apply.pr_number}`
        : `commit ${fromRepo.apply.sha.slice(0, 12)}`
      : `the ${view.state_file} lane section`;
    actions.push({
      id: "start-cycle",
      title: `Start the next cycle on the blackboard: post a ${first.allowed_kinds[0]} entry to ${first.name}`,
      owner: ctx.humans[0] ?? "Human",
      priority: "low",
      reason: `${fromRepo.id} completed${fromRepo.completed_at ? ` at ${fromRepo.completed_at}` : ""} (recorded by ${by}); the blackboard has no cycle of ${ctx.lane.layer}/${ctx.lane.name}`,
      evidence: repoCycleEvidence(fromRepo),
    });
  } else if (!latest || latest.status === "completed") {
    actions.push({
      id: "start-cycle",
      title: latest
        ? `Start the next cycle: post a ${first.allowed_kinds[0]} entry to ${first.name}`
        : `Start a first cycle: post a ${first.allowed_kinds[0]} entry to ${first.name}`,
      owner: ctx.humans[0] ?? "Human",
      priority: "low",
      reason: latest
        ? `${latest.id} completed at ${latest.completed_at}`
        : `no cycle of ${ctx.lane.layer}/${ctx.lane.name} on the blackboard`,
      evidence: latest ? [entryEvidence(latest.root)] : [],
    });
  }
  // Gaps are dated by the document's last change: a list nobody touched for weeks is asked about, not repeated.
  const unchangedDays =
    view.updated_at === null ? null : Math.floor((ctx.as_of.getTime() - Date.parse(view.updated_at)) / DAY_MS);
  view.known_gaps.slice(0, MAX_GAP_ACTIONS).forEach((gap, i) => {
    const stale = unchangedDays !== null && unchangedDays >= STALE_GAP_DAYS;
    actions.push({
      id: `gap-${i + 1}`,
      title: stale
        ? `Confirm or close known gap (listed unchanged for ${unchangedDays} days): ${gap}`
        : `Close known gap: ${gap}`,
      owner: ctx.humans[0] ?? "Human",
      priority: "low",
      reason: `listed under the Gap list of ${view.state_file}${view.section_anchor ?? ""}${view.updated_at ? ` as of its last change ${view.updated_at.slice(0, 10)}` : ""}`,
      evidence: [
        {
          type: "file",
          id: view.state_file,
          path: view.state_file,
          ...(view.updated_at ? { at: view.updated_at } : {}),
        },
      ],
    });
  });
  return actions
    .map((a, i) => ({ a, i }))
    .sort((x, y) => PRIORITY[x.a.priority] - PRIORITY[y.a.priority] || x.i - y.i)
    .map((x) => x.a);
}

/** Pull requests the lane's steps opened that are still open: as GitHub reports them, else as the run recorded them (local forge). */
function openPullsOfLane(
  steps: Step[],
  runs: RunEvidence[],
  github: GithubEvidence | null,
): Array<{ number: number; title: string; url: string | null }> {
  const numbers = new Set(steps.flatMap((s) => s.run?.pull_requests ?? []));
  const fromGithub = (github?.pulls ?? []).filter((p) => numbers.has(p.number));
  const known = new Set(fromGithub.map((p) => p.number));
  const stepRuns = new Set(steps.flatMap((s) => (s.run ? [s.run.run_id] : [])));
  const fromRuns = runs
    .filter((r) => stepRuns.has(r.run_id))
    .flatMap((r) =>
      r.actions
        .filter((a) => a.pr_number !== null && !known.has(a.pr_number) && a.pr_state === "open")
        .map((a) => ({ number: a.pr_number!, title: a.title ?? `PR opened by ${r.role}`, url: a.url })),
    );
  return [...fromGithub.filter((p) => p.state === "open"), ...fromRuns];
}

/** Where a cycle found in the repository is recorded: the PR (or commit) that applied it, the STATE document. */
export function repoCycleEvidence(c: RepoCycle): Evidence[] {
  const apply = c.apply;
  const file: Evidence = { type: "file", id: c.state_path, path: c.state_path };
  if (!apply) return [file];
  const title = apply.subject.replace(/\s*\(#\d+\)\s*$/, "");
  return [
    ...(apply.pr_number !== null
      ? [{ type: "pr", id: String(apply.pr_number), title, at: apply.committed_at } as const]
      : []),
    { type: "commit", id: apply.sha, title: apply.subject, at: apply.committed_at },
    file,
  ];
}

/**
 * Steps of a cycle the repository records: the roles up to the one that applies (a kind naming
 * "apply"; the last role when none does) did their part, since the apply reached STATE. A role
 * after it is `in_progress` when the window's commits show work on it (a commit naming the role
 * in its message or a path, e.g. its workflow wired), else not started. No blackboard entry or run
 * backs them.
 */
function repoCycleSteps(ctx: LaneContext, cycle: RepoCycle, commits: readonly GitCommit[]): Step[] {
  const applier = ctx.lane.roles.findIndex((r) => r.allowed_kinds.some((k) => /apply/i.test(k)));
  const last = applier >= 0 ? applier : ctx.lane.roles.length - 1;
  return ctx.lane.roles.map((role, i) => {
    const done = i <= last && cycle.status === "completed";
    return {
      role: role.name,
      status: done ? "completed" : commits.some((c) => namesRole(c, role.name)) ? "in_progress" : "not_started",
      latest_entry: null,
      run: null,
    };
  });
}

/** Whether a commit is about a role: its name as a word of the message, or a part of a changed path (`gen_pm_snapshot.yml`). */
function namesRole(commit: GitCommit, role: string): boolean {
  const name = role.toLowerCase();
  const word = new RegExp(`(?<![\\p{L}\\p{N}])${name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}(?![\\p{L}\\p{N}])`, "iu");
  return (
    word.test(`${commit.subject}\n${commit.body}`) ||
    commit.files.some((f) =>
      f.path
        .toLowerCase()
        .split(/[/_.-]+/)
        .includes(name),
    )
  );
}

/**
 * `steps` keyed as the origin's readers write them (`steps.sho.status`): each role's name in lower
 * case, in the lane's order; a role whose lower-case name another role already took keeps its own.
 */
export function stepsByRole(steps: Step[]): Record<string, Step> {
  const out: Record<string, Step> = {};
  for (const step of steps) {
    const key = step.role.toLowerCase();
    out[key in out ? step.role : key] = step;
  }
  return out;
}

/** Where a board cycle's work stands on its branch: the runs of its entries that handed on a commit, the latest. */
function cycleCommit(
  cycle: Cycle,
  runs: RunEvidence[],
): { branch?: string; commit?: string; merged?: boolean; pull_request?: number | null } {
  const ids = new Set(cycle.entries.map((e) => e.id));
  const onBranch = runs.filter(
    (r) => ids.has(r.entry_id) && r.cycle && (r.cycle.commit !== null || r.cycle.merged !== null),
  );
  const last = onBranch.sort((a, b) => a.started_at.localeCompare(b.started_at)).at(-1)?.cycle;
  if (!last) return {};
  return {
    branch: last.branch,
    commit: last.merged ?? last.commit ?? undefined,
    merged: last.merged !== null,
    pull_request: last.pull_request,
  };
}

const cycleFields = (c: ReturnType<typeof cycleCommit>) =>
  c.commit ? { branch: c.branch ?? null, commit: c.commit, merged: c.merged === true } : {};

function cycleCommitEvidence(cycle: Cycle, runs: RunEvidence[]): Evidence[] {
  const c = cycleCommit(cycle, runs);
  if (!c.commit) return [];
  return [
    { type: "commit", id: c.commit, title: c.merged ? `merged ${c.branch} into its base` : `head of ${c.branch}` },
    ...(c.pull_request ? [{ type: "pr" as const, id: String(c.pull_request) }] : []),
  ];
}

/** lane_status_v1 from the collected evidence (already cut at `ctx.as_of`). */
export function buildLaneStatus(ctx: LaneContext, evidence: KaiEvidence): LaneStatus {
  const runs = evidence.runs ?? [];
  const cycles = laneCycles(evidence.board ?? [], ctx.lane, ctx.humans, runs, evidence.cycle_mentions ?? []);
  const latest = cycles.at(-1);
  // No cycle on the board: the repository's record of one (an apply merged to STATE) is the latest.
  const fromRepo = latest ? undefined : evidence.repo_cycles?.at(-1);
  const steps = fromRepo
    ? repoCycleSteps(ctx, fromRepo, evidence.git?.commits ?? [])
    : buildSteps(ctx, latest, runs, evidence.github);
  const view: StateView = evidence.state_doc
    ? stateView(evidence.state_doc, ctx.lane)
    : {
        state_file: ctx.lane.state_file,
        section_anchor: null,
        digest: `${ctx.lane.state_file} was not read`,
        known_gaps: [],
        updated_at: null,
      };
  return {
    kind: "lane_status_v1",
    project_id: ctx.project_id,
    lane: { layer: ctx.lane.layer, name: ctx.lane.name },
    as_of: ctx.as_of.toISOString(),
    steps: stepsByRole(steps),
    cycle: fromRepo
      ? {
          latest_cycle_id: fromRepo.id,
          root_entry_id: null,
          status: fromRepo.status,
          started_at: fromRepo.started_at,
          completed_at: fromRepo.completed_at,
          found_in: fromRepo.found_in,
          evidence: repoCycleEvidence(fromRepo),
        }
      : {
          latest_cycle_id: latest?.id ?? null,
          root_entry_id: latest?.root.id ?? null,
          status: latest?.status ?? null,
          started_at: latest?.started_at ?? null,
          completed_at: latest?.completed_at ?? null,
          found_in: latest ? "blackboard" : null,
          evidence: latest ? [entryEvidence(latest.root), ...cycleCommitEvidence(latest, runs)] : [],
          ...(latest ? cycleFields(cycleCommit(latest, runs)) : {}),
        },
    state_view: view,
    next_suggested_actions: suggestActions(ctx, { cycles, steps, runs, view, github: evidence.github, fromRepo }),
    ...(evidence.runs ? { usage: laneUsage(evidence.runs, ctx.lane, ctx.prices ?? {}, ctx.zone ?? UTC) } : {}),
  };
}
