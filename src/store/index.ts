export type { Dialect, Queryable, RunResult, SqlParam, Store, TransactionOptions, Unlisten } from "./types.js";
export { SqliteStore } from "./sqlite.js";
export { PostgresStore, toPgPlaceholders, type PostgresOptions } from "./postgres.js";
export { migrate, type Migration } from "./migrate.js";
export { migrations } from "./migrations/index.js";
export { EVENT_TYPE_INDEX_TERM, UNINDEXED_EVENT_TYPES } from "./migrations/0140_lattice_event_type_index.js";
export { openStore, defaultSqlitePath, DEFAULT_SQLITE_PATH, type StorageConfig, type OpenStoreOptions } from "./open.js";
export { Where, limitClause } from "./where.js";
export { Keyset, PAGE_ORDERS, DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT, pageLimit, type KeyColumn, type Page, type PageOrder, type PageRequest } from "./page.js";
