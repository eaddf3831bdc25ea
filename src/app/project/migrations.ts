import type { Migration, MigrationSet } from "../../store/index.js";

/**
 * Every migration pmagent knows, gathered from the modules that own the tables, in version order
 * (the ids and their order are those databases were migrated with: an existing database migrates
 * exactly as before). The versions are listed here so that opening a store already up to date
 * (every command after the first) loads no migration module; test/app/migrations.test.ts checks the
 * list against the modules' own.
 */
export const migrations: MigrationSet = {
  versions: [
    1, 2, 20, 21, 30, 31, 40, 50, 60, 70, 80, 100, 110, 120, 130, 140, 150, 160, 170, 180, 190, 230, 240, 400, 410, 420,
    600,
  ],
  load: async () => {
    const [blackboard, lattice, kai, forge] = await Promise.all([
      import("../../blackboard/migrations/index.js"),
      import("../../lattice/migrations/index.js"),
      import("../../kai/migrations/index.js"),
      import("../../forge/migrations/index.js"),
    ]);
    return [
      ...blackboard.blackboardMigrations,
      ...lattice.latticeMigrations,
      ...kai.kaiMigrations,
      ...forge.forgeMigrations,
    ].sort((a: Migration, b: Migration) => a.version - b.version);
  },
};
