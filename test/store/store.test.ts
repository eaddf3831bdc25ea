import { describe, expect, it } from "vitest";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  limitClause,
  migrate,
  PostgresStore,
  SqliteStore,
  toPgPlaceholders,
  openStore,
  Where,
} from "../../src/store/index.js";
import { migrations as schema } from "../../src/app/index.js";

/** The list itself: these tests apply parts of it. */
const migrations = await schema.load();
import { TSX_IMPORT } from "../helpers/proc.js";
import { PG_URL, postgresAvailable, storeKinds, uniqueSchema } from "../helpers/stores.js";

const pgOk = await postgresAvailable();

describe.each(storeKinds)("store ($name)", (kind) => {
  const run = kind.name === "postgres" && !pgOk ? it.skip : it;

  run("migrations are idempotent and recorded once", async () => {
    const t = await kind.open();
    try {
      expect(await migrate(t.store, migrations)).toEqual([]);
      const rows = await t.store.all<{ version: number }>("SELECT version FROM schema_migrations ORDER BY version");
      expect(rows.map((r) => Number(r.version))).toEqual(migrations.map((m) => m.version).sort((a, b) => a - b));
    } finally {
      await t.cleanup();
    }
  });

  run("refuses a database migrated by a newer pmagent", async () => {
    const t = await kind.open();
    try {
      await t.store.run("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)", [
        99999,
        "future",
        "x",
      ]);
      await expect(migrate(t.store, migrations)).rejects.toThrow(/newer version/);
    } finally {
      await t.cleanup();
    }
  });

  run("transactions roll back on error and commit otherwise", async () => {
    const t = await kind.open();
    try {
      await t.store.exec("CREATE TABLE tx_probe (k TEXT PRIMARY KEY, v INTEGER NOT NULL)");
      await expect(
        t.store.transaction(async (tx) => {
          await tx.run("INSERT INTO tx_probe (k, v) VALUES (?, ?)", ["a", 1]);
          throw new Error("boom");
        }),
      ).rejects.toThrow("boom");
      expect(await t.store.get("SELECT v FROM tx_probe WHERE k = ?", ["a"])).toBeUndefined();
      await t.store.transaction(async (tx) => {
        await tx.run("INSERT INTO tx_probe (k, v) VALUES (?, ?)", ["a", 2]);
      });
      expect(await t.store.get<{ v: number }>("SELECT v FROM tx_probe WHERE k = ?", ["a"])).toEqual({ v: 2 });
      const r = await t.store.run("UPDATE tx_probe SET v = v + 1 WHERE k = ?", ["a"]);
      expect(r.changes).toBe(1);
    } finally {
      await t.cleanup();
    }
  });

  run("a statement run again after its table changed shape sees the new shape", async () => {
    const t = await kind.open();
    try {
      await t.store.exec("CREATE TABLE shape_probe (k TEXT PRIMARY KEY)");
      await t.store.run("INSERT INTO shape_probe (k) VALUES (?)", ["a"]);
      expect(await t.store.get("SELECT * FROM shape_probe WHERE k = ?", ["a"])).toEqual({ k: "a" });
      await t.store.exec("ALTER TABLE shape_probe ADD COLUMN v INTEGER");
      expect(await t.store.get("SELECT * FROM shape_probe WHERE k = ?", ["a"])).toEqual({ k: "a", v: null });
    } finally {
      await t.cleanup();
    }
  });

  run("listen/notify delivers within the process", async () => {
    const t = await kind.open();
    try {
      let deliver!: (payload: string) => void;
      const got = new Promise<string>((resolve) => (deliver = resolve));
      // Listening once listen() has resolved (on PostgreSQL, once LISTEN has run), not after a
      // guessed delay: a busy machine took longer than the delay, and the notification was lost.
      await t.store.listen("probe", deliver);
      await t.store.notify("probe", "hello");
      expect(await got).toBe("hello");
    } finally {
      await t.cleanup();
    }
  });
});

describe("store selection", () => {
  it("uses the SQLite file under .pmagent by default, with WAL", async () => {
    const root = mkdtempSync(join(tmpdir(), "pmagent-open-"));
    try {
      const store = await openStore({ migrations, root, env: {} });
      expect(store.location).toBe(join(root, ".pmagent/pmagent.db"));
      const mode = await store.get<{ journal_mode: string }>("PRAGMA journal_mode");
      expect(mode?.journal_mode).toBe("wal");
      await store.close();
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it("SQLite: closing gathers planner statistics for the tables it queried, so large boards get good plans", async () => {
    const root = mkdtempSync(join(tmpdir(), "pmagent-open-"));
    try {
      let store = await openStore({ migrations, root, env: {} });
      await store.exec("CREATE TABLE t (a INTEGER, b INTEGER); CREATE INDEX t_a ON t (a)");
      await store.transaction(async (tx) => {
        for (let i = 0; i < 2000; i++) await tx.run("INSERT INTO t (a, b) VALUES (?, ?)", [i % 20, i]);
      });
      await store.all("SELECT b FROM t WHERE a = ?", [3]);
      await store.close();
      store = await openStore({ migrations, root, env: {} });
      expect(await store.all("SELECT tbl, idx FROM sqlite_stat1 WHERE tbl = 't'")).toEqual([{ tbl: "t", idx: "t_a" }]);
      await store.close();
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it("refuses a non-postgres database URL with a clear message", async () => {
    await expect(openStore({ migrations, root: tmpdir(), env: { PMAGENT_DATABASE_URL: "mysql://x" } })).rejects.toThrow(
      /postgres:\/\/ or postgresql:\/\//,
    );
  });

  it("says which server it could not reach, without the password", async () => {
    const err = await openStore({
      migrations,
      root: tmpdir(),
      env: { PMAGENT_DATABASE_URL: "postgres://u:hunter22@127.0.0.1:1/db" },
    }).catch((e: Error) => e);
    expect(String(err)).toMatch(/cannot connect to PostgreSQL at postgres:\/\/u:\*\*\*@127\.0\.0\.1:1\/db/);
    expect(String(err)).not.toContain("hunter22");
  });

  it("converts ? placeholders for PostgreSQL", () => {
    expect(toPgPlaceholders("SELECT * FROM t WHERE a = ? AND b IN (?, ?)")).toBe(
      "SELECT * FROM t WHERE a = $1 AND b IN ($2, $3)",
    );
  });
});

/** Several processes migrating the same fresh database at once. */
async function concurrentMigrations(
  count: number,
  env: Record<string, string>,
  cwd = process.cwd(),
): Promise<number[]> {
  const script = `
    import { openStore } from ${JSON.stringify(new URL("../../src/store/index.ts", import.meta.url).pathname)};
    import { migrations } from ${JSON.stringify(new URL("../../src/app/project/migrations.ts", import.meta.url).pathname)};
    const s = await openStore({ migrations, root: process.cwd(), env: process.env });
    const rows = await s.all("SELECT version FROM schema_migrations");
    console.log(rows.length);
    await s.close();`;
  const codes = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<number>((resolve) => {
          const child = spawn(process.execPath, ["--import", TSX_IMPORT, "--input-type=module", "-e", script], {
            cwd,
            env: { ...process.env, ...env },
            stdio: ["ignore", "pipe", "inherit"],
          });
          child.on("exit", (code) => resolve(code ?? -1));
        }),
    ),
  );
  return codes;
}

describe("concurrent start-up", () => {
  it("SQLite: four processes migrating one new file all succeed and apply each migration once", async () => {
    const root = mkdtempSync(join(tmpdir(), "pmagent-mig-"));
    try {
      const codes = await concurrentMigrations(4, { PMAGENT_DATABASE_URL: "" }, root);
      expect(codes).toEqual([0, 0, 0, 0]);
      const store = new SqliteStore(join(root, ".pmagent/pmagent.db"));
      const rows = await store.all<{ n: number }>("SELECT COUNT(*) AS n FROM schema_migrations GROUP BY version");
      expect(rows.length).toBe(migrations.length);
      expect(rows.every((r) => r.n === 1)).toBe(true);
      await store.close();
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  (pgOk ? it : it.skip)(
    "PostgreSQL: a transaction left idle (its process stalled) is ended by the server, so the rows it locked are free again",
    async () => {
      const schema = uniqueSchema();
      const stalled = await PostgresStore.connect(PG_URL, { schema, idleInTransactionMs: 300 });
      const other = await PostgresStore.connect(PG_URL, { schema });
      try {
        await other.exec("CREATE TABLE lock_probe (k TEXT PRIMARY KEY, v INTEGER NOT NULL)");
        await other.run("INSERT INTO lock_probe (k, v) VALUES (?, ?)", ["a", 0]);
        let locked!: () => void;
        const hasLock = new Promise<void>((resolve) => (locked = resolve));
        // The stalled process: takes the row's lock, then never sends another statement.
        const stalledTx = stalled.transaction(async (q) => {
          await q.run("UPDATE lock_probe SET v = 1 WHERE k = ?", ["a"]);
          locked();
          await new Promise(() => undefined);
        });
        stalledTx.catch(() => undefined);
        await hasLock;
        // Waits behind the lock until the server ends the idle transaction (its update rolled back).
        await other.run("UPDATE lock_probe SET v = v + 10 WHERE k = ?", ["a"]);
        expect(await other.get<{ v: number }>("SELECT v FROM lock_probe WHERE k = ?", ["a"])).toEqual({ v: 10 });
      } finally {
        await other.exec(`DROP SCHEMA ${schema} CASCADE`);
        await other.close();
        // The stalled transaction never returns its connection: close without waiting for it.
        void stalled.close();
      }
    },
  );

  (pgOk ? it : it.skip)(
    "PostgreSQL: four processes migrating one new schema all succeed and apply each migration once",
    async () => {
      const schema = uniqueSchema();
      const codes = await concurrentMigrations(4, { PMAGENT_DATABASE_URL: PG_URL, PMAGENT_DATABASE_SCHEMA: schema });
      expect(codes).toEqual([0, 0, 0, 0]);
      const store = await PostgresStore.connect(PG_URL, { schema });
      const rows = await store.all<{ version: number; n: number }>(
        "SELECT version, COUNT(*) AS n FROM schema_migrations GROUP BY version",
      );
      expect(rows.every((r) => Number(r.n) === 1)).toBe(true);
      expect(rows.length).toBe(migrations.length);
      await store.close();
      await (async () => {
        const s = await PostgresStore.connect(PG_URL);
        await s.exec(`DROP SCHEMA ${schema} CASCADE`);
        await s.close();
      })();
    },
  );
});

describe("Where", () => {
  it("adds only the conditions whose values are given, in order, with their parameters", () => {
    const w = new Where("project_id = ?", "p")
      .in("status", ["open", "done"])
      .when("to_actor = ?", undefined)
      .when("kind = ?", "k")
      .in("x", []);
    expect(String(w)).toBe("project_id = ? AND status IN (?, ?) AND kind = ?");
    expect(w.params).toEqual(["p", "open", "done", "k"]);
    expect(limitClause(undefined)).toBe("");
    expect(limitClause(12.7)).toBe(" LIMIT 12");
    expect(limitClause(-3)).toBe(" LIMIT 0");
  });
});
