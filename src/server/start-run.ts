import { randomBytes } from "node:crypto";
import { findRole } from "../config/index.js";
import { ConflictError, RefusedError } from "../core/index.js";
import { runnerArgv, type RunRecord } from "../lattice/index.js";
import type { ServerContext } from "./context.js";

/**
 * Start a run for an entry on a person's word (the console's "Run"): the entry is claimed as a
 * worker of this server would claim it (so no worker runs it too), then its addressee's role runs
 * it (the OA gate asked first); answered once the run is recorded, while the sprite runs on under this server.
 */
export async function startRunFor(ctx: ServerContext, actor: string, entryId: string): Promise<RunRecord> {
  const humans = ctx.project.config.humans;
  if (!humans.includes(actor)) throw new RefusedError("permission_refused", `${actor} may not start a run: only a human (${humans.join(", ")}) may`, { actor });
  const stored = await ctx.board.get(entryId);
  const to = stored.entry.to;
  let role;
  try {
    role = findRole(ctx.project.config, to).role;
  } catch {
    throw new RefusedError("entry_not_for_role", `entry ${entryId} is addressed to ${to}, which is not a role of any lane: there is nothing to run`, { entry: entryId });
  }
  // The gate is asked before the claim, as a worker asks it: a denied entry stays open, unclaimed.
  const decided = await ctx.supervisor.askGate(role.name, stored, runnerArgv(role.runner, ctx.project.config) ?? []);
  if (decided?.decision === "DENY") throw new RefusedError("run_denied", `the run gate denied a run of ${role.name} for entry ${entryId}: ${decided.reasoning || "no reason given"}`, { decision: decided });
  const worker = `${actor}@console-${randomBytes(3).toString("hex")}`;
  const claimed = await ctx.board.claim(worker, role.name, role.allowed_kinds, undefined, { entryId });
  if (!claimed) throw new ConflictError("entry_not_open", `entry ${entryId} is ${stored.entry.status}${stored.claimed_by ? ` (claimed by ${stored.claimed_by})` : ""}: only an open entry of a kind ${role.name} takes (${role.allowed_kinds.join(", ")}) can be started`, { entry: entryId });
  let started!: (id: string) => void;
  const recorded = new Promise<string>((resolve) => (started = resolve));
  const run = ctx.supervisor.startRun({ role: role.name, entryId, worker, onStarted: started, ...(decided ? { decided } : {}) });
  // The sprite runs under this server; its outcome is in the run record and its events.
  const finished = run.catch(() => undefined);
  ctx.inFlight.add(finished);
  void finished.finally(() => ctx.inFlight.delete(finished));
  // A start refused before the run is recorded (the gate denied it, no runner) answers with its error.
  const id = await Promise.race([recorded, run.then(() => recorded)]);
  return ctx.supervisor.runs.get(id);
}
