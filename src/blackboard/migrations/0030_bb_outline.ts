import type { Migration } from "../../store/index.js";

/**
 * A covering index for `Blackboard.outline({ from })`: a writer's entries in creation order with
 * the few columns Kai numbers cycles by, read from the index alone (never the entry JSON).
 */
export const m0030: Migration = {
  version: 30,
  name: "blackboard outline index",
  up: `CREATE INDEX bb_entries_outline ON bb_entries (project_id, from_actor, created_ms, id, to_actor, kind, status, updated_ms);`,
};
