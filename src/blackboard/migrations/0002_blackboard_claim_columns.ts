import type { Migration } from "../../store/index.js";

/**
 * The claim loop touches only real columns. `status` and `updated_at` — the two entry fields a
 * claim or a completion changes — live in their own columns and leave `entry_json` (which keeps
 * the rest of the entry and is only rewritten by edits), so claiming no longer re-encodes the JSON.
 * The pick rule gets partial indexes over open and in_progress entries only, so finished entries
 * (most of a board) cost the claim path nothing.
 */
const indexes = `
DROP INDEX bb_entries_pick;
CREATE INDEX bb_entries_open ON bb_entries (project_id, to_actor, created_ms, id) WHERE status = 'open';
CREATE INDEX bb_entries_claimed ON bb_entries (project_id, to_actor, created_ms, id) WHERE status = 'in_progress';
`;

export const m0002: Migration = {
  version: 2,
  name: "blackboard status and updated_at out of entry_json; partial pick indexes",
  up: {
    sqlite: `
ALTER TABLE bb_entries ADD COLUMN updated_at TEXT NOT NULL DEFAULT '';
UPDATE bb_entries SET updated_at = json_extract(entry_json, '$.updated_at'), entry_json = json_remove(entry_json, '$.status', '$.updated_at');
${indexes}`,
    postgres: `
ALTER TABLE bb_entries ADD COLUMN updated_at TEXT NOT NULL DEFAULT '';
UPDATE bb_entries SET updated_at = entry_json::jsonb ->> 'updated_at', entry_json = (entry_json::jsonb - 'status' - 'updated_at')::text;
${indexes}`,
  },
};
