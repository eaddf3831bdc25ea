import type { Migration } from "../../store/index.js";

/**
 * PostgreSQL: the entry list by status is served by partial indexes, one per open, in_progress
 * and the finished statuses, instead of one index led by the status. Every claim and every finish
 * writes a new row version whose status differs, and in the single `(project_id, status,
 * created_ms, id)` index the eight workers of a drain all inserted into the same few leaf pages
 * (the in_progress and done ranges' ends). Measured draining 20,000 entries with 8 workers on an
 * idle machine: 1.74× the entries/s with these indexes instead (2,062 against 1,174, median of 3
 * alternating rounds). A partial index is written only by the rows in its status, and the open
 * one only by posts.
 *
 * Both stores: `(project_id, from_actor, created_ms, id)` goes; the outline index (migration 30)
 * begins with the same columns and serves the list by author in the same order.
 *
 * SQLite keeps the status index: its writes are serialized, and it does not use a partial index
 * for `status = ?` with the status bound as a parameter.
 */
export const m0060: Migration = {
  version: 60,
  name: "blackboard status lists on partial indexes (PostgreSQL); no separate author index",
  up: {
    sqlite: `DROP INDEX bb_entries_from_created;`,
    postgres: `
DROP INDEX bb_entries_from_created;
DROP INDEX bb_entries_status_created;
CREATE INDEX bb_entries_open_created ON bb_entries (project_id, created_ms, id) WHERE status = 'open';
CREATE INDEX bb_entries_busy_created ON bb_entries (project_id, created_ms, id) WHERE status = 'in_progress';
CREATE INDEX bb_entries_closed_created ON bb_entries (project_id, status, created_ms, id) WHERE status NOT IN ('open', 'in_progress');
`,
  },
};
