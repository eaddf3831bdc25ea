/**
 * Reconciliation after a crash: unfinished runs of this host whose supervisor is gone are taken
 * over (a live sprite re-attached and followed, an ended one drained and settled), finished runs
 * get their entry synced, and actions and proposals not yet dispatched are handed over again.
 */
import type { Redactor } from "../../core/index.js";
import { UNFINISHED_RUN_STATES, type RunRecord, type StoredEvent } from "../runs/index.js";
import { findSpriteOfRun, processAlive, processStartTime } from "../sandbox/index.js";
import { track, whenIdle, type Exit, type SupervisorContext } from "./context.js";
import { dispatch } from "./dispatch.js";
import { syncEntry } from "./entry-sync.js";
import { follow } from "./follow.js";
import { stopSprite, waitForExit } from "./processes.js";
import { runRedactor } from "./redaction.js";
import { settle } from "./settle.js";

/**
 * After a crash: every unfinished run of this host whose supervisor is gone is taken over.
 * A sprite still alive is re-attached (its output files and outbox tailed from the stored
 * offsets until it exits); one that ended is drained and settled. Finished runs whose entry
 * was not updated get it updated; actions and proposals not yet dispatched are handed over again.
 */
export async function reconcile(ctx: SupervisorContext): Promise<RunRecord[]> {
  const taken: Array<Promise<RunRecord>> = [];
  const takenIds = new Set<string>();
  for (const run of await ctx.runs.list({ state: [...UNFINISHED_RUN_STATES] })) {
    if (run.host !== ctx.host) continue;
    if (run.supervisor_pid !== null && run.supervisor_pid !== process.pid && processAlive(run.supervisor_pid)) continue;
    if (ctx.active.has(run.id)) continue;
    if (!(await ctx.runs.update(run.id, { supervisor_pid: process.pid }, UNFINISHED_RUN_STATES))) continue;
    const active = track(ctx, run.id);
    const attempt = (async () => {
      try {
        // No pid recorded: the supervisor died between spawning the sprite and saving its pid, or before spawning it.
        const pid = run.sprite_pid ?? findSpriteOfRun(run.id);
        const started = run.sprite_pid !== null ? run.sprite_started : pid !== null ? processStartTime(pid) : null;
        if (pid !== null && run.sprite_pid === null)
          await ctx.runs.update(
            run.id,
            { state: "running", sprite_pid: pid, sprite_started: started },
            UNFINISHED_RUN_STATES,
          );
        const exited: Promise<Exit> =
          pid !== null ? waitForExit(pid, started, ctx.pollMs) : Promise.resolve({ code: null, signal: null });
        let redactor: Redactor;
        try {
          redactor = runRedactor(ctx, run);
        } catch (err) {
          // Its output cannot be redacted: the sprite is stopped and the run fails, unread.
          if (pid !== null && processAlive(pid, started)) await stopSprite(pid, run.id);
          await ctx.runs.update(
            run.id,
            { state: "failed", reason: (err as Error).message, sprite_pid: null, finished: true },
            UNFINISHED_RUN_STATES,
          );
          await syncEntry(ctx, await ctx.runs.get(run.id));
          return;
        }
        const exit = await follow(ctx, run, exited, redactor);
        // null: the store failed again; the run is left for the next reconcile.
        if (exit !== null) await settle(ctx, run.id, exit, { workerDied: true });
      } finally {
        active.attempt = null;
      }
    })();
    active.attempt = attempt;
    takenIds.add(run.id);
    taken.push(attempt.then(() => whenIdle(ctx, run.id)));
  }
  for (const run of await ctx.runs.unsynced()) {
    // Settled by another live supervisor of this host (another worker): it syncs the entry itself.
    if (
      run.host === ctx.host &&
      run.supervisor_pid !== null &&
      run.supervisor_pid !== process.pid &&
      processAlive(run.supervisor_pid)
    )
      continue;
    await syncEntry(ctx, run);
  }
  // A run whose actions are handed over again is listed too, whatever its state, once they are
  // done (not a sprite a blocking action's result relaunched: that one runs on).
  const again = await redispatch(ctx);
  for (const [id, dispatched] of again) if (!takenIds.has(id)) taken.push(dispatched.then(() => ctx.runs.get(id)));
  return Promise.all(taken);
}

/**
 * Hand over again, whatever the state of their run: actions and proposals never marked
 * dispatched (their supervisor died first) in runs of this host no live supervisor follows, and
 * actions left pending, cut off mid-attempt or with their sprite not resumed (the action
 * executor's claim keeps one attempt at a time, its idempotency key one delivery).
 */
async function redispatch(ctx: SupervisorContext): Promise<Map<string, Promise<unknown>>> {
  const runs = new Map<string, RunRecord | undefined>();
  const runOf = async (id: string) => {
    if (!runs.has(id)) runs.set(id, await ctx.runs.find(id, ctx.store, false));
    return runs.get(id);
  };
  const followedElsewhere = (run: RunRecord) =>
    run.host !== ctx.host ||
    (run.state !== "waiting" &&
      run.supervisor_pid !== null &&
      run.supervisor_pid !== process.pid &&
      processAlive(run.supervisor_pid));
  const again = new Map<string, { run: RunRecord; event: StoredEvent }>();
  for (const event of await ctx.runs.undispatchedAll(["ACTION_REQUEST", "ENVIRONMENT_PROPOSAL"])) {
    const run = await runOf(event.run_id);
    if (run && !followedElsewhere(run)) again.set(`${run.id}:${event.id}`, { run, event });
  }
  for (const a of (await ctx.options.hooks?.actions?.orphaned?.(ctx.options.project.config.project_id)) ?? []) {
    if (again.has(`${a.run_id}:${a.event_id}`)) continue;
    const run = await runOf(a.run_id);
    const event = run ? await ctx.runs.eventById(run.id, a.event_id, "ACTION_REQUEST") : undefined;
    if (run && event) again.set(`${run.id}:${event.id}`, { run, event });
  }
  const byRun = new Map<string, Array<Promise<void>>>();
  for (const { run, event } of again.values())
    byRun.set(run.id, [...(byRun.get(run.id) ?? []), dispatch(ctx, run, event, true)]);
  return new Map([...byRun].map(([id, ps]) => [id, Promise.allSettled(ps)]));
}
