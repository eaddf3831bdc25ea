/**
 * `pmagent bb sync`: two-way sync between the local blackboard and a GitHub board issue whose
 * comments hold entries in the comment form (codec.ts).
 *
 * - every comment of the issue is read (all pages); entries not known locally are imported with
 *   `source_issue` / `source_comment_id`;
 * - an entry changed only on GitHub is imported over the local one (actor `github-sync`);
 * - an entry changed only locally is written back by rewriting its comment in canonical form;
 * - an entry changed on both sides is a conflict: reported, left alone on both sides;
 * - local entries on no board yet are posted as new comments; the entry is recorded as being
 *   posted first, so after a crash between creating the comment and linking it the next sync
 *   links that comment (writing back what changed locally since) instead of reporting a conflict;
 *   it is never posted twice, as its comment is on the board;
 * - one board issue may hold several projects' entries: each project's are synced into its own
 *   project's blackboard (this project's first), where only that project's roles pick them;
 * - a comment with the marker but a bad body is reported (issue, comment id, reason) and the
 *   rest goes on; comments without the marker are not blackboard comments and are ignored.
 *
 * "Changed" is decided against the bb_sync link (sync-state.ts): the hash of the entry both sides
 * last agreed on and the hash of the comment body last written or read.
 */
import { hostname } from "node:os";
import { randomBytes } from "node:crypto";
import { PmagentError, UsageError, contentHash, sha256Hex } from "../core/index.js";
import { Blackboard } from "./blackboard.js";
import { canTransition } from "./lifecycle.js";
import { parseComment, renderComment, assertBlackboardType, DEFAULT_BLACKBOARD_TYPE } from "./codec.js";
import { readBoard, type RemoteComment } from "./sync-read.js";
import { createGithubClient, githubError, type GithubClient } from "./github-client.js";
import type { Entry, StoredEntry } from "./schema.js";
import { clearPendingPost, loadLinks, loadPendingPosts, releaseSyncLock, saveLink, savePendingPost, takeSyncLock, type SyncLink } from "./sync-state.js";
import type { SyncReport } from "./sync-report.js";

/** The actor imports from GitHub are recorded as in the blackboard's history. */
export const SYNC_ACTOR = "github-sync";

export interface SyncOptions {
  board: Blackboard;
  /** "OWNER/NAME" */
  repo: string;
  issue: number;
  /** GitHub API base URL (config `github.api_url`). */
  apiUrl: string;
  token: string;
  /** Where the token came from, for messages (config `github.token_env`). */
  tokenEnv: string;
  /** Blackboard type of the marker on newly posted comments (default doc_update_v1). */
  type?: string;
  clock?: () => number;
  /** Rate-limit and retry handling (see github-client.ts). */
  maxRetries?: number;
  maxWaitMs?: number;
  timeoutMs?: number;
  retryAfterBaseMs?: number;
  onWait?: (ms: number) => void;
  writeSpacingMs?: number;
  /** A client to reuse (`bb sync --watch`: its ETags make an unchanged board cost no rate limit). */
  client?: GithubClient;
}

/** The entry with its board link filled in where absent: what imports store, and what hashes compare. */
export function withBoardLink(entry: Entry, issue: number, commentId: number): Entry {
  return { ...entry, source_issue: entry.source_issue ?? issue, source_comment_id: entry.source_comment_id ?? commentId };
}

export async function syncBoard(options: SyncOptions): Promise<SyncReport> {
  const { issue } = options;
  const { store } = options.board;
  if (!/^[^/\s]+\/[^/\s]+$/.test(options.repo)) throw new UsageError("bb_sync_bad_repo", `repository "${options.repo}" is not OWNER/NAME (e.g. acme/widgets)`);
  if (!Number.isInteger(issue) || issue < 1) throw new UsageError("bb_sync_bad_issue", `issue "${issue}" is not an issue number (a whole number from 1)`);
  assertBlackboardType(options.type ?? DEFAULT_BLACKBOARD_TYPE);
  const client = options.client ?? (await createGithubClient(options));
  const { octokit } = client;
  const waitsBefore = client.waits.length;
  const notModifiedBefore = client.notModified;
  const context = { tokenEnv: options.tokenEnv, apiUrl: options.apiUrl };
  /** Every GitHub call names what it was doing when it fails. */
  const gh = async <T>(what: string, call: () => Promise<T>): Promise<T> => {
    try {
      return await call();
    } catch (err) {
      throw githubError(err, what, context);
    }
  };
  const [owner, name] = options.repo.split("/") as [string, string];
  const repo = options.repo.toLowerCase();
  const holder = `${hostname()}:${process.pid}:${randomBytes(4).toString("hex")}`;
  const clockMs = options.clock ?? Date.now;
  await takeSyncLock(store, options.board.projectId, repo, issue, holder, clockMs());
  try {
    const postType = options.type ?? DEFAULT_BLACKBOARD_TYPE;
    const report: SyncReport = { repo: options.repo, projects: [], issue, comments: 0, imported: [], updated_locally: [], written_back: [], posted: [], unchanged: 0, conflicts: [], bad_comments: [], refused: [], rate_limit_waits: 0, not_modified: 0 };

    const comments: RemoteComment[] = (
      await gh(`list the comments of ${options.repo}#${issue}`, () => octokit.paginate(octokit.rest.issues.listComments, { owner, repo: name, issue_number: issue, per_page: 100 }))
    ).map((c) => ({ id: c.id, body: c.body ?? "", updated_at: c.updated_at }));
    report.comments = comments.length;

    // One board issue may hold several projects' entries: each is synced into its own project's
    // blackboard (its roles alone pick them), this project's first, the others as found.
    const own = options.board;
    const projects = [own.projectId, ...projectsOnBoard(comments).filter((p) => p !== own.projectId)];
    report.projects = projects;
    for (const projectId of projects) {
      const board = projectId === own.projectId ? own : new Blackboard(store, { projectId, humans: own.humans });
      const marks = itemCounts(report);
      if (board !== own) await takeSyncLock(store, projectId, repo, issue, holder, clockMs());
      try {
        const links = await loadLinks(store, projectId);
        const linkByComment = new Map(links.filter((l) => l.repo === repo && l.issue === issue).map((l) => [l.comment_id, l]));
        const linkByEntry = new Map(links.map((l) => [l.entry_id, l]));
        const pending = await loadPendingPosts(store, projectId, repo, issue);
        const hashFor = (entry: Entry, commentId: number) => contentHash(withBoardLink(entry, issue, commentId));
        const link = async (entryId: string, comment: RemoteComment, bbType: string, entryHash: string) => {
          const l: SyncLink = { entry_id: entryId, repo, issue, comment_id: comment.id, bb_type: bbType, entry_hash: entryHash, body_hash: sha256Hex(comment.body), remote_updated_at: comment.updated_at };
          await saveLink(store, projectId, l, new Date(clockMs()));
          if (pending.delete(entryId)) await clearPendingPost(store, projectId, entryId);
          await takeSyncLock(store, projectId, repo, issue, holder, clockMs());
          // An entry whose old comment is gone may be relinked to a copy: forget the old comment.
          const previous = linkByEntry.get(entryId);
          if (previous && previous.comment_id !== comment.id) linkByComment.delete(previous.comment_id);
          linkByEntry.set(entryId, l);
          linkByComment.set(comment.id, l);
        };
        /** A write GitHub refuses for this entry alone (422, or a comment deleted meanwhile) is reported; the rest goes on. */
        const refusedWrite = (err: unknown, entryId: string, commentId: number | undefined, codes: string[]): boolean => {
          if (!(err instanceof PmagentError) || !codes.includes(err.code)) return false;
          report.refused.push({ entry_id: entryId, ...(commentId === undefined ? {} : { comment_id: commentId }), reason: err.message });
          return true;
        };
        const writeBack = async (entry: Entry, comment: RemoteComment, bbType: string): Promise<void> => {
          let data: { id: number; body?: string; updated_at: string };
          try {
            ({ data } = await gh(`rewrite comment ${comment.id} of ${options.repo}#${issue}`, () =>
              octokit.rest.issues.updateComment({ owner, repo: name, comment_id: comment.id, body: renderComment(entry, bbType) }),
            ));
          } catch (err) {
            if (refusedWrite(err, entry.id, comment.id, ["github_rejected", "github_not_found"])) return;
            throw err;
          }
          await link(entry.id, { id: data.id, body: data.body ?? "", updated_at: data.updated_at }, bbType, hashFor(entry, comment.id));
          report.written_back.push({ entry_id: entry.id, comment_id: comment.id });
        };
        /** Import into the local board; a refusal there (stale version, lifecycle, claim) is a conflict, not a failure. */
        const importRemote = async (entry: Entry, local: StoredEntry | undefined, comment: RemoteComment): Promise<boolean> => {
          const conflict = (reason: string) => {
            report.conflicts.push({ entry_id: entry.id, comment_id: comment.id, remote_updated_at: comment.updated_at, reason });
            return false;
          };
          if (local && local.entry.status !== entry.status && !canTransition(local.entry.status, entry.status)) {
            return conflict(`edited on GitHub to move it ${local.entry.status} → ${entry.status}, which the lifecycle does not allow; the local entry is kept`);
          }
          if (local?.claimed_by) return conflict(`edited on GitHub while ${local.claimed_by} holds its claim locally; not imported while the claim is held`);
          try {
            await board.put(SYNC_ACTOR, entry, { source: `comment ${comment.id}`, replace: local !== undefined, expectedVersion: local?.version });
            return true;
          } catch (err) {
            if (!(err instanceof PmagentError) || err.kind === "internal" || err.kind === "unavailable") throw err;
            return conflict(`the local blackboard refused the GitHub version: ${err.message}`);
          }
        };

        const { decoded, seen } = readBoard(comments, linkByComment, linkByEntry, projectId, report, board === own);

        for (const comment of comments) {
          const known = linkByComment.get(comment.id);
          const d = decoded.get(comment.id);
          if (known && !d) {
            if (known.body_hash !== sha256Hex(comment.body)) continue; // reported above
            // Unchanged on GitHub: write back if the local entry changed.
            const local = await board.find(known.entry_id);
            if (local && hashFor(local.entry, comment.id) !== known.entry_hash) await writeBack(local.entry, comment, known.bb_type);
            else report.unchanged++;
            continue;
          }
          if (!d) continue;
          const remote = withBoardLink(d.entry, issue, comment.id);
          const remoteHash = contentHash(remote);
          const local = await board.find(remote.id);
          const localHash = local ? hashFor(local.entry, comment.id) : undefined;
          if (known && known.entry_id !== remote.id) {
            report.conflicts.push({ entry_id: known.entry_id, comment_id: comment.id, remote_updated_at: comment.updated_at, reason: `the comment was edited on GitHub to hold entry "${remote.id}" instead; neither side is changed` });
            continue;
          }
          if (!known) {
            if (!local) {
              if (await importRemote(remote, undefined, comment)) {
                await link(remote.id, comment, d.type, remoteHash);
                report.imported.push({ entry_id: remote.id, comment_id: comment.id });
              }
            } else if (localHash === remoteHash) {
              await link(remote.id, comment, d.type, remoteHash);
              report.unchanged++;
            } else if (pending.get(remote.id) === contentHash(d.entry)) {
              // Our own post, cut off before it was linked: that is the version both sides agreed on,
              // and the entry changed only locally since.
              await link(remote.id, comment, d.type, remoteHash);
              await writeBack(local.entry, comment, d.type);
            } else {
              report.conflicts.push({ entry_id: remote.id, comment_id: comment.id, remote_updated_at: comment.updated_at, reason: "the entry exists locally and differs from this comment, which was never synced with it; neither side is changed" });
            }
            continue;
          }
          const remoteChanged = remoteHash !== known.entry_hash;
          const localChanged = localHash !== known.entry_hash;
          if (remoteHash === localHash) {
            await link(remote.id, comment, d.type, remoteHash);
            report.unchanged++;
          } else if (remoteChanged && localChanged) {
            report.conflicts.push({ entry_id: remote.id, comment_id: comment.id, remote_updated_at: comment.updated_at, reason: `changed locally and edited on GitHub (at ${comment.updated_at}) since the last sync; neither side is changed` });
          } else if (remoteChanged || !local) {
            if (await importRemote(remote, local, comment)) {
              await link(remote.id, comment, d.type, remoteHash);
              report.updated_locally.push({ entry_id: remote.id, comment_id: comment.id });
            }
          } else {
            await writeBack(local.entry, comment, d.type);
          }
        }

        const present = new Set(comments.map((c) => c.id));
        for (const l of linkByComment.values()) {
          if (!present.has(l.comment_id)) {
            report.conflicts.push({ entry_id: l.entry_id, comment_id: l.comment_id, remote_updated_at: l.remote_updated_at, reason: "the comment was deleted on GitHub; the local entry is kept and not posted again" });
          }
        }

        // Local entries on no board yet, oldest first (list's order) so the board reads in order.
        const unposted = (await board.list()).filter(({ entry }) => !linkByEntry.has(entry.id) && !seen.has(entry.id));
        for (const { entry } of unposted) {
          let data: { id: number; body?: string; updated_at: string };
          await savePendingPost(store, projectId, repo, issue, entry.id, contentHash(entry), clockMs());
          pending.set(entry.id, contentHash(entry));
          try {
            ({ data } = await gh(`post entry ${entry.id} to ${options.repo}#${issue}`, () =>
              octokit.rest.issues.createComment({ owner, repo: name, issue_number: issue, body: renderComment(entry, postType) }),
            ));
          } catch (err) {
            if (refusedWrite(err, entry.id, undefined, ["github_rejected"])) {
              pending.delete(entry.id);
              await clearPendingPost(store, projectId, entry.id);
              continue;
            }
            throw err;
          }
          await link(entry.id, { id: data.id, body: data.body ?? "", updated_at: data.updated_at }, postType, hashFor(entry, data.id));
          report.posted.push({ entry_id: entry.id, comment_id: data.id });
        }
      } finally {
        if (board !== own) await releaseSyncLock(store, projectId, repo, issue, holder);
        if (board !== own) tagProject(report, marks, projectId);
      }
    }
    report.rate_limit_waits = client.waits.length - waitsBefore;
    report.not_modified = client.notModified - notModifiedBefore;
    return report;
  } finally {
    await releaseSyncLock(store, options.board.projectId, repo, issue, holder);
  }
}

/** The projects whose entries the board's comments hold, in order of first appearance. */
function projectsOnBoard(comments: readonly RemoteComment[]): string[] {
  const seen = new Set<string>();
  for (const c of comments) {
    try {
      const d = parseComment(c.body);
      if (d) seen.add(d.entry.project_id);
    } catch {
      // A bad comment is reported by the pass of this project (readBoard).
    }
  }
  return [...seen];
}

type ItemList = "imported" | "updated_locally" | "written_back" | "posted" | "conflicts" | "refused";
const ITEM_LISTS: readonly ItemList[] = ["imported", "updated_locally", "written_back", "posted", "conflicts", "refused"];

function itemCounts(report: SyncReport): Record<ItemList, number> {
  return Object.fromEntries(ITEM_LISTS.map((k) => [k, report[k].length])) as Record<ItemList, number>;
}

/** Name the project on the items another project's pass added (this project's stay as they were). */
function tagProject(report: SyncReport, marks: Record<ItemList, number>, projectId: string): void {
  for (const k of ITEM_LISTS) for (const item of report[k].slice(marks[k])) (item as { project_id?: string }).project_id = projectId;
}
