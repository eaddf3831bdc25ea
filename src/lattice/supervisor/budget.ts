/**
 * Budgets: a run whose reported usage goes past its limits (its role's `budget`, or its own from
 * `pmagent run --max-tokens/--max-cost`) fails with the reason, its sprite stopped as a cancel
 * stops one. Checked each time a flush stores a usage report, so a run resumed or re-attached
 * after a crash is held to the totals stored so far.
 */
import {
  budgetBreach,
  isTerminalRunState,
  runBudget,
  UNFINISHED_RUN_STATES,
  usageOfRuns,
  type BudgetLimits,
  type RunRecord,
} from "../runs/index.js";
import { processAlive } from "../sandbox/index.js";
import { role as roleOf, type SupervisorContext } from "./context.js";
import { stopSprite } from "./processes.js";

/** The limits `run` is held to, or null when it has none. */
export async function budgetFor(ctx: SupervisorContext, run: RunRecord): Promise<BudgetLimits | null> {
  const own = await runBudget(ctx.store, run.id);
  let fromRole: BudgetLimits | undefined;
  try {
    fromRole = roleOf(ctx, run.role).budget;
  } catch {
    fromRole = undefined; // a role no longer configured: only the run's own limits
  }
  const limits: BudgetLimits = { ...fromRole, ...own };
  return limits.max_tokens === undefined && limits.max_cost === undefined ? null : limits;
}

/** Fail and stop the run if its usage so far breaks its budget. */
export async function enforceBudget(ctx: SupervisorContext, runId: string): Promise<void> {
  const run = await ctx.runs.get(runId, ctx.store, false);
  if (isTerminalRunState(run.state)) return;
  const limits = await budgetFor(ctx, run);
  if (limits === null) return;
  const usage = (await usageOfRuns(ctx.store, [runId])).get(runId) ?? [];
  const breach = budgetBreach(limits, usage, ctx.options.project.config.prices);
  if (breach === null) return;
  const reason = `${breach}; the sprite was stopped`;
  if (!(await ctx.runs.update(runId, { state: "failed", reason, finished: true }, UNFINISHED_RUN_STATES))) return;
  ctx.log.warn({ run: runId, reason }, "run over budget");
  // As a cancel: the sprite's whole process group (settle, once it exits, keeps this state and reason).
  const pid = ctx.active.get(runId)?.child?.pid ?? run.sprite_pid;
  if (pid && (ctx.active.get(runId)?.child || processAlive(pid, run.sprite_started))) void stopSprite(pid, runId);
}
