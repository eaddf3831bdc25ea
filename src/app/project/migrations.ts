import { blackboardMigrations } from "../../blackboard/migrations/index.js";
import { forgeMigrations } from "../../forge/migrations/index.js";
import { kaiMigrations } from "../../kai/migrations/index.js";
import { latticeMigrations } from "../../lattice/migrations/index.js";
import type { Migration } from "../../store/index.js";

/**
 * Every migration pmagent knows, gathered from the modules that own the tables, in version order
 * (the ids and their order are those databases were migrated with: an existing database migrates
 * exactly as before). Each module's folder is named directly, so opening a store loads no module.
 */
export const migrations: readonly Migration[] = [
  ...blackboardMigrations,
  ...latticeMigrations,
  ...kaiMigrations,
  ...forgeMigrations,
].sort((a, b) => a.version - b.version);
