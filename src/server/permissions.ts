import type { RunRecord } from "../lattice/index.js";
import { RefusedError } from "../core/index.js";
import type { ServerContext } from "./context.js";

/**
 * The blackboard rule, applied to runs: a human, the run's role, or the actor named in `from` or
 * `to` of the run's entry may cancel or resume it.
 */
export async function assertMayActOnRun(
  ctx: ServerContext,
  actor: string,
  run: RunRecord,
  what: string,
): Promise<void> {
  if (ctx.project.config.humans.includes(actor) || actor === run.role) return;
  const entry = run.entry_id ? (await ctx.board.find(run.entry_id))?.entry : undefined;
  if (entry && (entry.from === actor || entry.to === actor)) return;
  throw new RefusedError(
    "permission_refused",
    `${actor} may not ${what} run ${run.id}: only a human (${ctx.project.config.humans.join(", ")}), its role ${run.role}${entry ? ` or ${entry.from}/${entry.to} of entry ${entry.id}` : ""} may`,
    { run: run.id, actor },
  );
}

/** Starting work (runs, workers) is a person's decision: only a configured human may. */
export function assertHuman(ctx: ServerContext, actor: string, what: string): void {
  const humans = ctx.project.config.humans;
  if (!humans.includes(actor))
    throw new RefusedError("permission_refused", `${actor} may not ${what}: only a human (${humans.join(", ")}) may`, {
      actor,
    });
}
