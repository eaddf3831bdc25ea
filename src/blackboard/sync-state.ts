import type { Queryable } from "../store/index.js";

/** One entry ↔ comment link (a row of bb_sync). */
export interface SyncLink {
  entry_id: string;
  repo: string;
  issue: number;
  comment_id: number;
  /** The blackboard type of the comment's marker, kept when the comment is rewritten. */
  bb_type: string;
  /** Hash of the entry as both sides last agreed on (see `syncHash`). */
  entry_hash: string;
  /** sha256 of the comment body as last written or read. */
  body_hash: string;
  remote_updated_at: string;
}

const COLUMNS = "entry_id, repo, issue, comment_id, bb_type, entry_hash, body_hash, remote_updated_at";

/** Every link of the project (all boards): an entry lives in one board comment. */
export async function loadLinks(db: Queryable, projectId: string): Promise<SyncLink[]> {
  const rows = await db.all<SyncLink>(`SELECT ${COLUMNS} FROM bb_sync WHERE project_id = ? ORDER BY entry_id`, [projectId]);
  return rows.map((r) => ({ ...r, issue: Number(r.issue), comment_id: Number(r.comment_id) }));
}

export async function saveLink(db: Queryable, projectId: string, link: SyncLink, now: Date): Promise<void> {
  await db.run(
    `INSERT INTO bb_sync (project_id, ${COLUMNS}, synced_at, synced_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (project_id, entry_id) DO UPDATE SET repo = excluded.repo, issue = excluded.issue, comment_id = excluded.comment_id,
       bb_type = excluded.bb_type, entry_hash = excluded.entry_hash, body_hash = excluded.body_hash,
       remote_updated_at = excluded.remote_updated_at, synced_at = excluded.synced_at, synced_ms = excluded.synced_ms`,
    [projectId, link.entry_id, link.repo, link.issue, link.comment_id, link.bb_type, link.entry_hash, link.body_hash, link.remote_updated_at, now.toISOString(), now.getTime()],
  );
}
