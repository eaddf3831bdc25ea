import { sha256Hex } from "../../core/index.js";
import { parseComment, BlackboardCommentError, type DecodedComment } from "./codec.js";
import type { SyncLink } from "./state.js";
import type { SyncReport } from "./report.js";

export interface RemoteComment {
  id: number;
  body: string;
  updated_at: string;
}

export interface BoardReading {
  /** Comments to reconcile (new or changed since the last sync), by comment id. */
  decoded: Map<number, DecodedComment>;
  /** Entry id → the comment holding it, for every entry on the board. */
  seen: Map<string, number>;
}

/**
 * First pass of a sync: decode the comments that are new or changed since the last sync, report
 * bad comments and copies of an entry (entries of other projects are left to their own pass), so that the second pass sees
 * each entry once whatever the comment order. The linked comment of an entry wins over copies;
 * among unlinked copies the oldest comment wins.
 */
export function readBoard(
  comments: readonly RemoteComment[],
  /** The project's links as they stand, by comment id and by entry id. */
  links: { byComment: ReadonlyMap<number, SyncLink>; byEntry: ReadonlyMap<string, SyncLink> },
  projectId: string,
  report: SyncReport,
  /** Report comments that hold no valid entry (once per sync: in this project's pass only). */
  reportBad = true,
): BoardReading {
  const { byComment: linkByComment, byEntry: linkByEntry } = links;
  const issue = report.issue;
  const decoded = new Map<number, DecodedComment>();
  const seen = new Map<string, number>();
  for (const comment of comments) {
    const known = linkByComment.get(comment.id);
    if (known && known.body_hash === sha256Hex(comment.body)) {
      seen.set(known.entry_id, comment.id);
      continue;
    }
    let d: DecodedComment | undefined;
    try {
      d = parseComment(comment.body);
    } catch (err) {
      if (!(err instanceof BlackboardCommentError)) throw err;
      if (reportBad) report.bad_comments.push({ issue, comment_id: comment.id, code: err.code, reason: err.message });
      continue;
    }
    if (d === undefined) {
      if (known)
        report.conflicts.push({
          entry_id: known.entry_id,
          comment_id: comment.id,
          remote_updated_at: comment.updated_at,
          reason: "the comment was edited on GitHub and no longer holds a blackboard entry; the local entry is kept",
        });
      continue;
    }
    // Another project's entry: synced by that project's pass (github-sync.ts), not a bad comment.
    if (d.entry.project_id !== projectId) continue;
    decoded.set(comment.id, d);
  }
  const present = new Set(comments.map((c) => c.id));
  for (const comment of comments) {
    const d = decoded.get(comment.id);
    if (!d) continue;
    const owner = linkByEntry.get(d.entry.id);
    const first = owner !== undefined && present.has(owner.comment_id) ? owner.comment_id : seen.get(d.entry.id);
    if (first !== undefined && first !== comment.id) {
      report.bad_comments.push({
        issue,
        comment_id: comment.id,
        code: "bb_comment_duplicate",
        reason: `entry "${d.entry.id}" is already held by comment ${first}; this copy is ignored`,
      });
      decoded.delete(comment.id);
    } else {
      seen.set(d.entry.id, comment.id);
    }
  }
  return { decoded, seen };
}
