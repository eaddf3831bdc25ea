export type { Dialect, Queryable, RunResult, SqlParam, Store, TransactionOptions, Unlisten } from "./types.js";
export { SqliteStore, type SqliteOptions } from "./sqlite.js";
export { waitingAtMost } from "./busy.js";
export { PostgresStore, toPgPlaceholders, type PostgresOptions } from "./postgres.js";
export { migrate, type Migration, type MigrationSet } from "./migrate.js";
export { openStore, type StorageConfig, type OpenStoreOptions } from "./open.js";
export { Where, limitClause, inChunks, marks } from "./where.js";
export {
  Keyset,
  PAGE_ORDERS,
  DEFAULT_PAGE_LIMIT,
  MAX_PAGE_LIMIT,
  type KeyColumn,
  type Page,
  type PageOrder,
  type PageRequest,
} from "./page.js";
export { storeFault, describeStoreFault, retryStoreFaults, type StoreFault, type FaultRetryOptions } from "./faults.js";
export type * from "./error-codes.js"; // the codes this module raises, merged into core's ErrorCodes
