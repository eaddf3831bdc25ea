import type { Migration } from "../../store/index.js";

/**
 * PostgreSQL: an entry's claim state in a narrow table of its own, `bb_entry_state`, beside the
 * entry's body, `bb_entry_body`; `bb_entries` becomes their join (a view), so every read stays as
 * it was.
 *
 * Why: an UPDATE that changes an indexed column is never HOT, and a non-HOT update writes a new
 * key into every index of its table. A claim and a finish each changed status, claimer and
 * times, so each wrote into all twelve indexes of the one table (the list indexes, Kai's and the
 * outline among them): 17 index inserts per entry drained, about half of PostgreSQL's time. Now
 * they write the narrow state row and its own indexes (primary key, `updated_ms`, and the partial
 * status indexes): 7 inserts, and no copy of the entry's JSON. The body is written by posts and
 * edits only.
 *
 * The state row repeats `to_actor`, `kind` and `created_ms` (the pick rule and the status lists
 * need them beside the status), and the view joins on them too: a filter on the state (status,
 * claimer, times) makes the join an inner one, and then the planner knows the two copies are equal
 * and serves an order by `created_ms` from either table's indexes. The join is a left one (every
 * body has its state row) so that a read of body columns alone, such as Kai's count of a writer's
 * entries, drops it and reads one index. The indexes keep their names. Writes to the view (an
 * edit, a lease renewal, a post outside the one-statement post) go through an INSTEAD OF trigger;
 * the claim and finish paths, which every drained entry takes, write the tables.
 *
 * The outline and Kai's addressed index lose `status` and `updated_ms` (they are not in the body):
 * those reads look the state up by primary key.
 *
 * After Kai's migrations (400, 410) because it moves Kai's index: a migration runs once, in
 * version order, on a new database and an old one alike.
 */
const postgres = `
DROP FUNCTION IF EXISTS bb_claim_open(TEXT, TEXT, TEXT[], BIGINT, TEXT, TEXT, BIGINT);
ALTER TABLE bb_entries RENAME TO bb_entry_body;
ALTER INDEX bb_entries_pkey RENAME TO bb_entry_body_pkey;
CREATE TABLE bb_entry_state (
  project_id TEXT NOT NULL,
  id TEXT NOT NULL,
  to_actor TEXT NOT NULL,
  kind TEXT NOT NULL,
  created_ms BIGINT NOT NULL,
  version INTEGER NOT NULL,
  status TEXT NOT NULL,
  updated_ms BIGINT NOT NULL,
  updated_at TEXT NOT NULL,
  claimed_by TEXT,
  lease_expires_ms BIGINT,
  PRIMARY KEY (project_id, id)
);
INSERT INTO bb_entry_state (project_id, id, to_actor, kind, created_ms, version, status, updated_ms, updated_at, claimed_by, lease_expires_ms)
  SELECT project_id, id, to_actor, kind, created_ms, version, status, updated_ms, updated_at, claimed_by, lease_expires_ms FROM bb_entry_body;
DROP INDEX bb_entries_updated, bb_entries_open, bb_entries_claimed, bb_entries_open_created, bb_entries_busy_created, bb_entries_closed_created, bb_entries_outline, kai_bb_entries_addressed;
ALTER TABLE bb_entry_body DROP COLUMN version, DROP COLUMN status, DROP COLUMN updated_ms, DROP COLUMN updated_at, DROP COLUMN claimed_by, DROP COLUMN lease_expires_ms;
CREATE INDEX bb_entries_outline ON bb_entry_body (project_id, from_actor, created_ms, id, to_actor, kind) WITH (deduplicate_items = off);
CREATE INDEX kai_bb_entries_addressed ON bb_entry_body (project_id, to_actor, kind, created_ms, id, from_actor) WITH (deduplicate_items = off);
CREATE INDEX bb_entries_updated ON bb_entry_state (project_id, updated_ms) WITH (deduplicate_items = off);
CREATE INDEX bb_entries_open ON bb_entry_state (project_id, to_actor, created_ms, id) WITH (deduplicate_items = off) WHERE status = 'open';
CREATE INDEX bb_entries_claimed ON bb_entry_state (project_id, to_actor, created_ms, id) WITH (deduplicate_items = off) WHERE status = 'in_progress';
CREATE INDEX bb_entries_open_created ON bb_entry_state (project_id, created_ms, id) WITH (deduplicate_items = off) WHERE status = 'open';
CREATE INDEX bb_entries_busy_created ON bb_entry_state (project_id, created_ms, id) WITH (deduplicate_items = off) WHERE status = 'in_progress';
CREATE INDEX bb_entries_closed_created ON bb_entry_state (project_id, status, created_ms, id) WITH (deduplicate_items = off) WHERE status NOT IN ('open', 'in_progress');
ALTER INDEX bb_entry_state_pkey SET (deduplicate_items = off);
CREATE VIEW bb_entries AS
  SELECT b.project_id, b.id, s.version, s.status, b.from_actor, b.to_actor, b.kind, b.created_ms, s.updated_ms, b.entry_json, b.content_hash, s.claimed_by, s.lease_expires_ms, s.updated_at
  FROM bb_entry_body b
  LEFT JOIN bb_entry_state s ON s.project_id = b.project_id AND s.id = b.id AND s.created_ms = b.created_ms AND s.to_actor = b.to_actor AND s.kind = b.kind;
CREATE FUNCTION bb_entries_write() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO bb_entry_body (project_id, id, from_actor, to_actor, kind, created_ms, entry_json, content_hash)
      VALUES (NEW.project_id, NEW.id, NEW.from_actor, NEW.to_actor, NEW.kind, NEW.created_ms, NEW.entry_json, NEW.content_hash);
    INSERT INTO bb_entry_state (project_id, id, to_actor, kind, created_ms, version, status, updated_ms, updated_at, claimed_by, lease_expires_ms)
      VALUES (NEW.project_id, NEW.id, NEW.to_actor, NEW.kind, NEW.created_ms, NEW.version, NEW.status, NEW.updated_ms, NEW.updated_at, NEW.claimed_by, NEW.lease_expires_ms);
    RETURN NEW;
  ELSIF TG_OP = 'UPDATE' THEN
    IF NEW.project_id IS DISTINCT FROM OLD.project_id OR NEW.id IS DISTINCT FROM OLD.id THEN
      RAISE EXCEPTION 'an entry keeps its project and id';
    END IF;
    IF (NEW.from_actor, NEW.to_actor, NEW.kind, NEW.created_ms, NEW.entry_json, NEW.content_hash) IS DISTINCT FROM (OLD.from_actor, OLD.to_actor, OLD.kind, OLD.created_ms, OLD.entry_json, OLD.content_hash) THEN
      UPDATE bb_entry_body SET from_actor = NEW.from_actor, to_actor = NEW.to_actor, kind = NEW.kind, created_ms = NEW.created_ms, entry_json = NEW.entry_json, content_hash = NEW.content_hash
        WHERE project_id = OLD.project_id AND id = OLD.id;
    END IF;
    UPDATE bb_entry_state SET to_actor = NEW.to_actor, kind = NEW.kind, created_ms = NEW.created_ms, version = NEW.version, status = NEW.status, updated_ms = NEW.updated_ms,
        updated_at = NEW.updated_at, claimed_by = NEW.claimed_by, lease_expires_ms = NEW.lease_expires_ms
      WHERE project_id = OLD.project_id AND id = OLD.id;
    RETURN NEW;
  ELSE
    DELETE FROM bb_entry_state WHERE project_id = OLD.project_id AND id = OLD.id;
    DELETE FROM bb_entry_body WHERE project_id = OLD.project_id AND id = OLD.id;
    RETURN OLD;
  END IF;
END $$;
CREATE TRIGGER bb_entries_write INSTEAD OF INSERT OR UPDATE OR DELETE ON bb_entries FOR EACH ROW EXECUTE FUNCTION bb_entries_write();
CREATE OR REPLACE FUNCTION bb_finish_claim_batch(p_reqs JSONB)
RETURNS TABLE (req INTEGER, claimed BOOLEAN, id TEXT, version INTEGER, status TEXT, updated_at TEXT, entry_json TEXT, claimed_by TEXT, lease_expires_ms BIGINT)
LANGUAGE plpgsql VOLATILE SET enable_hashjoin = off SET enable_mergejoin = off SET enable_seqscan = off AS $$
#variable_conflict use_column
DECLARE
  g RECORD;
  f_req INTEGER[]; f_id TEXT[]; f_version INTEGER[]; f_status TEXT[]; f_updated_at TEXT[]; f_json TEXT[];
  v_in_progress TEXT := 'in_progress';
BEGIN
  WITH r AS MATERIALIZED (
    SELECT x.*, v_in_progress AS expect FROM jsonb_to_recordset(p_reqs) AS x(req INTEGER, project TEXT, actor TEXT, id TEXT, "to" TEXT, worker TEXT, human BOOLEAN, now_ms BIGINT, now_iso TEXT, fin_changes TEXT)
  ), fin AS (
    UPDATE bb_entry_state s SET version = s.version + 1, status = r."to", updated_ms = r.now_ms, updated_at = r.now_iso, claimed_by = NULL, lease_expires_ms = NULL
    FROM r JOIN bb_entry_body b ON b.project_id = r.project AND b.id = r.id
    WHERE s.project_id = r.project AND s.id = r.id AND s.status = r.expect AND s.claimed_by = r.worker AND (s.to_actor = r.actor OR b.from_actor = r.actor OR r.human)
    RETURNING r.req AS req, r.project AS project, r.actor AS actor, r."to" AS to_status, r.now_iso AS now_iso, r.now_ms AS now_ms, r.fin_changes AS fin_changes, s.id AS id, s.version AS version, s.status AS status, s.updated_at AS updated_at, b.entry_json AS entry_json
  ), hist AS (
    INSERT INTO bb_history (project_id, entry_id, version, at, at_ms, actor, action, from_status, to_status, changes_json)
    SELECT fin.project, fin.id, fin.version, fin.now_iso, fin.now_ms, fin.actor, 'status', 'in_progress', fin.to_status, fin.fin_changes FROM fin ORDER BY fin.req
  )
  SELECT array_agg(fin.req ORDER BY fin.req), array_agg(fin.id ORDER BY fin.req), array_agg(fin.version ORDER BY fin.req), array_agg(fin.status ORDER BY fin.req), array_agg(fin.updated_at ORDER BY fin.req), array_agg(fin.entry_json ORDER BY fin.req)
  INTO f_req, f_id, f_version, f_status, f_updated_at, f_json FROM fin;
  IF f_req IS NULL THEN
    RETURN;
  END IF;
  RETURN QUERY SELECT u.req, false, u.id, u.version, u.status, u.updated_at, u.entry_json, NULL::TEXT, NULL::BIGINT
    FROM unnest(f_req, f_id, f_version, f_status, f_updated_at, f_json) AS u(req, id, version, status, updated_at, entry_json);
  FOR g IN
    SELECT r.project, r.role, r.kinds, array_agg(r.req ORDER BY r.req) AS reqs
    FROM jsonb_to_recordset(p_reqs) AS r(req INTEGER, project TEXT, role TEXT, kinds TEXT[])
    WHERE r.req = ANY (f_req) GROUP BY r.project, r.role, r.kinds ORDER BY min(r.req)
  LOOP
    RETURN QUERY WITH r AS (
      SELECT * FROM jsonb_to_recordset(p_reqs) AS (req INTEGER, worker TEXT, role TEXT, now_ms BIGINT, now_iso TEXT, lease_until BIGINT, claim_changes TEXT)
    ), picked AS (
      SELECT p.id, row_number() OVER (ORDER BY p.created_ms, p.id) AS n FROM (
        SELECT s.id, s.created_ms FROM bb_entry_state s
        WHERE s.project_id = g.project AND s.to_actor = g.role AND s.kind = ANY (g.kinds) AND s.status = 'open'
        ORDER BY s.created_ms, s.id LIMIT cardinality(g.reqs) FOR UPDATE SKIP LOCKED
      ) p
    ), mine AS (
      SELECT m.req, m.n FROM unnest(g.reqs) WITH ORDINALITY AS m(req, n)
    ), upd AS (
      UPDATE bb_entry_state e SET version = e.version + 1, status = 'in_progress', updated_ms = r.now_ms, updated_at = r.now_iso, claimed_by = r.worker, lease_expires_ms = r.lease_until
      FROM picked JOIN mine ON mine.n = picked.n JOIN r ON r.req = mine.req JOIN bb_entry_body b ON b.project_id = g.project AND b.id = picked.id
      WHERE e.project_id = g.project AND e.id = picked.id
      RETURNING r.req AS req, r.role AS role, r.now_iso AS now_iso, r.now_ms AS now_ms, r.claim_changes AS claim_changes, e.id AS id, e.version AS version, e.status AS status, e.updated_at AS updated_at, b.entry_json AS entry_json, e.claimed_by AS claimed_by, e.lease_expires_ms AS lease_expires_ms
    ), hist AS (
      INSERT INTO bb_history (project_id, entry_id, version, at, at_ms, actor, action, from_status, to_status, changes_json)
      SELECT g.project, upd.id, upd.version, upd.now_iso, upd.now_ms, upd.role, 'claim', 'open', 'in_progress', upd.claim_changes FROM upd ORDER BY upd.req
    )
    SELECT upd.req, true, upd.id, upd.version, upd.status, upd.updated_at, upd.entry_json, upd.claimed_by, upd.lease_expires_ms FROM upd;
  END LOOP;
END $$;
`;

export const m0420: Migration = {
  version: 420,
  name: "blackboard claim state in its own table, bb_entries a view (PostgreSQL)",
  up: { sqlite: "-- PostgreSQL only", postgres },
};
