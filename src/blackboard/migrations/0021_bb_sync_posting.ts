import type { Migration } from "../../store/index.js";

/**
 * Posts of `pmagent bb sync` under way: the entry (its hash, as sent) is recorded before its new
 * comment is created and forgotten once the comment is linked. A sync that died in between leaves
 * the row, so the next sync knows the unlinked comment holding that exact entry is its own post.
 */
export const m0021: Migration = {
  version: 21,
  name: "blackboard GitHub sync posts under way",
  up: `
CREATE TABLE bb_sync_posting (
  project_id TEXT NOT NULL,
  entry_id TEXT NOT NULL,
  repo TEXT NOT NULL,
  issue INTEGER NOT NULL,
  entry_hash TEXT NOT NULL,
  at_ms BIGINT NOT NULL,
  PRIMARY KEY (project_id, entry_id)
);
`,
};
