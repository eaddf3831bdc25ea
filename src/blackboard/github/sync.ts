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
 * "Changed" is decided against the bb_sync link (state.ts): the hash of the entry both sides
 * last agreed on and the hash of the comment body last written or read. This file runs a sync
 * (checks, locks, the projects on the board); pass.ts is one project's pass, issue.ts the issue's calls.
 */
import { hostname } from "node:os";
import { UsageError, randomHex } from "../../core/index.js";
import { Blackboard } from "../blackboard.js";
import { parseComment, assertBlackboardType, DEFAULT_BLACKBOARD_TYPE } from "./codec.js";
import type { RemoteComment } from "./read.js";
import { createGithubClient, type GithubClient } from "./client.js";
import { BoardIssue } from "./issue.js";
import { ProjectPass } from "./pass.js";
import { releaseSyncLock, takeSyncLock } from "./state.js";
import type { SyncReport } from "./report.js";

export { SYNC_ACTOR, withBoardLink } from "./pass.js";

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
  /** Rate-limit and retry handling (see client.ts). */
  maxRetries?: number;
  maxWaitMs?: number;
  timeoutMs?: number;
  retryAfterBaseMs?: number;
  onWait?: (ms: number) => void;
  writeSpacingMs?: number;
  /** A client to reuse (`bb sync --watch`: its ETags make an unchanged board cost no rate limit). */
  client?: GithubClient;
}

export async function syncBoard(options: SyncOptions): Promise<SyncReport> {
  const { issue } = options;
  const { store } = options.board;
  if (!/^[^/\s]+\/[^/\s]+$/.test(options.repo))
    throw new UsageError("bb_sync_bad_repo", `repository "${options.repo}" is not OWNER/NAME (e.g. acme/widgets)`);
  if (!Number.isInteger(issue) || issue < 1)
    throw new UsageError("bb_sync_bad_issue", `issue "${issue}" is not an issue number (a whole number from 1)`);
  assertBlackboardType(options.type ?? DEFAULT_BLACKBOARD_TYPE);
  const client = options.client ?? (await createGithubClient(options));
  const waitsBefore = client.waits.length;
  const notModifiedBefore = client.notModified;
  const remote = new BoardIssue(client, options.repo, issue, { tokenEnv: options.tokenEnv, apiUrl: options.apiUrl });
  const repo = options.repo.toLowerCase();
  const holder = `${hostname()}:${process.pid}:${randomHex(4)}`;
  const clockMs = options.clock ?? Date.now;
  await takeSyncLock(store, { projectId: options.board.projectId, repo, issue }, holder, clockMs());
  try {
    const postType = options.type ?? DEFAULT_BLACKBOARD_TYPE;
    const report: SyncReport = {
      repo: options.repo,
      projects: [],
      issue,
      comments: 0,
      imported: [],
      updated_locally: [],
      written_back: [],
      posted: [],
      unchanged: 0,
      conflicts: [],
      bad_comments: [],
      refused: [],
      rate_limit_waits: 0,
      not_modified: 0,
    };

    const comments = await remote.comments();
    report.comments = comments.length;

    // One board issue may hold several projects' entries: each is synced into its own project's
    // blackboard (its roles alone pick them), this project's first, the others as found.
    const own = options.board;
    const projects = [own.projectId, ...projectsOnBoard(comments).filter((p) => p !== own.projectId)];
    report.projects = projects;
    for (const projectId of projects) {
      const board = projectId === own.projectId ? own : new Blackboard(store, { projectId, humans: own.humans });
      const marks = itemCounts(report);
      if (board !== own) await takeSyncLock(store, { projectId, repo, issue }, holder, clockMs());
      try {
        await new ProjectPass({ board, own: board === own, remote, repo, report, holder, clockMs, postType }).run(
          comments,
        );
      } finally {
        if (board !== own) await releaseSyncLock(store, { projectId, repo, issue }, holder);
        if (board !== own) tagProject(report, marks, projectId);
      }
    }
    report.rate_limit_waits = client.waits.length - waitsBefore;
    report.not_modified = client.notModified - notModifiedBefore;
    return report;
  } finally {
    await releaseSyncLock(store, { projectId: options.board.projectId, repo, issue }, holder);
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
const ITEM_LISTS: readonly ItemList[] = [
  "imported",
  "updated_locally",
  "written_back",
  "posted",
  "conflicts",
  "refused",
];

function itemCounts(report: SyncReport): Record<ItemList, number> {
  return Object.fromEntries(ITEM_LISTS.map((k) => [k, report[k].length])) as Record<ItemList, number>;
}

/** Name the project on the items another project's pass added (this project's stay as they were). */
function tagProject(report: SyncReport, marks: Record<ItemList, number>, projectId: string): void {
  for (const k of ITEM_LISTS)
    for (const item of report[k].slice(marks[k])) (item as { project_id?: string }).project_id = projectId;
}
