/**
 * A run's part in its lane cycle (see forge/cycle-branch.ts): a fresh workspace starts on the
 * cycle's branch; a run that succeeded hands its work on as one commit of its role, and the cycle's
 * pull request opens or follows when the lane says. A hand-on that fails (a conflict with another
 * run of the cycle, the forge unreachable) fails the run with the reason: the work is not lost (it
 * stays in the workspace) and nothing is merged blindly.
 */
import type { Entry } from "../../blackboard/index.js";
import { cycleRootId, findRole } from "../../config/index.js";
import { PmagentError } from "../../core/index.js";
import { cycleBranchName, handOnCycleBranch, startCycleBranch } from "../../forge/index.js";
import type { RunCycle, RunRecord } from "../runs/index.js";
import type { SupervisorContext } from "./context.js";

/** Put a fresh workspace on its cycle's branch; null when the run is outside a cycle (no lane entry, no repository, no branch). */
export async function startOnCycle(
  ctx: SupervisorContext,
  run: RunRecord,
  entry: Entry | null,
): Promise<RunCycle | null> {
  const cycles = ctx.options.cycles;
  if (!cycles || !entry) return null;
  const { lane } = findRole(ctx.options.project.config, run.role);
  const id = cycleRootId(lane, entry.id);
  const start = await startCycleBranch(cycles, run.workspace, cycleBranchName(lane.layer, lane.name, id));
  if (start === null) {
    ctx.log.info(
      { run: run.id, root: ctx.options.project.root },
      "the project repository is not on a branch with a commit: the run works outside a cycle branch",
    );
    return null;
  }
  const cycle: RunCycle = { id, ...start };
  await ctx.runs.update(run.id, { cycle });
  return cycle;
}

/** The environment that tells a sprite it is on its cycle's branch. */
export function cycleEnv(cycle: RunCycle | null): Record<string, string> {
  return cycle
    ? { PMAGENT_CYCLE_BRANCH: cycle.branch, PMAGENT_CYCLE_BASE: cycle.base, PMAGENT_CYCLE_START: cycle.start }
    : {};
}

/**
 * Hand a succeeded run's work on: its commit onto the cycle's branch, then the cycle's pull
 * request when due. Returns the reason when it cannot (the run then fails).
 */
export async function handOn(
  ctx: SupervisorContext,
  run: RunRecord,
  entryId: string | null,
  outcome: string | undefined,
): Promise<string | null> {
  const cycles = ctx.options.cycles;
  const cycle = run.cycle;
  if (!cycles || !cycle) return null;
  const { lane, role } = findRole(ctx.options.project.config, run.role);
  try {
    const { commit } = await handOnCycleBranch(cycles, {
      workspace: run.workspace,
      cycle,
      runId: run.id,
      author: { name: run.role, email: `${run.role.toLowerCase().replace(/[^a-z0-9._-]+/g, "-")}@pmagent.invalid` },
      message: `${run.role}: ${entryId ?? cycle.id}\n\nLane: ${lane.layer}/${lane.name}\nCycle: ${cycle.id}\nEntry: ${entryId ?? "-"}\nRun: ${run.id}\n`,
    });
    // The pull request an earlier run of the cycle opened: once open, every later change follows it.
    const earlier = await ctx.runs.cyclePullRequest(cycle.branch);
    const when = lane.open_pull_request;
    const due = when !== "never" && (when === "first_change" || when === run.role);
    let pull = earlier;
    // Opened when due and the cycle has a change.
    if (commit !== null && (due || earlier !== null)) {
      const pr = await cycles.forge.openBranchPullRequest({
        title: `${lane.name}: ${cycle.id}`,
        body: `Lane cycle ${cycle.id} (${lane.layer}/${lane.name}), one commit per role.`,
        base: cycle.base,
        head: cycle.branch,
        repo: cycles.repo,
      });
      pull = { number: pr.number, url: pr.url };
    }
    // The merging role's approval (an outcome that does not send the work elsewhere) merges the cycle.
    const approves =
      lane.merge_pull_request === run.role && (outcome === undefined || role.on_outcome?.[outcome] === undefined);
    const merged =
      approves && pull !== null
        ? (await cycles.forge.mergePullRequest(pull.number, `Merge ${cycle.branch}: ${lane.name} cycle ${cycle.id}`))
            .sha
        : null;
    await ctx.runs.update(run.id, { cycle: { ...cycle, commit, pull_request: pull, merged } });
    return null;
  } catch (err) {
    const why = err instanceof PmagentError ? err.message : (err as Error).message;
    return `the run succeeded, but its work could not be handed on to the cycle's branch ${cycle.branch}: ${why}`;
  }
}
