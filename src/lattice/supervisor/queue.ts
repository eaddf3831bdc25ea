/**
 * Resumes left for any worker (issue 33). `queueResume` checks the inputs against the run's
 * `expected_inputs` at once (the person who gives them hears of a mistake, not a worker later),
 * records them and wakes the role's workers; a worker of that role on any machine takes the
 * oldest with `takeQueuedResume`, which resumes the run as `resumeRun` does: the queue row is
 * removed in the transaction that moves the run to starting, so one worker resumes it.
 */
import { OPEN_CHANNEL } from "../../blackboard/index.js";
import { ConflictError, RefusedError, contentHash, hasCode } from "../../core/index.js";
import { assertInputs, withFollowUp } from "../protocol/index.js";
import type { SupervisorContext } from "./context.js";
import type { ResumeResult } from "./options.js";
import type { RunRecord } from "../runs/index.js";

/** Queued resumes read per look: a worker takes the first it wins. */
const QUEUE_PAGE = 8;

export interface QueueResumeOptions {
  inputs: Record<string, unknown>;
  context?: Record<string, unknown>;
  /** A follow-up message to the sprite (see ResumeOptions.message); queued in the context. */
  message?: string;
}

/** Record a resume for any worker of the run's role; the same one again is a no-op. */
export async function queueResume(
  ctx: SupervisorContext,
  runId: string,
  options: QueueResumeOptions,
): Promise<{ run: RunRecord; noop: boolean }> {
  const context = withFollowUp(options.context, options.message) ?? {};
  const run = await ctx.runs.get(runId);
  if (run.state !== "waiting" || !run.waiting) {
    throw new RefusedError(
      "run_not_waiting",
      `run ${runId} is ${run.state}, not waiting: only a waiting run can be resumed`,
      { run: runId, state: run.state },
    );
  }
  const inputs = options.inputs;
  assertInputs(inputs, run.waiting.expected_inputs);
  if (await ctx.runs.queueResume(runId, run.role, inputs, context)) {
    // A worker of the role waiting for work wakes as for a posted entry.
    await ctx.store.notify(OPEN_CHANNEL, run.role);
    return { run, noop: false };
  }
  const queued = await ctx.runs.queuedResume(runId);
  if (queued && contentHash({ i: queued.inputs, c: queued.context }) === contentHash({ i: inputs, c: context }))
    return { run, noop: true };
  throw new ConflictError(
    "resume_queued",
    `run ${runId} has a resume queued already${queued ? `, with other inputs (${JSON.stringify(queued.inputs)})` : ""}: a worker of ${run.role} will carry it out`,
    { run: runId },
  );
}

/**
 * Take the oldest queued resume of `roles` this supervisor wins and carry it out (restoring the
 * checkpoint here, from the shared store when the run waited on another machine). Undefined when
 * none is queued. A queued resume whose run no longer waits is dropped.
 */
export async function takeQueuedResume(
  ctx: SupervisorContext,
  roles: readonly string[],
  resume: (
    runId: string,
    o: { inputs: Record<string, unknown>; context: Record<string, unknown>; queued: true },
  ) => Promise<ResumeResult>,
): Promise<ResumeResult | undefined> {
  for (const q of await ctx.runs.queuedResumes(roles, QUEUE_PAGE)) {
    const run = await ctx.runs.get(q.run_id).catch(() => undefined);
    if (!run || run.state !== "waiting") {
      await ctx.runs.dropQueuedResume(q.run_id);
      continue;
    }
    try {
      const r = await resume(q.run_id, { inputs: q.inputs, context: q.context, queued: true });
      if (!r.noop) return r;
    } catch (err) {
      // Another worker won it (or it stopped waiting): the next one.
      if (hasCode(err, "run_not_waiting")) continue;
      throw err;
    }
  }
  return undefined;
}
