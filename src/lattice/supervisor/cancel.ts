/** Canceling a run: its sprite's whole process group stopped and why recorded. */
import { RefusedError } from "../../core/index.js";
import { isTerminalRunState, type RunRecord } from "../runs/index.js";
import { processAlive } from "../sandbox/index.js";
import type { SupervisorContext } from "./context.js";
import { syncEntry } from "./entry-sync.js";
import { stopSprite } from "./processes.js";

/** Cancel a run: stop its sprite (its whole process group) and record why. */
export async function cancel(ctx: SupervisorContext, runId: string, reason: string): Promise<RunRecord> {
  const run = await ctx.runs.get(runId);
  if (isTerminalRunState(run.state))
    throw new RefusedError("run_finished", `run ${runId} is already ${run.state}: nothing to cancel`);
  await ctx.runs.update(runId, { state: "canceled", reason, finished: true }, ["starting", "running", "waiting"]);
  const owned = ctx.active.get(runId)?.child;
  const pid = owned?.pid ?? run.sprite_pid;
  if (pid && owned) void stopSprite(pid, runId);
  // Not this process's child (a `pmagent runs cancel`, which exits after this): the grace period is
  // waited out here, so that the SIGKILL after it is sent. A pid is only this host's to signal.
  else if (pid && run.host === ctx.host && processAlive(pid, run.sprite_started)) await stopSprite(pid, runId);
  const canceled = await ctx.runs.get(runId);
  if (!ctx.active.get(runId)?.attempt) await syncEntry(ctx, canceled);
  return canceled;
}
