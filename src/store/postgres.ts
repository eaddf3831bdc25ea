import { createRequire } from "node:module";
import type pgTypes from "pg";
import { UnavailableError, redactUrl } from "../core/index.js";
import type { Queryable, RunResult, SqlParam, Store, Unlisten } from "./types.js";

// BIGINT columns hold millisecond times and counters, all well inside 2^53.
// pg (CommonJS) is required when the first PostgreSQL store is made, not when the store module is
// imported: the CLI on the embedded SQLite store never loads it.
const requireCjs = createRequire(import.meta.url);
let pgModule: typeof pgTypes | undefined;
function loadPg(): typeof pgTypes {
  if (!pgModule) {
    pgModule = requireCjs("pg") as typeof pgTypes;
    pgModule.types.setTypeParser(20, (v: string) => Number(v));
  }
  return pgModule;
}

/** `?` placeholders to `$1, $2, …` (statements never contain a literal `?`). */
export function toPgPlaceholders(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}

/** Parameterized statements become named (prepared) ones, up to this many distinct texts. */
const MAX_PREPARED = 500;
const converted = new Map<string, { text: string; name: string | undefined }>();
function convert(sql: string): { text: string; name: string | undefined } {
  let out = converted.get(sql);
  if (out === undefined) {
    out = { text: toPgPlaceholders(sql), name: converted.size < MAX_PREPARED ? `pm_${converted.size + 1}` : undefined };
    converted.set(sql, out);
  }
  return out;
}

/**
 * Run a statement. With parameters it is prepared once per connection and then only bound and
 * executed (no parse or plan per call: the claim loop's statements are run thousands of times).
 * A statement prepared before a table changed shape ("cached plan must not change result type",
 * 0A000) is re-run unnamed outside a transaction (inside one, the failure already aborted it).
 */
async function query(
  client: pgTypes.Pool | pgTypes.PoolClient,
  sql: string,
  params: readonly SqlParam[] | undefined,
): Promise<pgTypes.QueryResult> {
  const { text, name } = convert(sql);
  const values = params as unknown[] | undefined;
  if (values === undefined || name === undefined) return client.query(text, values);
  try {
    return await client.query({ name, text, values });
  } catch (err) {
    if ((err as { code?: string }).code !== "0A000" || !(client instanceof loadPg().Pool)) throw err;
    return client.query(text, values);
  }
}

function queryable(client: pgTypes.Pool | pgTypes.PoolClient, channelName: (channel: string) => string): Queryable {
  return {
    dialect: "postgres",
    all: async <T>(sql: string, params?: readonly SqlParam[]) => (await query(client, sql, params)).rows as T[],
    get: async <T>(sql: string, params?: readonly SqlParam[]) =>
      (await query(client, sql, params)).rows[0] as T | undefined,
    run: async (sql: string, params?: readonly SqlParam[]): Promise<RunResult> => ({
      changes: (await query(client, sql, params)).rowCount ?? 0,
    }),
    exec: async (sql: string) => {
      await client.query(sql);
    },
    notify: async (channel: string, payload = "") => {
      await client.query("SELECT pg_notify($1, $2)", [channelName(channel), payload]);
    },
  };
}

export interface PostgresOptions {
  /** Use this schema (created if missing) instead of `public`: isolates tests and projects. */
  schema?: string;
  max?: number;
  /** How long a transaction may sit idle between statements before the server ends it (default IDLE_IN_TRANSACTION_MS). */
  idleInTransactionMs?: number;
}

/** How long a transaction may sit idle between statements before the server ends it. */
export const IDLE_IN_TRANSACTION_MS = 15_000;

export class PostgresStore implements Store {
  readonly dialect = "postgres" as const;
  readonly location: string;
  private readonly pool: pgTypes.Pool;
  private readonly url: string;
  private readonly schema: string | undefined;
  private readonly q: Queryable;
  private listener: pgTypes.Client | undefined;
  private listenerReady: Promise<pgTypes.Client> | undefined;
  private readonly handlers = new Map<string, Set<(payload: string) => void>>();

  private constructor(url: string, options: PostgresOptions) {
    this.url = url;
    this.schema = options.schema;
    this.location = redactUrl(url) + (options.schema ? ` (schema ${options.schema})` : "");
    this.pool = new (loadPg().Pool)({
      connectionString: url,
      max: options.max ?? 10,
      options: options.schema ? `-c search_path=${options.schema}` : undefined,
      // A process that stalls inside a transaction (stopped, swapped out, hung) would hold its row
      // locks for as long as it lives, and a worker taking its entry over would wait behind them:
      // the server ends such a transaction instead. pmagent's transactions never sit idle between
      // statements for more than a moment.
      idle_in_transaction_session_timeout: options.idleInTransactionMs ?? IDLE_IN_TRANSACTION_MS,
    });
    // An idle client's error (server restart) must not crash the process; the next query reports it.
    this.pool.on("error", () => undefined);
    this.q = queryable(this.pool, (c) => this.channelName(c));
  }

  static async connect(url: string, options: PostgresOptions = {}): Promise<PostgresStore> {
    if (options.schema !== undefined && !/^[a-z_][a-z0-9_]*$/.test(options.schema)) {
      throw new UnavailableError(
        "store_bad_schema",
        `PostgreSQL schema name "${options.schema}" must match [a-z_][a-z0-9_]*`,
      );
    }
    const store = new PostgresStore(url, options);
    try {
      if (options.schema) {
        const admin = new (loadPg().Client)({ connectionString: url });
        await admin.connect();
        try {
          await admin.query(`CREATE SCHEMA IF NOT EXISTS ${options.schema}`);
        } catch (err) {
          // Two processes creating the schema at once: the loser sees a unique violation.
          if ((err as { code?: string }).code !== "23505") throw err;
        } finally {
          await admin.end();
        }
      }
      await store.pool.query("SELECT 1");
    } catch (err) {
      await store.pool.end().catch(() => undefined);
      throw new UnavailableError(
        "store_unreachable",
        `cannot connect to PostgreSQL at ${redactUrl(url)}: ${(err as Error).message}`,
        { cause: err },
      );
    }
    return store;
  }

  all<T = Record<string, unknown>>(sql: string, params?: readonly SqlParam[]): Promise<T[]> {
    return this.q.all<T>(sql, params);
  }
  get<T = Record<string, unknown>>(sql: string, params?: readonly SqlParam[]): Promise<T | undefined> {
    return this.q.get<T>(sql, params);
  }
  run(sql: string, params?: readonly SqlParam[]): Promise<RunResult> {
    return this.q.run(sql, params);
  }
  exec(sql: string): Promise<void> {
    return this.q.exec(sql);
  }

  async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    // The server may end the connection between two statements (a transaction left idle too long):
    // the next statement reports it; an 'error' event with no listener would end the process.
    let lost: Error | undefined;
    const onError = (err: Error) => (lost = err);
    client.on("error", onError);
    try {
      await client.query("BEGIN");
      const result = await fn(queryable(client, (c) => this.channelName(c)));
      await client.query("COMMIT");
      return result;
    } catch (err) {
      await client.query("ROLLBACK").catch(() => undefined);
      throw err;
    } finally {
      client.off("error", onError);
      // A connection the server ended is destroyed rather than handed back to the pool.
      client.release(lost);
    }
  }

  channelName(channel: string): string {
    // Channels are per schema so that isolated projects/tests never wake each other.
    return `${this.schema ?? "public"}_${channel}`.replace(/[^a-z0-9_]/gi, "_").toLowerCase();
  }

  private async ensureListener(): Promise<pgTypes.Client> {
    if (!this.listenerReady) {
      this.listenerReady = (async () => {
        const client = new (loadPg().Client)({ connectionString: this.url });
        client.on("error", () => undefined);
        await client.connect();
        client.on("notification", (msg) => {
          for (const h of this.handlers.get(msg.channel) ?? []) h(msg.payload ?? "");
        });
        this.listener = client;
        return client;
      })();
    }
    return this.listenerReady;
  }

  async listen(channel: string, handler: (payload: string) => void): Promise<Unlisten> {
    const name = this.channelName(channel);
    const client = await this.ensureListener();
    let set = this.handlers.get(name);
    if (!set) {
      set = new Set();
      this.handlers.set(name, set);
      await client.query(`LISTEN ${name}`);
    }
    set.add(handler);
    return async () => {
      set.delete(handler);
    };
  }

  notify(channel: string, payload = ""): Promise<void> {
    return this.q.notify(channel, payload);
  }

  async close(): Promise<void> {
    if (this.listener) await this.listener.end().catch(() => undefined);
    await this.pool.end();
  }
}
