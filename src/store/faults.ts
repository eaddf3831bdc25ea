/**
 * Faults of the database itself, as opposed to a statement's own error: the disk is full, the
 * connection was lost, the file could not be written, another writer held the lock. A statement
 * that failed on one of these may succeed as it is once the fault clears; one that failed on its
 * own (a constraint, a bug) fails the same way again.
 */
import { setTimeout as sleep } from "node:timers/promises";

export type StoreFault = "disk_full" | "connection_lost" | "busy" | "io";

/** PostgreSQL error classes and codes that are faults (see the server's errcodes.txt). */
const PG_FAULTS: Array<[RegExp, StoreFault]> = [
  [/^53100$/, "disk_full"],
  [/^08/, "connection_lost"], // connection exception
  [/^57P0[1-3]$/, "connection_lost"], // admin_shutdown (pg_terminate_backend), crash_shutdown, cannot_connect_now
  [/^25P03$/, "connection_lost"], // idle_in_transaction_session_timeout: the server ended the session
  [/^(40001|40P01|55P03)$/, "busy"], // serialization failure, deadlock, lock not available
  [/^53/, "io"], // insufficient resources (memory, connections)
  [/^58/, "io"], // system error (I/O)
];
const SQLITE_FAULTS: Array<[RegExp, StoreFault]> = [
  [/^SQLITE_FULL/, "disk_full"],
  [/^SQLITE_(BUSY|LOCKED)/, "busy"],
  [/^SQLITE_(IOERR|CANTOPEN|PROTOCOL)/, "io"],
];
const NET_CODES = new Set([
  "ECONNRESET",
  "ECONNREFUSED",
  "ECONNABORTED",
  "EPIPE",
  "ETIMEDOUT",
  "ENOTCONN",
  "EHOSTUNREACH",
  "ENETUNREACH",
]);
/** What the pg client throws, without a code, when its connection ends or could not be made. */
const PG_CONNECTION_TEXT =
  /^(Connection terminated|Client has encountered a connection error|timeout exceeded when trying to connect)/;

/** The fault `err` (or an error it wraps) is, or null when it is not one. */
export function storeFault(err: unknown): StoreFault | null {
  for (let e = err, depth = 0; e instanceof Error && depth < 4; e = e.cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string") {
      if (code.startsWith("SQLITE_")) return match(SQLITE_FAULTS, code);
      if (NET_CODES.has(code)) return "connection_lost";
      if (/^[0-9A-Z]{5}$/.test(code)) {
        const fault = match(PG_FAULTS, code);
        if (fault) return fault;
      }
    }
    if (PG_CONNECTION_TEXT.test(e.message)) return "connection_lost";
  }
  return null;
}

function match(table: Array<[RegExp, StoreFault]>, code: string): StoreFault | null {
  for (const [re, fault] of table) if (re.test(code)) return fault;
  return null;
}

/** What happened, for a message: "disk full while storing events: …". */
export function describeStoreFault(fault: StoreFault): string {
  switch (fault) {
    case "disk_full":
      return "disk full";
    case "connection_lost":
      return "the database connection was lost";
    case "busy":
      return "the database stayed locked by another writer";
    case "io":
      return "the database could not read or write";
  }
}

export interface FaultRetryOptions {
  /** Tries in all (default 6). */
  attempts?: number;
  /** The wait before the second try; it doubles for each one after (default 100 ms: about 3 s over 6 tries). */
  firstDelayMs?: number;
  /** The longest wait between two tries (default 5 s). */
  maxDelayMs?: number;
  /** More tries than `attempts` while this says the work is still wanted (a sprite still writes what it is to store). */
  keepTrying?: () => boolean;
  /** Called after a try failed on a fault, before the wait for the next one. */
  onRetry?: (err: unknown, attempt: number) => void;
}

export const DEFAULT_FAULT_ATTEMPTS = 6;
export const DEFAULT_FAULT_DELAY_MS = 100;
const DEFAULT_FAULT_MAX_DELAY_MS = 5000;

/**
 * Run `fn` (given the try's number, from 1) until it succeeds, again after each store fault, at
 * most `attempts` times (or for as long as `keepTrying` says); the last error is thrown as it
 * is. Any other error is thrown at once. Only for work that is the same when done again (a
 * transaction: a failed one left nothing).
 */
export async function retryStoreFaults<T>(
  fn: (attempt: number) => Promise<T>,
  options: FaultRetryOptions = {},
): Promise<T> {
  const attempts = options.attempts ?? DEFAULT_FAULT_ATTEMPTS;
  const max = options.maxDelayMs ?? DEFAULT_FAULT_MAX_DELAY_MS;
  let delay = options.firstDelayMs ?? DEFAULT_FAULT_DELAY_MS;
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn(attempt);
    } catch (err) {
      if (storeFault(err) === null || (attempt >= attempts && !options.keepTrying?.())) throw err;
      options.onRetry?.(err, attempt);
      if (delay > 0) await sleep(delay);
      delay = Math.min(max, delay * 2);
    }
  }
}
