/**
 * Resuming a waiting run: the inputs checked against its `expected_inputs`, the resume recorded
 * once (the same resume again is a no-op), the WAITING checkpoint restored, `.lattice/resume.json`
 * written (0600) and the sprite relaunched.
 */
import { mkdirSync } from "node:fs";
import { NotFoundError, RefusedError, UsageError, contentHash, writeFileAtomic, hasCode } from "../../core/index.js";
import { isAbsolute, relative, resolve, sep } from "node:path";
import { hiddenFromSprites, runHome } from "../sandbox/index.js";
import {
  assertInputs,
  assertRealDirectory,
  checkInputs,
  latticeDir,
  resumePath,
  withFollowUp,
} from "../protocol/index.js";
import { track, whenAttemptDone, whenIdle, type SupervisorContext } from "./context.js";
import { syncEntry } from "./entry-sync.js";
import { launch } from "./launch.js";
import { reborrowObjects, relocation } from "./relocate.js";
import type { ResumeOptions, ResumeResult } from "./options.js";
import type { RunRecord } from "../runs/index.js";

/** Resume a waiting run; counted as work under way on the run from the call on, so `whenIdle` waits for the relaunch. */
export function resumeRun(ctx: SupervisorContext, runId: string, options: ResumeOptions): Promise<ResumeResult> {
  const active = track(ctx, runId);
  const p = resume(ctx, runId, options);
  active.dispatches.add(p);
  void p.finally(() => active.dispatches.delete(p)).catch(() => undefined);
  return p;
}

async function resume(ctx: SupervisorContext, runId: string, options: ResumeOptions): Promise<ResumeResult> {
  let run = await whenAttemptDone(ctx, runId);
  const secret = options.secretInputs ?? {};
  const inputs = options.inputs ?? {};
  const given = {
    ...(withFollowUp(options.context, options.message) ?? {}),
    ...(options.failure ? { error: { action: options.failure.action, message: options.failure.message } } : {}),
  };
  const checkpointId = run.waiting?.checkpoint_id ?? null;
  // Secret values stay out of the key (it is stored); their names are part of it. The key is the
  // caller's payload: what the run holds for the resume (below) is not part of it.
  const key = contentHash({
    checkpoint_id: checkpointId,
    inputs,
    secret_inputs: Object.keys(secret).sort(),
    context: given,
  });
  if (await ctx.runs.hasResume(runId, key)) return { run, noop: true, finished: Promise.resolve(run) };
  if (run.state !== "waiting" || !run.waiting) {
    throw new RefusedError(
      "run_not_waiting",
      `run ${runId} is ${run.state}, not waiting: only a waiting run can be resumed`,
      { run: runId, state: run.state },
    );
  }
  for (const k of Object.keys(secret)) {
    if (k in inputs)
      throw new UsageError(
        "resume_input_twice",
        `input ${k} is given both as an input and as a secret input: give it once`,
      );
  }
  if (
    options.fromAction &&
    !options.failure &&
    checkInputs({ ...inputs, ...secret }, run.waiting.expected_inputs, { allowExtra: true }).length > 0
  ) {
    return hold(ctx, run, given);
  }
  if (!options.failure)
    assertInputs({ ...inputs, ...secret }, run.waiting.expected_inputs, { allowExtra: options.fromAction === true });
  // An action's result held for this resume comes first; what the caller gives wins over it.
  const context = { ...(run.waiting.context ?? {}), ...given };
  const waiting = run.waiting;
  // Waited on another machine: resumed here, in this machine's places for it.
  const moved = relocation(ctx, run);
  if (!ctx.checkpoints.has(runId, waiting.checkpoint_id))
    await fetchCheckpoint(ctx, run, waiting.checkpoint_id, moved !== null);
  // The agent's session goes with it (its HOME, kept beside the checkpoint).
  const home = moved ? waiting.home_checkpoint_id : undefined;
  if (home && !ctx.checkpoints.has(runId, home)) await fetchCheckpoint(ctx, run, home, true);
  const attempt = run.attempt + 1;
  let claimed = true;
  try {
    await ctx.store.transaction(async (q) => {
      if (!(await ctx.runs.recordResume(runId, key, waiting.checkpoint_id, attempt, q))) {
        claimed = false;
        return;
      }
      // Another resume (other inputs) took the run first: this one's record is rolled back with
      // the transaction, so it is never mistaken for a resume that happened.
      // A queued resume for the run is carried out by this one (or, queued, was taken by another worker).
      if (!(await ctx.runs.dropQueuedResume(runId, q)) && options.queued) throw new ResumeLost();
      const patch = {
        state: "starting" as const,
        attempt,
        supervisor_pid: process.pid,
        resetStreams: true,
        reason: null,
        ...(moved ? { place: moved.place } : {}),
      };
      if (!(await ctx.runs.update(runId, patch, ["waiting"], q))) throw new ResumeLost();
    });
  } catch (err) {
    if (!(err instanceof ResumeLost)) throw err;
    claimed = false;
  }
  if (!claimed) {
    run = await ctx.runs.get(runId);
    if (await ctx.runs.hasResume(runId, key)) return { run, noop: true, finished: Promise.resolve(run) };
    throw new RefusedError(
      "run_not_waiting",
      `run ${runId} was resumed by someone else meanwhile (it is ${run.state}): your inputs were not used`,
      { run: runId, state: run.state },
    );
  }
  if (Object.keys(secret).length) ctx.runSecrets.set(runId, Object.values(secret));
  run = await ctx.runs.get(runId);
  const active = track(ctx, runId);
  const started = (async () => {
    try {
      if (moved) mkdirSync(run.workspace, { recursive: true });
      ctx.checkpoints.restore(runId, waiting.checkpoint_id, run.workspace, ownPathsIn(ctx, run.workspace));
      if (moved) reborrowObjects(run.workspace, moved.from, ctx.options.project.root);
      if (home) {
        mkdirSync(runHome(run.run_dir), { recursive: true });
        ctx.checkpoints.restore(runId, home, runHome(run.run_dir));
      }
      const body = {
        work_item_id: run.work_item_id,
        checkpoint_id: waiting.checkpoint_id,
        inputs: { ...inputs, ...secret },
        context,
      };
      // Through a `.lattice` the sprite made a link, the file (with its secret inputs) would land elsewhere.
      assertRealDirectory(latticeDir(run.workspace), "the workspace's .lattice directory");
      writeFileAtomic(resumePath(run.workspace), `${JSON.stringify(body, null, 2)}\n`, 0o600);
    } catch (err) {
      ctx.runSecrets.delete(runId);
      await ctx.runs.update(
        runId,
        { state: "failed", reason: ctx.redactor.redact(`resume failed: ${(err as Error).message}`), finished: true },
        ["starting"],
      );
      await syncEntry(ctx, await ctx.runs.get(runId));
      return;
    }
    const entry = run.entry_id ? ((await ctx.board.find(run.entry_id))?.entry ?? null) : null;
    return launch(ctx, run, { fresh: false, entry });
  })();
  active.attempt = started;
  // However the attempt ends (a failed restore never reaches launch, which clears it itself).
  void started.finally(() => {
    if (active.attempt === started) active.attempt = null;
  });
  return { run, noop: false, finished: started.then(() => whenIdle(ctx, runId)) };
}

/**
 * Bring the waiting checkpoint into this machine's vault: from the shared store (PostgreSQL) when
 * it is there, else (a run that waited before checkpoints were kept by the supervisor, on this
 * machine) from the sprite's own checkpoint directory.
 */
async function fetchCheckpoint(ctx: SupervisorContext, run: RunRecord, id: string, elsewhere: boolean): Promise<void> {
  if (ctx.shared) {
    try {
      await ctx.shared.pull(ctx.checkpoints, run.id, id);
      return;
    } catch (err) {
      if (!hasCode(err, "checkpoint_not_found") || elsewhere) throw checkpointGone(run.id, id, (err as Error).message);
    }
  } else if (elsewhere) {
    throw checkpointGone(
      run.id,
      id,
      `it was kept on ${run.host}, and this store (${ctx.store.dialect}) does not share checkpoints between machines: resume it on ${run.host}, or use PostgreSQL`,
    );
  }
  try {
    ctx.checkpoints.adopt(run.id, run.checkpoint_dir, id);
  } catch (err) {
    throw checkpointGone(run.id, id, (err as Error).message);
  }
}

function checkpointGone(runId: string, id: string, why: string): NotFoundError {
  return new NotFoundError(
    "checkpoint_not_found",
    `checkpoint ${id} of run ${runId} cannot be restored (${why}): the run cannot be resumed; cancel it with pmagent runs cancel ${runId}`,
  );
}

/** Thrown inside the resume's transaction to roll it back when another resume won the run. */
class ResumeLost extends Error {}

/** pmagent's own files inside a workspace (relative paths), when the workspace is the project itself. */
function ownPathsIn(ctx: SupervisorContext, workspace: string): string[] {
  const ws = resolve(workspace);
  return hiddenFromSprites(
    ctx.options.project,
    ctx.store.dialect === "sqlite" ? ctx.store.location : null,
    ctx.env.HOME,
  )
    .map((p) => relative(ws, p))
    .filter((rel) => rel !== "" && !rel.startsWith("..") && !isAbsolute(rel))
    .map((rel) => rel.split(sep).join("/"));
}

/**
 * A blocking action's result that does not satisfy the WAITING event's expected_inputs: the sprite
 * waits for a person (the spec's PR_REVIEW after OPEN_PR). The run keeps waiting; the result is
 * held on it and handed over in the `context` of the person's resume (`pmagent resume`, the API,
 * MCP, the console). An `action` in the held context is also kept in its `actions` list, so a
 * second blocking action before the same WAITING does not hide the first.
 */
async function hold(ctx: SupervisorContext, run: RunRecord, context: Record<string, unknown>): Promise<ResumeResult> {
  const waiting = run.waiting!;
  const held = waiting.context ?? {};
  const keyOf = (a: unknown) =>
    a && typeof a === "object" ? (a as { idempotency_key?: unknown }).idempotency_key : undefined;
  const incoming = keyOf(context.action);
  // The same action handed over again (after a restart) replaces its earlier copy.
  const actions = (Array.isArray(held.actions) ? (held.actions as unknown[]) : []).filter(
    (a) => incoming === undefined || keyOf(a) !== incoming,
  );
  if (context.action !== undefined) actions.push(context.action);
  const merged = { ...held, ...context, ...(actions.length > 0 ? { actions } : {}) };
  const stored = await ctx.runs.update(run.id, { waiting: { ...waiting, context: merged } }, ["waiting"]);
  const now = await ctx.runs.get(run.id);
  if (!stored) {
    throw new RefusedError(
      "run_not_waiting",
      `run ${run.id} is ${now.state}, not waiting: the action's result could not be held for its resume`,
      { run: run.id, state: now.state },
    );
  }
  const missing = checkInputs({}, waiting.expected_inputs)
    .map((m) => m.replace(/^inputs\./, ""))
    .join("; ");
  ctx.log.info(
    { run: run.id, reason: waiting.reason },
    `run ${run.id} waits (${waiting.reason}) for a person's inputs (${missing}); the action's result is held for its resume: pmagent resume ${run.id}`,
  );
  return { run: now, noop: false, held: true, finished: Promise.resolve(now) };
}
