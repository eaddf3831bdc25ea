import { ConflictError } from "../../core/index.js";
import type { Queryable } from "../../store/index.js";

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
  const rows = await db.all<SyncLink>(`SELECT ${COLUMNS} FROM bb_sync WHERE project_id = ? ORDER BY entry_id`, [
    projectId,
  ]);
  return rows.map((r) => ({ ...r, issue: Number(r.issue), comment_id: Number(r.comment_id) }));
}

export async function saveLink(db: Queryable, projectId: string, link: SyncLink, now: Date): Promise<void> {
  await db.run(
    `INSERT INTO bb_sync (project_id, ${COLUMNS}, synced_at, synced_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (project_id, entry_id) DO UPDATE SET repo = excluded.repo, issue = excluded.issue, comment_id = excluded.comment_id,
       bb_type = excluded.bb_type, entry_hash = excluded.entry_hash, body_hash = excluded.body_hash,
       remote_updated_at = excluded.remote_updated_at, synced_at = excluded.synced_at, synced_ms = excluded.synced_ms`,
    [
      projectId,
      link.entry_id,
      link.repo,
      link.issue,
      link.comment_id,
      link.bb_type,
      link.entry_hash,
      link.body_hash,
      link.remote_updated_at,
      now.toISOString(),
      now.getTime(),
    ],
  );
}

/** A project's side of one board issue: what its pending posts and its sync lock are kept by. */
export interface SyncKey {
  projectId: string;
  /** "owner/name" in lower case. */
  repo: string;
  issue: number;
}

/**
 * Posts under way on a board (bb_sync_posting): entry id → hash of the entry as sent. A row left
 * by a sync that died between creating the comment and linking it names that comment's content.
 */
export async function loadPendingPosts(db: Queryable, key: SyncKey): Promise<Map<string, string>> {
  const { projectId, repo, issue } = key;
  const rows = await db.all<{ entry_id: string; entry_hash: string }>(
    "SELECT entry_id, entry_hash FROM bb_sync_posting WHERE project_id = ? AND repo = ? AND issue = ?",
    [projectId, repo, issue],
  );
  return new Map(rows.map((r) => [r.entry_id, r.entry_hash]));
}

/** Record a post before its comment is created (replacing an earlier one of the entry). */
export async function savePendingPost(
  db: Queryable,
  key: SyncKey,
  entryId: string,
  entryHash: string,
  nowMs: number,
): Promise<void> {
  const { projectId, repo, issue } = key;
  await db.run(
    `INSERT INTO bb_sync_posting (project_id, entry_id, repo, issue, entry_hash, at_ms) VALUES (?, ?, ?, ?, ?, ?)
     ON CONFLICT (project_id, entry_id) DO UPDATE SET repo = excluded.repo, issue = excluded.issue, entry_hash = excluded.entry_hash, at_ms = excluded.at_ms`,
    [projectId, entryId, repo, issue, entryHash, nowMs],
  );
}

export async function clearPendingPost(db: Queryable, projectId: string, entryId: string): Promise<void> {
  await db.run("DELETE FROM bb_sync_posting WHERE project_id = ? AND entry_id = ?", [projectId, entryId]);
}

/** How long a sync's lock lasts without renewal: a crashed sync blocks the board only this long. */
export const SYNC_LOCK_MS = 5 * 60_000;

/**
 * Take (or renew) the board's sync lock for `holder`; a lock of another holder that has not
 * expired refuses the sync. Two syncs at once would post the same new entry twice.
 */
export async function takeSyncLock(db: Queryable, key: SyncKey, holder: string, nowMs: number): Promise<void> {
  const { projectId, repo, issue } = key;
  const r = await db.run(
    `INSERT INTO bb_sync_lock (project_id, repo, issue, holder, expires_ms) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (project_id, repo, issue) DO UPDATE SET holder = excluded.holder, expires_ms = excluded.expires_ms
     WHERE bb_sync_lock.holder = excluded.holder OR bb_sync_lock.expires_ms < ?`,
    [projectId, repo, issue, holder, nowMs + SYNC_LOCK_MS, nowMs],
  );
  if (r.changes === 1) return;
  const current = await db.get<{ holder: string; expires_ms: number }>(
    "SELECT holder, expires_ms FROM bb_sync_lock WHERE project_id = ? AND repo = ? AND issue = ?",
    [projectId, repo, issue],
  );
  throw new ConflictError(
    "bb_sync_running",
    `another bb sync of ${repo}#${issue} is running (${current?.holder ?? "unknown"}, lock held until ${new Date(Number(current?.expires_ms ?? nowMs)).toISOString()}): wait for it to finish`,
  );
}

export async function releaseSyncLock(db: Queryable, key: SyncKey, holder: string): Promise<void> {
  const { projectId, repo, issue } = key;
  await db.run("DELETE FROM bb_sync_lock WHERE project_id = ? AND repo = ? AND issue = ? AND holder = ?", [
    projectId,
    repo,
    issue,
    holder,
  ]);
}
