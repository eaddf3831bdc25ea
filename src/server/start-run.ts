import { findRole } from "../config/index.js";
import { RefusedError } from "../core/index.js";
import { claimAndStart, personalClaimer, rerun, type ClaimedStart, type RunRecord } from "../lattice/index.js";
import type { ServerContext } from "./context.js";
import { assertHuman } from "./permissions.js";

/** Keep a run this server started in `inFlight` (awaited on close); answer once it is recorded. */
async function underServer(ctx: ServerContext, started: ClaimedStart): Promise<RunRecord> {
  // The sprite runs under this server; its outcome is in the run record and its events.
  const finished = started.finished.catch(() => undefined);
  ctx.inFlight.add(finished);
  void finished.finally(() => ctx.inFlight.delete(finished));
  // A start refused before the run is recorded (the gate denied it, no runner) answers with its error.
  return ctx.supervisor.runs.get(await started.recorded);
}

/**
 * Start a run for an entry on a person's word (the console's "Run"): the entry is claimed as a
 * worker of this server would claim it (so no worker runs it too), then its addressee's role runs
 * it (the OA gate asked first); answered once the run is recorded, while the sprite runs on under this server.
 */
export async function startRunFor(ctx: ServerContext, actor: string, entryId: string): Promise<RunRecord> {
  assertHuman(ctx, actor, "start a run");
  const stored = await ctx.board.get(entryId);
  const to = stored.entry.to;
  let role;
  try {
    role = findRole(ctx.project.config, to).role;
  } catch {
    throw new RefusedError(
      "entry_not_for_role",
      `entry ${entryId} is addressed to ${to}, which is not a role of any lane: there is nothing to run`,
      { entry: entryId },
    );
  }
  return underServer(
    ctx,
    await claimAndStart(ctx.supervisor, { role, stored, worker: personalClaimer(actor, "console") }),
  );
}

/** Run a finished run's entry again under this server (a human's word): the same command, or `agent`'s. */
export async function rerunFor(
  ctx: ServerContext,
  actor: string,
  runId: string,
  agent: string | undefined,
): Promise<{ run: RunRecord; entry_id: string; reopened_from: string | null }> {
  const r = await rerun(ctx.supervisor, runId, { actor, agent, where: "console" });
  return { run: await underServer(ctx, r), entry_id: r.entryId, reopened_from: r.reopenedFrom };
}
