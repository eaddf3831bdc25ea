export type Dialect = "sqlite" | "postgres";

export type SqlParam = string | number | bigint | boolean | null | Buffer;

export interface RunResult {
  changes: number;
}

/**
 * The SQL surface every module uses. Statements are written once with `?` placeholders in SQL
 * that both dialects accept (ON CONFLICT, RETURNING, CTEs); the few dialect-specific statements
 * branch on `dialect`. JSON is stored as TEXT, times as ISO strings plus integer milliseconds.
 */
export interface Queryable {
  readonly dialect: Dialect;
  all<T = Record<string, unknown>>(sql: string, params?: readonly SqlParam[]): Promise<T[]>;
  get<T = Record<string, unknown>>(sql: string, params?: readonly SqlParam[]): Promise<T | undefined>;
  run(sql: string, params?: readonly SqlParam[]): Promise<RunResult>;
  /** Several statements without parameters (migrations). */
  exec(sql: string): Promise<void>;
  /**
   * Wake listeners of `channel`. Inside a transaction, PostgreSQL delivers it at commit (and not
   * at all on rollback), so a woken listener always finds the committed row.
   */
  notify(channel: string, payload?: string): Promise<void>;
}

export interface TransactionOptions {
  /**
   * SQLite: take the write lock at BEGIN (BEGIN IMMEDIATE) so read-then-write transactions of
   * several processes serialize instead of failing with SQLITE_BUSY half-way. Default true.
   */
  immediate?: boolean;
  /**
   * SQLite: the transaction writes much (a bulk insert). From the first such commit on, the store
   * checkpoints its write-ahead log on a thread of its own instead of inside its commits.
   */
  large?: boolean;
}

export type Unlisten = () => Promise<void>;

export interface Store extends Queryable {
  /** Where the data lives, safe to print (no password). */
  readonly location: string;
  transaction<T>(fn: (tx: Queryable) => Promise<T>, options?: TransactionOptions): Promise<T>;
  /**
   * Wake-ups between processes. PostgreSQL: LISTEN/NOTIFY. SQLite: in-process only, so
   * waiters on SQLite must also poll (see `waitFor`).
   */
  listen(channel: string, handler: (payload: string) => void): Promise<Unlisten>;
  /** The name a channel has on the wire (PostgreSQL: per schema), for NOTIFY inside a statement. */
  channelName(channel: string): string;
  close(): Promise<void>;
}
