import type { Migration } from "../../store/index.js";

/** Review comments on the local forge's pull requests: on the whole change, or on one file's line. */
export const m0600: Migration = {
  version: 600,
  name: "forge pull request comments",
  up: `
CREATE TABLE forge_pull_comments (
  id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL,
  number INTEGER NOT NULL,
  author TEXT NOT NULL,
  body TEXT NOT NULL,
  path TEXT,
  line INTEGER,
  created_at TEXT NOT NULL,
  created_ms BIGINT NOT NULL
);
CREATE INDEX forge_pull_comments_number ON forge_pull_comments (project_id, number, created_ms, id);
`,
};
