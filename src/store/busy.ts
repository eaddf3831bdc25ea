import { AsyncLocalStorage } from "node:async_hooks";
import { UnavailableError } from "../core/index.js";

interface BusyLimit {
  ms: number;
  /** False once the work that set the limit has settled. */
  open: boolean;
}

const limits = new AsyncLocalStorage<BusyLimit>();

/**
 * Run `fn` with its writes waiting at most `ms` for another process's write lock on a store that
 * waits without blocking (a SQLite store opened with `yieldWhileBusy`), then failing with
 * `store_busy`: what an HTTP request does, so it answers 503 soon instead of hanging. Work that
 * `fn` starts and that outlives it (a resumed run going on after the response) waits as long as
 * the store's own busy timeout again.
 */
export async function waitingAtMost<T>(ms: number, fn: () => Promise<T>): Promise<T> {
  const limit: BusyLimit = { ms, open: true };
  try {
    return await limits.run(limit, fn);
  } finally {
    limit.open = false;
  }
}

/** How long a write may wait for the lock here: the caller's limit, or the store's own. */
export function busyWaitMs(storeMs: number): number {
  const limit = limits.getStore();
  return limit?.open ? Math.min(limit.ms, storeMs) : storeMs;
}

/** SQLITE_BUSY: another connection holds the lock this statement needs. */
export function isBusy(err: unknown): boolean {
  return (err as { code?: unknown } | undefined)?.code === "SQLITE_BUSY";
}

/** The typed error a write gets when the lock stayed taken for as long as it could wait. */
export function storeBusy(location: string, waitedMs: number, cause: unknown): UnavailableError {
  return new UnavailableError(
    "store_busy",
    `the SQLite database ${location} is locked by another process's write (waited ${waitedMs} ms for it): nothing was written; try again in a moment`,
    { details: { retry_after_s: 1 }, cause },
  );
}
