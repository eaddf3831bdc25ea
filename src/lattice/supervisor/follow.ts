/**
 * The follow loop: while a sprite runs, its stdout/stderr files and outbox are read from the
 * run's stored offsets into the ingestor (file watch plus polling) and the entry's claim is
 * heartbeated; once it exits, everything left is drained. A store fault the ingestor's tries do
 * not outlast (they go on while the sprite runs) leaves the run for `pmagent runs reconcile`.
 */
import { closeSync, fstatSync, readSync, statSync, watch, type FSWatcher } from "node:fs";
import { join } from "node:path";
import { hasCode, type PmagentError, type Redactor } from "../../core/index.js";
import { retryStoreFaults } from "../../store/index.js";
import { INGEST_STORE_FAULT, RunIngestor } from "../ingest/index.js";
import { outboxPath, openRegularFile, removeResume } from "../protocol/index.js";
import { UNFINISHED_RUN_STATES, type RunRecord } from "../runs/index.js";
import { streamFiles, type Exit, type SupervisorContext } from "./context.js";
import { enforceBudget } from "./budget.js";
import { acted, onNewEvents } from "./dispatch.js";
import { endRunProcesses, stopSprite } from "./processes.js";

const READ_CHUNK = 1024 * 1024;

/** The progress watchdog (config `runner.idle_timeout_s`): `onIdle` once no output and no event came for `ms`. */
export interface IdleWatch {
  ms: number;
  onIdle: () => void;
}

/**
 * Store the run's output while the sprite runs and drain it all once `exited` resolves:
 * stdout/stderr files and the outbox from the run's stored offsets. Null when a store fault
 * stopped the storing: the run is left unfinished for reconcile (see leaveForReconcile), not settled.
 */
export async function follow(
  ctx: SupervisorContext,
  run: RunRecord,
  exited: Promise<Exit>,
  redactor: Redactor,
  idle?: IdleWatch,
): Promise<Exit | null> {
  const files = streamFiles(run);
  let running = true;
  const now = ctx.options.clock ?? Date.now;
  let lastProgress = now();
  const ingestor = new RunIngestor({
    store: ctx.options.store,
    runId: run.id,
    attempt: run.attempt,
    outboxPath: outboxPath(run.workspace),
    violationsPath: join(run.run_dir, "violations.log"),
    outbox: run.outbox,
    stdoutOffset: run.stdout_offset,
    stderrOffset: run.stderr_offset,
    logBytes: run.log_bytes,
    logTruncated: run.log_truncated,
    redactor,
    logCapBytes: ctx.options.logCapBytes,
    clock: ctx.options.clock,
    identity: { sprite_id: run.sprite_id, work_item_id: run.work_item_id },
    keep: acted(ctx, run),
    onNewEvents: (events) => onNewEvents(ctx, run.id, events),
    onUsage: () => enforceBudget(ctx, run.id),
    onRoom: () => pump(),
    retries: {
      // While the sprite runs the tries go on: what it writes is kept in its outbox and stdout.
      keepTrying: () => running,
      onRetry: (err, attempt) =>
        ctx.log.warn(
          { run: run.id, attempt, err: (err as Error).message },
          "storing the run's events failed; trying again",
        ),
    },
  });
  // Read both files to their ends, stopping early while too much waits to be stored.
  const pump = () => {
    let any = false;
    for (;;) {
      if (ingestor.full) return any;
      const offsets = ingestor.streamOffsets;
      const a = readFrom(
        files.stdout,
        offsets.stdout,
        (b) => ingestor.pushStdout(b),
        (n) => ingestor.stdoutBuffer(n),
      );
      const b = readFrom(files.stderr, offsets.stderr, (c) => ingestor.pushStderr(c));
      if (!a && !b) return any;
      any = true;
      lastProgress = now();
    }
  };
  // The outbox grows without stdout when a sprite writes only there (pmagent emit writes both).
  let outboxSize = -1;
  const outboxGrew = () => {
    const size = statSync(outboxPath(run.workspace), { throwIfNoEntry: false })?.size ?? -1;
    const grew = size !== outboxSize;
    outboxSize = size;
    return grew;
  };
  let idleFired = false;
  let watcher: FSWatcher | undefined;
  try {
    watcher = watch(run.run_dir, () => pump());
    watcher.on("error", () => undefined);
  } catch {
    watcher = undefined; // polling alone still works
  }
  const heartbeat = startHeartbeat(ctx, run);
  // A resume that carried a credential: resume.json goes once the sprite has read it, which it
  // does before its first event (the protocol's acknowledging INFO).
  let dropResume = run.attempt > 1 && ctx.runSecrets.has(run.id);
  const timer = setInterval(() => {
    pump();
    if (outboxGrew()) lastProgress = now();
    if (idle && !idleFired && now() - lastProgress >= idle.ms) {
      idleFired = true;
      idle.onIdle();
    }
    if (dropResume && ingestor.stored > 0) {
      dropResume = false;
      removeResume(run.workspace);
    }
    void ingestor.poll().catch(() => undefined);
  }, ctx.pollMs);
  let exit: Exit;
  try {
    exit = await exited;
    // Read on and heartbeat while what the sprite left running is stopped.
    const { lingered, left } = await endRunProcesses(run.id, ctx.pollMs);
    if (lingered > 0)
      ctx.log.warn(
        { run: run.id, processes: lingered, still_running: left },
        left > 0
          ? "processes of the run outlived the sprite's own and could not be stopped; its output is read to the end without them"
          : "processes of the run outlived the sprite's own; they were stopped before its output was read to the end",
      );
  } finally {
    running = false;
    clearInterval(timer);
    watcher?.close();
    heartbeat?.stop();
  }
  try {
    // Drain: read each file to its end, letting the store catch up whenever the queue fills.
    for (;;) {
      const more = pump();
      // Stopped by a full queue (not at the files' ends): read on once the flush below empties it.
      const stopped = ingestor.full;
      // A flush of its own (not just waiting for the queue), so a full queue always drains.
      await ingestor.poll();
      await ingestor.settle();
      if (!more && !stopped && !ingestor.full) break;
    }
    await ingestor.finish();
  } catch (err) {
    if (!hasCode(err, INGEST_STORE_FAULT)) throw err;
    await leaveForReconcile(ctx, run, err);
    return null;
  }
  return exit;
}

/**
 * A store fault stopped storing the run's output with its saved position where the last commit
 * put it: the run stays unfinished (its outcome is not known until its events are stored), with
 * the reason, and with no supervisor, so `pmagent runs reconcile` (in any process) takes it over
 * and reads on from that position, re-attaching to the sprite if it still runs.
 */
async function leaveForReconcile(ctx: SupervisorContext, run: RunRecord, err: PmagentError): Promise<void> {
  const reason = ctx.redactor.redact(err.message);
  ctx.log.error(
    { run: run.id, err: reason },
    "the run's events could not be stored; the run is left for `pmagent runs reconcile`",
  );
  // The store may still be faulty: without this, a dead supervisor's pid lets reconcile take the run over all the same.
  await retryStoreFaults(() => ctx.runs.update(run.id, { reason, supervisor_pid: null }, UNFINISHED_RUN_STATES)).catch(
    (e: unknown) =>
      ctx.log.error(
        { run: run.id, err: (e as Error).message },
        "the reason of a run left for reconcile could not be saved",
      ),
  );
}

/** A worker's run keeps its entry's claim alive; a claim lost to a takeover stops the sprite. */
function startHeartbeat(ctx: SupervisorContext, run: RunRecord): { stop(): void } | undefined {
  if (!run.worker || !run.entry_id) return undefined;
  const leaseMs = ctx.board.leaseMs;
  const timer = setInterval(
    () => {
      ctx.board.heartbeat(run.worker!, run.entry_id!, leaseMs).catch(async (err) => {
        if (!hasCode(err, "claim_lost")) return;
        clearInterval(timer);
        // Guarded: a run fenced by the takeover keeps the reason it was superseded with.
        await ctx.runs.update(
          run.id,
          { reason: `claim on entry ${run.entry_id} lost (${(err as Error).message}); the sprite was stopped` },
          UNFINISHED_RUN_STATES,
        );
        const current = await ctx.runs.get(run.id);
        if (current.sprite_pid) void stopSprite(current.sprite_pid, run.id);
      });
    },
    Math.max(50, Math.floor(leaseMs / 3)),
  );
  return { stop: () => clearInterval(timer) };
}

/** Read a file from `offset` to its end (or one chunk's worth), handing each chunk over; true if anything was read. `buffer`: where to read `n` bytes into (default a new buffer). */
function readFrom(
  path: string,
  offset: number,
  push: (b: Buffer) => void,
  buffer: (n: number) => Buffer = (n) => Buffer.allocUnsafe(n),
): boolean {
  let fd: number | null;
  try {
    // The sprite can reach its output files: one it swapped for a FIFO must not block this process.
    fd = openRegularFile(path, "the sprite's output file");
  } catch {
    return false;
  }
  if (fd === null) return false;
  try {
    const size = fstatSync(fd).size;
    if (size <= offset) return false;
    const len = Math.min(READ_CHUNK, size - offset);
    const buf = buffer(len);
    const n = readSync(fd, buf, 0, len, offset);
    if (n > 0) push(buf.subarray(0, n));
    return n > 0;
  } finally {
    closeSync(fd);
  }
}
