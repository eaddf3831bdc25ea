import { resolve } from "node:path";
import { UsageError } from "../core/index.js";
import { migrate, type Migration, type MigrationSet } from "./migrate.js";
import { PostgresStore } from "./postgres.js";
import { SqliteStore } from "./sqlite.js";
import type { Store } from "./types.js";

export interface StorageConfig {
  /** "sqlite" (default) or "postgres". PMAGENT_DATABASE_URL overrides both. */
  driver?: "sqlite" | "postgres";
  /** SQLite file, relative to the project root. Default `.pmagent/pmagent.db`. */
  path?: string;
  /** PostgreSQL URL (prefer PMAGENT_DATABASE_URL, so the password stays out of the config file). */
  url?: string;
  /** PostgreSQL schema; default `public`. */
  schema?: string;
}

export const DEFAULT_SQLITE_PATH = ".pmagent/pmagent.db";

export interface OpenStoreOptions {
  /** The project root; the SQLite path is relative to it. */
  root: string;
  storage?: StorageConfig;
  env?: NodeJS.ProcessEnv;
  /** The schema (each module's migrations, gathered by the composition root: src/app), or a set loaded only when needed. */
  migrations: readonly Migration[] | MigrationSet;
  /** SQLite: wait for another process's write lock without blocking the event loop (a server). */
  yieldWhileBusy?: boolean;
}

/**
 * Open the project's store and bring its schema up to date. PMAGENT_DATABASE_URL (and
 * PMAGENT_DATABASE_SCHEMA) select PostgreSQL; PMAGENT_SQLITE_PATH overrides the SQLite file.
 */
export async function openStore(options: OpenStoreOptions): Promise<Store> {
  const env = options.env ?? process.env;
  const storage = options.storage ?? {};
  const url = env.PMAGENT_DATABASE_URL || (storage.driver === "postgres" ? storage.url : undefined);
  let store: Store;
  if (url) {
    if (!/^postgres(ql)?:\/\//.test(url)) {
      throw new UsageError(
        "store_bad_url",
        "PMAGENT_DATABASE_URL must be a postgres:// or postgresql:// URL (unset it to use the SQLite file)",
      );
    }
    store = await PostgresStore.connect(url, { schema: env.PMAGENT_DATABASE_SCHEMA || storage.schema });
  } else if (storage.driver === "postgres") {
    throw new UsageError(
      "store_missing_url",
      'storage.driver is "postgres" but no URL is set: set PMAGENT_DATABASE_URL=postgres://…',
    );
  } else {
    const source = env.PMAGENT_SQLITE_PATH ? "PMAGENT_SQLITE_PATH" : storage.path ? "storage.path" : "the default path";
    store = new SqliteStore(resolve(options.root, env.PMAGENT_SQLITE_PATH || storage.path || DEFAULT_SQLITE_PATH), {
      source,
      yieldWhileBusy: options.yieldWhileBusy,
    });
  }
  try {
    await migrate(store, options.migrations);
  } catch (err) {
    await store.close();
    throw err;
  }
  return store;
}
