/** Takeover fencing: the runs of an entry another worker has just claimed are superseded and their sprites killed. */
import type { RunRecord } from "../runs/index.js";
import { killGroup, processAlive } from "../sandbox/index.js";
import type { SupervisorContext } from "./context.js";

/**
 * Fence the runs of an entry that `worker` has just claimed (a takeover after a lease expired):
 * each run of another worker not finished yet is canceled as superseded, so its finish is
 * refused (settling only moves unfinished runs) as is its late output (ingest checks the claim),
 * and its sprite's process group is killed when it still runs on this host.
 */
export async function fenceEntry(ctx: SupervisorContext, entryId: string, worker: string): Promise<RunRecord[]> {
  const fenced: RunRecord[] = [];
  for (const run of await ctx.runs.list({ entryId, state: ["starting", "running", "waiting"] })) {
    if (run.worker === worker) continue;
    const reason = `superseded: entry ${entryId} was taken over by ${worker} after the lease of ${run.worker ?? "its run"} expired`;
    if (
      !(await ctx.runs.update(run.id, { state: "canceled", reason, entry_synced: true, finished: true }, [
        "starting",
        "running",
        "waiting",
      ]))
    )
      continue;
    if (run.host === ctx.host && run.sprite_pid !== null && processAlive(run.sprite_pid, run.sprite_started))
      killGroup(run.sprite_pid);
    ctx.log.warn({ run: run.id, entry: entryId, worker }, "run superseded by a takeover");
    fenced.push(await ctx.runs.get(run.id));
  }
  return fenced;
}
