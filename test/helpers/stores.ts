import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import pg from "pg";
import { migrate, PostgresStore, SqliteStore, type Store } from "../../src/store/index.js";
import { migrations } from "../../src/app/index.js";

export const PG_URL = process.env.PMAGENT_TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";

let pgReachable: Promise<boolean> | undefined;

/**
 * Whether the PostgreSQL tests run. In CI (CI=true) they always run, so an unreachable server
 * fails them instead of skipping; elsewhere they skip with a message saying why.
 */
export function postgresAvailable(): Promise<boolean> {
  if (process.env.CI === "true") return Promise.resolve(true);
  pgReachable ??= (async () => {
    const client = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 2000 });
    try {
      await client.connect();
      await client.end();
      return true;
    } catch (err) {
      console.warn(
        `PostgreSQL at ${PG_URL} is unreachable (${(err as Error).message}): skipping the PostgreSQL store tests`,
      );
      return false;
    }
  })();
  return pgReachable;
}

export interface StoreKind {
  name: "sqlite" | "postgres";
  /** A fresh, migrated, isolated store (own SQLite file / own PostgreSQL schema). */
  open(): Promise<TestStore>;
  /** The same with no migration applied: for tests of the migrations themselves. */
  openEmpty(): Promise<TestStore>;
}

export interface TestStore {
  store: Store;
  /** Environment that makes a child `pmagent` process use the same database. */
  env: Record<string, string>;
  /** SQLite file path or undefined. */
  file?: string;
  cleanup(): Promise<void>;
}

export function uniqueSchema(): string {
  return `t_${randomBytes(6).toString("hex")}`;
}

export async function openPostgresTestStore(options: { migrated?: boolean } = {}): Promise<TestStore> {
  const schema = uniqueSchema();
  const store = await PostgresStore.connect(PG_URL, { schema });
  if (options.migrated !== false) await migrate(store, migrations);
  return {
    store,
    env: { PMAGENT_DATABASE_URL: PG_URL, PMAGENT_DATABASE_SCHEMA: schema },
    async cleanup() {
      await store.close();
      const client = new pg.Client({ connectionString: PG_URL });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await client.end();
    },
  };
}

export async function openSqliteTestStore(options: { migrated?: boolean } = {}): Promise<TestStore> {
  const dir = mkdtempSync(join(tmpdir(), "pmagent-test-"));
  const file = join(dir, "pmagent.db");
  const store = new SqliteStore(file);
  if (options.migrated !== false) await migrate(store, migrations);
  return {
    store,
    env: { PMAGENT_SQLITE_PATH: file },
    file,
    async cleanup() {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export const storeKinds: StoreKind[] = [
  { name: "sqlite", open: () => openSqliteTestStore(), openEmpty: () => openSqliteTestStore({ migrated: false }) },
  {
    name: "postgres",
    open: () => openPostgresTestStore(),
    openEmpty: () => openPostgresTestStore({ migrated: false }),
  },
];

/** `describe.each`-friendly: the store kinds that run here (PostgreSQL skipped only outside CI when unreachable). */
export async function availableStoreKinds(): Promise<StoreKind[]> {
  return (await postgresAvailable()) ? storeKinds : storeKinds.filter((k) => k.name === "sqlite");
}
