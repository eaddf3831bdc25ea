import type { Migration } from "../../store/index.js";

/**
 * Links between blackboard entries and the GitHub comments that hold them (`pmagent bb sync`).
 * `entry_hash` is the entry as last agreed by both sides and `body_hash` the comment body as last
 * written or read, so a sync can tell "changed locally", "changed on GitHub" and "both" apart.
 * `bb_sync_lock` lets one sync per board run at a time (two would post the same new entry twice).
 */
export const m0020: Migration = {
  version: 20,
  name: "blackboard GitHub sync links and lock",
  up: `
CREATE TABLE bb_sync (
  project_id TEXT NOT NULL,
  entry_id TEXT NOT NULL,
  repo TEXT NOT NULL,
  issue INTEGER NOT NULL,
  comment_id BIGINT NOT NULL,
  bb_type TEXT NOT NULL,
  entry_hash TEXT NOT NULL,
  body_hash TEXT NOT NULL,
  remote_updated_at TEXT NOT NULL,
  synced_at TEXT NOT NULL,
  synced_ms BIGINT NOT NULL,
  PRIMARY KEY (project_id, entry_id)
);
CREATE UNIQUE INDEX bb_sync_comment ON bb_sync (project_id, repo, comment_id);
CREATE INDEX bb_sync_board ON bb_sync (project_id, repo, issue);
CREATE TABLE bb_sync_lock (
  project_id TEXT NOT NULL,
  repo TEXT NOT NULL,
  issue INTEGER NOT NULL,
  holder TEXT NOT NULL,
  expires_ms BIGINT NOT NULL,
  PRIMARY KEY (project_id, repo, issue)
);
`,
};
