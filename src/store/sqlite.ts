import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { EventEmitter } from "node:events";
import { setTimeout as sleep } from "node:timers/promises";
import type { Worker } from "node:worker_threads";
import { startThread, UnavailableError } from "../core/index.js";
import { Database, type Statement } from "./better-sqlite3.js";
import { busyWaitMs, isBusy, storeBusy } from "./busy.js";
import { assertUsableSqlitePath } from "./sqlite-path.js";
import type { Queryable, RunResult, SqlParam, Store, TransactionOptions, Unlisten } from "./types.js";

/**
 * Parameters as better-sqlite3 binds them (booleans as 0/1), copied only when a boolean is among
 * them. Callers spread them into arguments: better-sqlite3 binds arguments faster than one array's
 * elements (measured: a 640-parameter insert took a fifth longer bound from an array).
 */
function toSqlite(params: readonly SqlParam[] | undefined): unknown[] {
  if (!params) return [];
  for (const p of params)
    if (typeof p === "boolean") return params.map((x) => (typeof x === "boolean" ? (x ? 1 : 0) : x));
  return params as unknown[];
}

/**
 * better-sqlite3 is synchronous; this adapter serializes work on its one connection with an
 * async mutex so that an open transaction is never interleaved with another caller's statements.
 */
export class SqliteStore implements Store {
  readonly dialect = "sqlite" as const;
  readonly location: string;
  private readonly db: Database;
  private readonly statements = new Map<string, Statement>();
  private readonly events = new EventEmitter();
  private queue: Promise<unknown> = Promise.resolve();
  private closed = false;
  private checkpointer: Checkpointer | undefined;
  private readonly busyTimeoutMs: number;
  private readonly yieldWhileBusy: boolean;

  constructor(file: string, options: SqliteOptions = {}) {
    this.location = file;
    this.busyTimeoutMs = options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS;
    this.yieldWhileBusy = options.yieldWhileBusy ?? false;
    if (file !== ":memory:") assertUsableSqlitePath(file, options.source);
    try {
      if (file !== ":memory:") mkdirSync(dirname(file), { recursive: true });
      this.db = new Database(file, { timeout: this.busyTimeoutMs });
      this.db.pragma("journal_mode = WAL");
      this.db.pragma("synchronous = NORMAL");
      this.db.pragma("foreign_keys = ON");
      // Statement journals in memory: a multi-row INSERT journals every page it touches that the
      // transaction already had, and on disk (SQLite's default) that was more page writes than
      // the WAL itself took on a bulk insert (measured: 2.4 temp-file writes per WAL frame).
      this.db.pragma("temp_store = MEMORY");
      // A page cache large enough for a bulk transaction's dirty pages (SQLite's default is 2 MB):
      // a smaller one spills them to the WAL mid-transaction and reads them back, which was a
      // quarter more page writes and twice the page reads on a bulk insert (measured with strace).
      // The cache grows only as pages are used.
      this.db.pragma(`cache_size = -${CACHE_KIB}`);
      // SQLite waits for a lock by sleeping on this thread: a yielding store waits a slice of it
      // and then tries again from a timer (see whenFree), so the event loop goes on meanwhile.
      if (this.yieldWhileBusy) this.db.pragma(`busy_timeout = ${BUSY_SLICE_MS}`);
    } catch (err) {
      throw new UnavailableError(
        "store_open_failed",
        `cannot open SQLite database ${file}: ${(err as Error).message}`,
        { cause: err },
      );
    }
    this.events.setMaxListeners(0);
  }

  private prepare(sql: string): Statement {
    let stmt = this.statements.get(sql);
    if (!stmt) {
      stmt = this.db.prepare(sql);
      this.statements.set(sql, stmt);
    }
    return stmt;
  }

  private exclusive<T>(fn: () => Promise<T> | T): Promise<T> {
    const next = this.queue.then(fn, fn);
    this.queue = next.catch(() => undefined);
    return next;
  }

  /**
   * Run one attempt of a statement or of a transaction's BEGIN in the queue. When it finds the
   * write lock taken (Busy), a yielding store lets the queue go on, so this process's reads and
   * other work are served while another process writes, and tries again after a pause, until it
   * has waited as long as it may (busyWaitMs: an HTTP request less than the store's timeout);
   * a blocking store has already waited its busy timeout inside SQLite. Then: store_busy.
   */
  private whenFree<T>(attempt: () => Promise<T>): Promise<T> {
    return attempt().catch(async (err: unknown) => {
      if (!(err instanceof Busy)) throw err;
      if (!this.yieldWhileBusy) throw storeBusy(this.location, this.busyTimeoutMs, err.cause);
      const limit = busyWaitMs(this.busyTimeoutMs);
      const started = Date.now() - BUSY_SLICE_MS;
      for (let pause = 1; ; pause = Math.min(pause * 2, MAX_BUSY_PAUSE_MS)) {
        const waited = Date.now() - started;
        if (waited + pause > limit) throw storeBusy(this.location, waited, err.cause);
        await sleep(pause);
        try {
          return await attempt();
        } catch (again) {
          if (!(again instanceof Busy)) throw again;
        }
      }
    });
  }

  /** A statement on its own, in the queue; tried again while busy (it changed nothing). */
  private statement<T>(run: (q: Queryable) => Promise<T>): Promise<T> {
    return this.whenFree(() => this.exclusive(() => run(this.direct()).catch(markBusy)));
  }

  private direct(): Queryable {
    return {
      dialect: "sqlite",
      all: async <T>(sql: string, params?: readonly SqlParam[]) => this.prepare(sql).all(...toSqlite(params)) as T[],
      get: async <T>(sql: string, params?: readonly SqlParam[]) =>
        this.prepare(sql).get(...toSqlite(params)) as T | undefined,
      run: async (sql: string, params?: readonly SqlParam[]): Promise<RunResult> => ({
        changes: this.prepare(sql).run(...toSqlite(params)).changes,
      }),
      exec: async (sql: string) => {
        this.db.exec(sql);
      },
      notify: async (channel: string, payload = "") => {
        // In-process only; a listener woken inside a transaction waits on the mutex for the commit.
        this.events.emit(channel, payload);
      },
    };
  }

  all<T = Record<string, unknown>>(sql: string, params?: readonly SqlParam[]): Promise<T[]> {
    return this.statement((q) => q.all<T>(sql, params));
  }
  get<T = Record<string, unknown>>(sql: string, params?: readonly SqlParam[]): Promise<T | undefined> {
    return this.statement((q) => q.get<T>(sql, params));
  }
  run(sql: string, params?: readonly SqlParam[]): Promise<RunResult> {
    return this.statement((q) => q.run(sql, params));
  }
  exec(sql: string): Promise<void> {
    // Several statements: one may have run before another found the lock taken, so never retried.
    return this.exclusive(() => this.direct().exec(sql));
  }

  transaction<T>(fn: (tx: Queryable) => Promise<T>, options: TransactionOptions = {}): Promise<T> {
    return this.whenFree(() =>
      this.exclusive(async () => {
        // The lock is taken here, before `fn` runs: only this step is tried again while busy.
        try {
          this.db.exec(options.immediate === false ? "BEGIN" : "BEGIN IMMEDIATE");
        } catch (err) {
          markBusy(err);
        }
        try {
          const result = await fn(this.direct());
          this.db.exec("COMMIT");
          if (options.large && !this.checkpointer && this.location !== ":memory:") this.startCheckpointer();
          this.checkpointer?.request();
          return result;
        } catch (err) {
          if (this.db.inTransaction) this.db.exec("ROLLBACK");
          throw err;
        }
      }),
    );
  }

  channelName(channel: string): string {
    return channel;
  }

  async listen(channel: string, handler: (payload: string) => void): Promise<Unlisten> {
    this.events.on(channel, handler);
    return async () => {
      this.events.off(channel, handler);
    };
  }

  notify(channel: string, payload = ""): Promise<void> {
    return this.direct().notify(channel, payload);
  }

  /**
   * Resolves once the write-ahead log checkpoints asked for by large transactions so far have run
   * (at once when there is no checkpoint thread): what a caller waits on before it measures the log.
   */
  checkpointed(): Promise<void> {
    return this.checkpointer?.idle() ?? Promise.resolve();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.queue;
    await this.checkpointer?.close();
    // SQLite's advice for short-lived connections: gather planner statistics where they are missing
    // or stale, bounded by analysis_limit. Without them it picks poor plans on large boards. Never
    // wait for another writer to do it: the next connection will.
    try {
      this.db.pragma("busy_timeout = 0");
      this.db.pragma("analysis_limit = 1000");
      this.db.pragma("optimize");
    } catch {
      // SQLITE_BUSY / read-only file: statistics are an optimisation only.
    }
    this.db.close();
  }

  private startCheckpointer(): void {
    this.checkpointer = new Checkpointer(this.location, () => {
      // The thread failed: checkpoint in the commits again, as SQLite does by default.
      this.checkpointer = undefined;
      if (!this.closed) this.db.pragma(`wal_autocheckpoint = ${DEFAULT_AUTOCHECKPOINT_PAGES}`);
    });
    // A safety net only: the thread checkpoints after every commit, long before this.
    this.db.pragma(`wal_autocheckpoint = ${SAFETY_AUTOCHECKPOINT_PAGES}`);
  }
}

export interface SqliteOptions {
  /** How long a write waits for another connection's write lock before store_busy (default 30 s). */
  busyTimeoutMs?: number;
  /**
   * Wait for that lock without blocking the event loop (see whenFree): for a server, whose other
   * requests must be answered meanwhile. Otherwise SQLite sleeps on the thread until it is free.
   */
  yieldWhileBusy?: boolean;
  /** Where the file's path came from, named when it is refused (e.g. `PMAGENT_SQLITE_PATH`). */
  source?: string;
}

export const DEFAULT_BUSY_TIMEOUT_MS = 30_000;
/** A yielding store's wait inside SQLite per try, and its longest pause between tries. */
const BUSY_SLICE_MS = 10;
const MAX_BUSY_PAUSE_MS = 50;

/** A lock that was taken where trying again is safe: nothing had been done yet. */
class Busy extends Error {}

function markBusy(err: unknown): never {
  throw isBusy(err) ? new Busy("SQLITE_BUSY", { cause: err }) : err;
}

/** The connection's page cache, in KiB. */
const CACHE_KIB = 64 * 1024;
const DEFAULT_AUTOCHECKPOINT_PAGES = 1000;
const SAFETY_AUTOCHECKPOINT_PAGES = 10_000;

/**
 * Checkpoints a store's write-ahead log on a thread with its own connection, so a writer storing
 * in bulk does not pay for copying the log into the database inside its commits (about a third of
 * the time of a large insert). Requests while one runs are folded into one more run after it.
 */
class Checkpointer {
  private readonly worker: Worker;
  private running = false;
  private again = false;
  private stopped = false;
  private idleWaiters: Array<() => void> = [];

  constructor(file: string, onFailure: () => void) {
    this.worker = startThread("sqlite-checkpoint-thread", import.meta.url, { file });
    this.worker.on("message", () => {
      this.running = false;
      if (this.again) {
        this.again = false;
        this.request();
      } else {
        this.worker.unref();
        for (const resolve of this.idleWaiters.splice(0)) resolve();
      }
    });
    const fail = () => {
      for (const resolve of this.idleWaiters.splice(0)) resolve();
      if (this.stopped) return;
      this.stopped = true;
      onFailure();
    };
    this.worker.on("error", fail);
    this.worker.on("exit", fail);
  }

  request(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    this.worker.ref();
    this.worker.postMessage("checkpoint");
  }

  /** Resolves once the runs requested so far have finished (at once when none is under way). */
  idle(): Promise<void> {
    if (!this.running || this.stopped) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  async close(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    const exited = new Promise((resolve) => this.worker.once("exit", resolve));
    this.worker.postMessage("close");
    await exited;
  }
}
