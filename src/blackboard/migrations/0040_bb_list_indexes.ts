import type { Migration } from "../../store/index.js";

/**
 * The entry list pages by keyset in creation order (`created_ms, id`): one index in that order for
 * the whole board and one per filter the API offers (status, addressee, author, kind), so a page
 * is a seek and `limit` rows instead of a scan and sort of the whole board. The history of the
 * whole project pages by `seq` (one entry's history already had `project_id, entry_id, seq`).
 */
const sql = `
CREATE INDEX bb_entries_created ON bb_entries (project_id, created_ms, id);
CREATE INDEX bb_entries_status_created ON bb_entries (project_id, status, created_ms, id);
CREATE INDEX bb_entries_to_created ON bb_entries (project_id, to_actor, created_ms, id);
CREATE INDEX bb_entries_from_created ON bb_entries (project_id, from_actor, created_ms, id);
CREATE INDEX bb_entries_kind_created ON bb_entries (project_id, kind, created_ms, id);
CREATE INDEX bb_history_seq ON bb_history (project_id, seq);
`;

export const m0040: Migration = {
  version: 40,
  name: "blackboard list indexes in the lists' sort order",
  up: { sqlite: sql, postgres: sql },
};
