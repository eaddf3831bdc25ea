import { PmagentError, contentHash, hasCode, sha256Hex, type ErrorCode } from "../../core/index.js";
import type { Blackboard } from "../blackboard.js";
import { canTransition } from "../lifecycle.js";
import type { Entry, StoredEntry } from "../schema.js";
import { renderComment } from "./codec.js";
import type { BoardIssue } from "./issue.js";
import { readBoard, type RemoteComment } from "./read.js";
import type { SyncReport } from "./report.js";
import {
  clearPendingPost,
  loadLinks,
  loadPendingPosts,
  saveLink,
  savePendingPost,
  takeSyncLock,
  type SyncKey,
  type SyncLink,
} from "./state.js";

/** The actor imports from GitHub are recorded as in the blackboard's history. */
export const SYNC_ACTOR = "github-sync";

/** The entry with its board link filled in where absent: what imports store, and what hashes compare. */
export function withBoardLink(entry: Entry, issue: number, commentId: number): Entry {
  return {
    ...entry,
    source_issue: entry.source_issue ?? issue,
    source_comment_id: entry.source_comment_id ?? commentId,
  };
}

export interface PassOptions {
  board: Blackboard;
  /** Whether this is the syncing project's own board (its pass alone reports bad comments). */
  own: boolean;
  remote: BoardIssue;
  /** The repository in lower case, as the links store it. */
  repo: string;
  report: SyncReport;
  /** Holder of the sync lock, renewed after each link. */
  holder: string;
  clockMs: () => number;
  /** Blackboard type of the marker on newly posted comments. */
  postType: string;
}

/**
 * One project's pass of a sync over the board issue's comments: import what changed only on
 * GitHub, write back what changed only locally, report conflicts and deleted comments, post the
 * entries on no board yet. Its state is the project's bb_sync links as they stood and as it
 * makes them.
 */
export class ProjectPass {
  private readonly projectId: string;
  private readonly issue: number;
  private readonly key: SyncKey;
  private linkByComment = new Map<number, SyncLink>();
  private linkByEntry = new Map<string, SyncLink>();
  private pending = new Map<string, string>();

  constructor(private readonly o: PassOptions) {
    this.projectId = o.board.projectId;
    this.issue = o.remote.issue;
    this.key = { projectId: this.projectId, repo: o.repo, issue: this.issue };
  }

  async run(comments: readonly RemoteComment[]): Promise<void> {
    const { board } = this.o;
    const { store } = board;
    const links = await loadLinks(store, this.projectId);
    this.linkByComment = new Map(
      links.filter((l) => l.repo === this.o.repo && l.issue === this.issue).map((l) => [l.comment_id, l]),
    );
    this.linkByEntry = new Map(links.map((l) => [l.entry_id, l]));
    this.pending = await loadPendingPosts(store, this.key);

    const { decoded, seen } = readBoard(
      comments,
      { byComment: this.linkByComment, byEntry: this.linkByEntry },
      this.projectId,
      this.o.report,
      this.o.own,
    );
    for (const comment of comments) {
      const d = decoded.get(comment.id);
      const known = this.linkByComment.get(comment.id);
      if (known && !d) await this.unchangedRemote(known, comment);
      else if (d) await this.reconcile(comment, d.entry, d.type, known);
    }
    this.reportDeleted(comments);

    // Local entries on no board yet, oldest first (list's order) so the board reads in order.
    const unposted = (await board.list()).filter(({ entry }) => !this.linkByEntry.has(entry.id) && !seen.has(entry.id));
    for (const { entry } of unposted) await this.post(entry);
  }

  /** A linked comment GitHub did not change: write back if the local entry changed. */
  private async unchangedRemote(known: SyncLink, comment: RemoteComment): Promise<void> {
    if (known.body_hash !== sha256Hex(comment.body)) return; // reported by readBoard
    const local = await this.o.board.find(known.entry_id);
    if (local && this.hashFor(local.entry, comment.id) !== known.entry_hash)
      await this.writeBack(local.entry, comment, known.bb_type);
    else this.o.report.unchanged++;
  }

  /** A comment new or changed since the last sync, holding `entry`: decide which side changed. */
  private async reconcile(
    comment: RemoteComment,
    entry: Entry,
    bbType: string,
    known: SyncLink | undefined,
  ): Promise<void> {
    const { report } = this.o;
    const remote = withBoardLink(entry, this.issue, comment.id);
    const remoteHash = contentHash(remote);
    const local = await this.o.board.find(remote.id);
    const localHash = local ? this.hashFor(local.entry, comment.id) : undefined;
    if (known && known.entry_id !== remote.id) {
      report.conflicts.push({
        entry_id: known.entry_id,
        comment_id: comment.id,
        remote_updated_at: comment.updated_at,
        reason: `the comment was edited on GitHub to hold entry "${remote.id}" instead; neither side is changed`,
      });
      return;
    }
    if (!known) {
      if (!local) {
        if (await this.importRemote(remote, undefined, comment)) {
          await this.link(remote.id, comment, bbType, remoteHash);
          report.imported.push({ entry_id: remote.id, comment_id: comment.id });
        }
      } else if (localHash === remoteHash) {
        await this.link(remote.id, comment, bbType, remoteHash);
        report.unchanged++;
      } else if (this.pending.get(remote.id) === contentHash(entry)) {
        // Our own post, cut off before it was linked: that is the version both sides agreed on,
        // and the entry changed only locally since.
        await this.link(remote.id, comment, bbType, remoteHash);
        await this.writeBack(local.entry, comment, bbType);
      } else {
        report.conflicts.push({
          entry_id: remote.id,
          comment_id: comment.id,
          remote_updated_at: comment.updated_at,
          reason:
            "the entry exists locally and differs from this comment, which was never synced with it; neither side is changed",
        });
      }
      return;
    }
    const remoteChanged = remoteHash !== known.entry_hash;
    const localChanged = localHash !== known.entry_hash;
    if (remoteHash === localHash) {
      await this.link(remote.id, comment, bbType, remoteHash);
      report.unchanged++;
    } else if (remoteChanged && localChanged) {
      report.conflicts.push({
        entry_id: remote.id,
        comment_id: comment.id,
        remote_updated_at: comment.updated_at,
        reason: `changed locally and edited on GitHub (at ${comment.updated_at}) since the last sync; neither side is changed`,
      });
    } else if (remoteChanged || !local) {
      if (await this.importRemote(remote, local, comment)) {
        await this.link(remote.id, comment, bbType, remoteHash);
        report.updated_locally.push({ entry_id: remote.id, comment_id: comment.id });
      }
    } else {
      await this.writeBack(local.entry, comment, bbType);
    }
  }

  /** Linked comments no longer on the issue. */
  private reportDeleted(comments: readonly RemoteComment[]): void {
    const present = new Set(comments.map((c) => c.id));
    for (const l of this.linkByComment.values()) {
      if (!present.has(l.comment_id)) {
        this.o.report.conflicts.push({
          entry_id: l.entry_id,
          comment_id: l.comment_id,
          remote_updated_at: l.remote_updated_at,
          reason: "the comment was deleted on GitHub; the local entry is kept and not posted again",
        });
      }
    }
  }

  private hashFor(entry: Entry, commentId: number): string {
    return contentHash(withBoardLink(entry, this.issue, commentId));
  }

  private async link(entryId: string, comment: RemoteComment, bbType: string, entryHash: string): Promise<void> {
    const { store } = this.o.board;
    const l: SyncLink = {
      entry_id: entryId,
      repo: this.o.repo,
      issue: this.issue,
      comment_id: comment.id,
      bb_type: bbType,
      entry_hash: entryHash,
      body_hash: sha256Hex(comment.body),
      remote_updated_at: comment.updated_at,
    };
    await saveLink(store, this.projectId, l, new Date(this.o.clockMs()));
    if (this.pending.delete(entryId)) await clearPendingPost(store, this.projectId, entryId);
    await takeSyncLock(store, this.key, this.o.holder, this.o.clockMs());
    // An entry whose old comment is gone may be relinked to a copy: forget the old comment.
    const previous = this.linkByEntry.get(entryId);
    if (previous && previous.comment_id !== comment.id) this.linkByComment.delete(previous.comment_id);
    this.linkByEntry.set(entryId, l);
    this.linkByComment.set(comment.id, l);
  }

  /** A write GitHub refuses for this entry alone (422, or a comment deleted meanwhile) is reported; the rest goes on. */
  private refusedWrite(err: unknown, entryId: string, commentId: number | undefined, codes: ErrorCode[]): boolean {
    if (!hasCode(err, ...codes)) return false;
    this.o.report.refused.push({
      entry_id: entryId,
      ...(commentId === undefined ? {} : { comment_id: commentId }),
      reason: err.message,
    });
    return true;
  }

  private async writeBack(entry: Entry, comment: RemoteComment, bbType: string): Promise<void> {
    let written: RemoteComment;
    try {
      written = await this.o.remote.rewrite(comment.id, renderComment(entry, bbType));
    } catch (err) {
      if (this.refusedWrite(err, entry.id, comment.id, ["github_rejected", "github_not_found"])) return;
      throw err;
    }
    await this.link(entry.id, written, bbType, this.hashFor(entry, comment.id));
    this.o.report.written_back.push({ entry_id: entry.id, comment_id: comment.id });
  }

  /** Import into the local board; a refusal there (stale version, lifecycle, claim) is a conflict, not a failure. */
  private async importRemote(entry: Entry, local: StoredEntry | undefined, comment: RemoteComment): Promise<boolean> {
    const conflict = (reason: string) => {
      this.o.report.conflicts.push({
        entry_id: entry.id,
        comment_id: comment.id,
        remote_updated_at: comment.updated_at,
        reason,
      });
      return false;
    };
    if (local && local.entry.status !== entry.status && !canTransition(local.entry.status, entry.status)) {
      return conflict(
        `edited on GitHub to move it ${local.entry.status} → ${entry.status}, which the lifecycle does not allow; the local entry is kept`,
      );
    }
    if (local?.claimed_by)
      return conflict(
        `edited on GitHub while ${local.claimed_by} holds its claim locally; not imported while the claim is held`,
      );
    try {
      await this.o.board.put(SYNC_ACTOR, entry, {
        source: `comment ${comment.id}`,
        replace: local !== undefined,
        expectedVersion: local?.version,
      });
      return true;
    } catch (err) {
      if (!(err instanceof PmagentError) || err.kind === "internal" || err.kind === "unavailable") throw err;
      return conflict(`the local blackboard refused the GitHub version: ${err.message}`);
    }
  }

  /** Post an entry on no board yet; it is recorded as being posted first, so a crash before the link is not posted twice. */
  private async post(entry: Entry): Promise<void> {
    const { store } = this.o.board;
    await savePendingPost(store, this.key, entry.id, contentHash(entry), this.o.clockMs());
    this.pending.set(entry.id, contentHash(entry));
    let posted: RemoteComment;
    try {
      posted = await this.o.remote.post(entry.id, renderComment(entry, this.o.postType));
    } catch (err) {
      if (this.refusedWrite(err, entry.id, undefined, ["github_rejected"])) {
        this.pending.delete(entry.id);
        await clearPendingPost(store, this.projectId, entry.id);
        return;
      }
      throw err;
    }
    await this.link(entry.id, posted, this.o.postType, this.hashFor(entry, posted.id));
    this.o.report.posted.push({ entry_id: entry.id, comment_id: posted.id });
  }
}
