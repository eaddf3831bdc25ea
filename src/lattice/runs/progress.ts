/**
 * Following a run as it is stored: each write of a run's events, logs or state wakes the run's
 * followers through the store's notifications (PostgreSQL: LISTEN/NOTIFY, every process; SQLite:
 * this process only, so a follower in another process also reads every `pollMs`). A follower reads
 * what is new after its cursor, then sleeps until woken, and stops once the run has finished and
 * everything stored before that is read.
 */
import type { Queryable, Store } from "../../store/index.js";
import type { RunLogLine, StoredEvent } from "./records.js";
import type { RunStore } from "./run-store.js";
import { isTerminalRunState } from "./states.js";

export const RUN_PROGRESS_CHANNEL = "lattice_run";

/**
 * How often a follower reads unwoken: SQLite wakes only followers in the writing process, so one
 * in another process (the CLI beside a worker) reads often; PostgreSQL wakes every process, and
 * the read is only a safety net.
 */
export function followPollMs(store: Store): number {
  return store.dialect === "sqlite" ? 250 : 2_000;
}

/** Rows read per query while following; a full page is followed at once by the next. */
const FOLLOW_PAGE = 500;

/** Wake the run's followers (inside a transaction: PostgreSQL delivers it at commit). */
export function notifyRunProgress(q: Queryable, runId: string): Promise<void> {
  return q.notify(RUN_PROGRESS_CHANNEL, runId);
}

/**
 * A wake-up for one run: `wait` resolves on the next notification for it, after `pollMs`, or on
 * abort. A notification that came since the last `wait` began counts: none is lost between a
 * read and the sleep after it.
 */
export interface RunProgressWaker {
  wait(pollMs: number, signal?: AbortSignal): Promise<void>;
  close(): Promise<void>;
}

export async function runProgressWaker(store: Store, runId: string): Promise<RunProgressWaker> {
  let pending = false;
  let wake: (() => void) | undefined;
  let closing: Promise<void> | undefined;
  const unlisten = await store.listen(RUN_PROGRESS_CHANNEL, (payload) => {
    if (payload !== runId) return;
    pending = true;
    wake?.();
  });
  return {
    async wait(pollMs, signal) {
      if (pending || signal?.aborted) {
        pending = false;
        return;
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, pollMs);
        signal?.addEventListener("abort", done, { once: true });
        function done() {
          clearTimeout(timer);
          signal?.removeEventListener("abort", done);
          wake = undefined;
          resolve();
        }
        wake = done;
      });
      pending = false;
    },
    close: () => (closing ??= unlisten()),
  };
}

export interface FollowOptions {
  /** Read after this seq (0: from the start). */
  afterSeq?: number;
  /** How often a follower reads without a wake-up (default: followPollMs). */
  pollMs?: number;
  /** Stops the following (then the generator just ends). */
  signal?: AbortSignal;
}

/**
 * Items of a run after a seq, as stored, batch by batch, until the run has finished and all it
 * stored is read. The run's state is read before its items, so an item stored just before the run
 * finished is never missed. Throws run_not_found for an unknown run.
 */
async function* followRun<T extends { seq: number }>(
  runs: RunStore,
  runId: string,
  read: (afterSeq: number, limit: number) => Promise<T[]>,
  o: FollowOptions,
): AsyncGenerator<T[]> {
  await runs.get(runId, runs.store, false);
  const waker = await runProgressWaker(runs.store, runId);
  try {
    let after = o.afterSeq ?? 0;
    while (!o.signal?.aborted) {
      const finished = isTerminalRunState((await runs.get(runId, runs.store, false)).state);
      const items = await read(after, FOLLOW_PAGE);
      if (items.length > 0) {
        after = items[items.length - 1]!.seq;
        yield items;
      }
      if (items.length === FOLLOW_PAGE) continue;
      if (finished) return;
      await waker.wait(o.pollMs ?? followPollMs(runs.store), o.signal);
    }
  } finally {
    await waker.close();
  }
}

/** A run's events in stored order (seq), then new ones as they are stored, until the run ends. */
export function followRunEvents(
  runs: RunStore,
  runId: string,
  o: FollowOptions & { type?: string },
): AsyncGenerator<StoredEvent[]> {
  return followRun(
    runs,
    runId,
    (afterSeq, limit) => runs.events(runId, { type: o.type, afterSeq, limit, order: "seq" }),
    o,
  );
}

/** A run's log lines, then new ones as they are stored, until the run ends. */
export function followRunLogs(
  runs: RunStore,
  runId: string,
  o: FollowOptions & { stream?: string },
): AsyncGenerator<RunLogLine[]> {
  return followRun(runs, runId, (afterSeq, limit) => runs.logs(runId, { stream: o.stream, afterSeq, limit }), o);
}
