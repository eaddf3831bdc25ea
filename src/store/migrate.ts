import { PmagentError } from "../core/index.js";
import type { Dialect, Queryable, Store } from "./types.js";

export interface Migration {
  /** Unique, never reused. Ranges per module: blackboard 1–99, lattice 100–199, prompt 200–299, oa 300–399, kai 400–499, server 500–599, forge 600–699. */
  version: number;
  name: string;
  /** One SQL text for both dialects, or one per dialect. */
  up: string | Record<Dialect, string>;
}

/**
 * A schema known by its versions, its migrations loaded only when one is missing: opening a store
 * that is up to date (every command after the first) loads no migration module.
 */
export interface MigrationSet {
  /** Every version of `load()`'s migrations. */
  versions: readonly number[];
  load(): Promise<readonly Migration[]>;
}

const LOCK_KEY = 7_104_202_611; // pg advisory lock id for migrations ("pmagent" in spirit)

/**
 * Apply every migration not yet recorded, inside one transaction that holds the migration lock
 * (pg advisory lock / SQLite write lock), so two processes starting at once apply each migration
 * exactly once and neither sees a half-migrated schema. Returns the versions applied now. A store
 * found up to date is not locked, and a set's migrations are not even loaded.
 */
export async function migrate(store: Store, schema: readonly Migration[] | MigrationSet): Promise<number[]> {
  if (await schemaUpToDate(store, "load" in schema ? schema.versions : schema.map((m) => m.version))) return [];
  const migrations = "load" in schema ? await schema.load() : schema;
  const versions = new Set<number>();
  for (const m of migrations) {
    if (versions.has(m.version))
      throw new PmagentError("migration_duplicate", `two migrations share version ${m.version}`);
    versions.add(m.version);
  }
  const ordered = [...migrations].sort((a, b) => a.version - b.version);
  return store.transaction(async (tx: Queryable) => {
    if (tx.dialect === "postgres") await tx.get("SELECT pg_advisory_xact_lock(?)", [LOCK_KEY]);
    await tx.exec(
      "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)",
    );
    const applied = new Set(
      (await tx.all<{ version: number }>("SELECT version FROM schema_migrations")).map((r) => Number(r.version)),
    );
    const unknown = [...applied].filter((v) => !versions.has(v));
    if (unknown.length > 0) {
      throw new PmagentError(
        "store_newer_schema",
        `the database has migrations this pmagent does not know (${unknown.join(", ")}); it was created by a newer version — upgrade pmagent`,
        { kind: "unavailable" },
      );
    }
    const done: number[] = [];
    for (const m of ordered) {
      if (applied.has(m.version)) continue;
      await tx.exec(typeof m.up === "string" ? m.up : m.up[tx.dialect]);
      await tx.run("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)", [
        m.version,
        m.name,
        new Date().toISOString(),
      ]);
      done.push(m.version);
    }
    return done;
  });
}

/**
 * True when exactly `versions` are applied, read without the migration lock (migrations are only
 * ever added, so a store found complete stays so). Anything else, a store without the table
 * included, is left to `migrate`, which takes the lock and looks again.
 */
async function schemaUpToDate(store: Store, versions: readonly number[]): Promise<boolean> {
  let applied: Set<number>;
  try {
    applied = new Set(
      (await store.all<{ version: number }>("SELECT version FROM schema_migrations")).map((r) => Number(r.version)),
    );
  } catch {
    return false;
  }
  return applied.size === new Set(versions).size && versions.every((v) => applied.has(v));
}
