import type { Migration } from "../../store/index.js";

/**
 * A covering index for `Blackboard.outline({ addressed })` in creation order: the entries to one
 * role of the kinds it picks, with the columns Kai reads. Kai finds a lane's last completed cycle
 * from the newest entries to the lane's final roles, so a board with no completed cycle costs a
 * look at this index instead of a walk through every cycle.
 */
export const m0400: Migration = {
  version: 400,
  name: "kai addressed-entries index",
  up: `CREATE INDEX kai_bb_entries_addressed ON bb_entries (project_id, to_actor, kind, created_ms, id, from_actor, status, updated_ms);`,
};
