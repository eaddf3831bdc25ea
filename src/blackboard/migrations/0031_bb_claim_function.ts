import type { Migration } from "../../store/index.js";

/**
 * PostgreSQL: claim the oldest open entry of a role for a worker (the pick rule, SKIP LOCKED), as
 * the blackboard's claim statement does, and return the entry with its status and claimer before.
 * `finishAndClaim` calls it after its finish, in the same statement: the query of a volatile
 * PL/pgSQL function reads the board as it is when the function runs, not as it was when the
 * statement began, before a finish that may have waited for a lock.
 */
export const m0031: Migration = {
  version: 31,
  name: "blackboard claim function (PostgreSQL)",
  up: {
    sqlite: "-- PostgreSQL only",
    postgres: `
CREATE FUNCTION bb_claim_open(p_project TEXT, p_role TEXT, p_kinds TEXT[], p_now_ms BIGINT, p_now_iso TEXT, p_worker TEXT, p_lease_until BIGINT)
RETURNS TABLE (id TEXT, version INTEGER, status TEXT, updated_at TEXT, entry_json TEXT, claimed_by TEXT, lease_expires_ms BIGINT, old_status TEXT, old_claimer TEXT)
LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
BEGIN
  RETURN QUERY WITH picked AS (
    SELECT b.id, b.status, b.claimed_by FROM bb_entries b
    WHERE b.project_id = p_project AND b.to_actor = p_role AND b.kind = ANY (p_kinds) AND b.status = 'open'
    ORDER BY b.created_ms, b.id LIMIT 1 FOR UPDATE SKIP LOCKED
  )
  UPDATE bb_entries e SET version = e.version + 1, status = 'in_progress', updated_ms = p_now_ms, updated_at = p_now_iso, claimed_by = p_worker, lease_expires_ms = p_lease_until
  FROM picked WHERE e.project_id = p_project AND e.id = picked.id
  RETURNING e.id, e.version, e.status, e.updated_at, e.entry_json, e.claimed_by, e.lease_expires_ms, picked.status, picked.claimed_by;
END $$;
`,
  },
};
