/**
 * The composition root lists every migration's version so an up-to-date store opens without loading
 * a migration module: the list must be exactly the modules' own, or a new migration would never run.
 */
import { describe, expect, it } from "vitest";
import { blackboardMigrations } from "../../src/blackboard/migrations/index.js";
import { forgeMigrations } from "../../src/forge/migrations/index.js";
import { kaiMigrations } from "../../src/kai/migrations/index.js";
import { latticeMigrations } from "../../src/lattice/migrations/index.js";
import { migrations } from "../../src/app/index.js";
import { migrate, SqliteStore } from "../../src/store/index.js";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

describe("the project's migrations", () => {
  it("lists exactly the versions the modules' migrations have, in order", async () => {
    const own = [...blackboardMigrations, ...latticeMigrations, ...kaiMigrations, ...forgeMigrations]
      .map((m) => m.version)
      .sort((a, b) => a - b);
    expect(migrations.versions).toEqual(own);
    expect((await migrations.load()).map((m) => m.version)).toEqual(own);
  });

  it("loads the migrations for a new store, and not for one up to date", async () => {
    const dir = mkdtempSync(join(tmpdir(), "pmagent-migset-"));
    const store = new SqliteStore(join(dir, "db.sqlite"));
    let loads = 0;
    const counted = { versions: migrations.versions, load: () => ((loads += 1), migrations.load()) };
    try {
      expect(await migrate(store, counted)).toEqual(migrations.versions);
      expect(loads).toBe(1);
      expect(await migrate(store, counted)).toEqual([]);
      expect(loads).toBe(1);
      // A store missing a version (here: a newer pmagent's set) loads and applies it.
      const newer = {
        versions: [...migrations.versions, 9999],
        load: async () => [
          ...(await migrations.load()),
          { version: 9999, name: "t_extra", up: "CREATE TABLE t_extra (x INTEGER)" },
        ],
      };
      expect(await migrate(store, newer)).toEqual([9999]);
      // And an older set meets the newer store's extra version: refused as before.
      await expect(migrate(store, counted)).rejects.toThrow(/newer version/);
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
