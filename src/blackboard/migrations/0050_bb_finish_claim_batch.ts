import type { Migration } from "../../store/index.js";

/**
 * PostgreSQL: the finishes and next claims of several workers (`finishAndClaim`) in one call, one
 * round trip and one commit for all of them. `p_reqs` is a JSON array of requests, each
 * `{req, project, actor, id, to, worker, human, role, kinds, now_ms, now_iso, lease_until,
 * fin_changes, claim_changes}`. Each finish is checked as `finishAndClaim`'s single statement
 * checked it (the worker holds the claim, the actor may move the entry); a finish that does not
 * apply returns no row and the caller takes the general path for it. Every finish runs before any
 * claim: a claim's pick (SKIP LOCKED) may lock an entry it then skips, so once this transaction
 * picks it never waits for a lock, and two batches cannot wait for each other. Each pick is a
 * statement of its own, reading the board as it is then (the function is volatile), and sees the
 * entries this call claimed before it as in_progress. History: one record per finish, one per claim.
 * Returns the finished rows (claimed = false) and the claimed ones (claimed = true), by `req`.
 */
export const m0050: Migration = {
  version: 50,
  name: "blackboard finish-and-claim batch function (PostgreSQL)",
  up: {
    sqlite: "-- PostgreSQL only",
    postgres: `
CREATE FUNCTION bb_finish_claim_batch(p_reqs JSONB)
RETURNS TABLE (req INTEGER, claimed BOOLEAN, id TEXT, version INTEGER, status TEXT, updated_at TEXT, entry_json TEXT, claimed_by TEXT, lease_expires_ms BIGINT)
LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
DECLARE
  q RECORD;
  finished INTEGER[] := '{}';
  -- A variable, not a literal: the finish looks its entry up by primary key, not through the
  -- in_progress partial index (see finishCtes in src/blackboard/claims.ts).
  v_in_progress TEXT := 'in_progress';
BEGIN
  FOR q IN SELECT * FROM ROWS FROM (jsonb_to_recordset(p_reqs) AS (req INTEGER, project TEXT, actor TEXT, id TEXT, "to" TEXT, worker TEXT, human BOOLEAN, now_ms BIGINT, now_iso TEXT, fin_changes TEXT)) r ORDER BY r.req LOOP
    RETURN QUERY WITH fin AS (
      UPDATE bb_entries b SET version = b.version + 1, status = q."to", updated_ms = q.now_ms, updated_at = q.now_iso, claimed_by = NULL, lease_expires_ms = NULL
      WHERE b.project_id = q.project AND b.id = q.id AND b.status = v_in_progress AND b.claimed_by = q.worker AND (b.to_actor = q.actor OR b.from_actor = q.actor OR q.human)
      RETURNING b.id, b.version, b.status, b.updated_at, b.entry_json, b.claimed_by, b.lease_expires_ms
    ), hist AS (
      INSERT INTO bb_history (project_id, entry_id, version, at, at_ms, actor, action, from_status, to_status, changes_json)
      SELECT q.project, fin.id, fin.version, q.now_iso, q.now_ms, q.actor, 'status', 'in_progress', q."to", q.fin_changes FROM fin
    )
    SELECT q.req, false, fin.id, fin.version, fin.status, fin.updated_at, fin.entry_json, fin.claimed_by, fin.lease_expires_ms FROM fin;
    IF FOUND THEN
      finished := finished || q.req;
    END IF;
  END LOOP;
  FOR q IN SELECT * FROM ROWS FROM (jsonb_to_recordset(p_reqs) AS (req INTEGER, project TEXT, worker TEXT, role TEXT, kinds TEXT[], now_ms BIGINT, now_iso TEXT, lease_until BIGINT, claim_changes TEXT)) r WHERE r.req = ANY (finished) ORDER BY r.req LOOP
    RETURN QUERY WITH picked AS (
      SELECT b.id FROM bb_entries b
      WHERE b.project_id = q.project AND b.to_actor = q.role AND b.kind = ANY (q.kinds) AND b.status = 'open'
      ORDER BY b.created_ms, b.id LIMIT 1 FOR UPDATE SKIP LOCKED
    ), upd AS (
      UPDATE bb_entries e SET version = e.version + 1, status = 'in_progress', updated_ms = q.now_ms, updated_at = q.now_iso, claimed_by = q.worker, lease_expires_ms = q.lease_until
      FROM picked WHERE e.project_id = q.project AND e.id = picked.id
      RETURNING e.id, e.version, e.status, e.updated_at, e.entry_json, e.claimed_by, e.lease_expires_ms
    ), hist AS (
      INSERT INTO bb_history (project_id, entry_id, version, at, at_ms, actor, action, from_status, to_status, changes_json)
      SELECT q.project, upd.id, upd.version, q.now_iso, q.now_ms, q.role, 'claim', 'open', 'in_progress', q.claim_changes FROM upd
    )
    SELECT q.req, true, upd.id, upd.version, upd.status, upd.updated_at, upd.entry_json, upd.claimed_by, upd.lease_expires_ms FROM upd;
  END LOOP;
END $$;
`,
  },
};
