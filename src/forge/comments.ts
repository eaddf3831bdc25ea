/**
 * Review comments on a pull request of the local forge: on the whole change or on one line of one
 * of its files, by whoever is authenticated (a person, or an agent's role through MCP).
 */
import { UsageError, randomHex } from "../core/index.js";
import type { Store } from "../store/index.js";
import type { LocalForge } from "./forge.js";

export interface PullComment {
  id: string;
  number: number;
  author: string;
  body: string;
  /** The file it is about (a path of the change), or null for the whole change. */
  path: string | null;
  /** The line of that file in the change's new version. */
  line: number | null;
  created_at: string;
}

export interface NewPullComment {
  body: string;
  path?: string | null;
  line?: number | null;
}

interface CommentRow extends Omit<PullComment, "number" | "line"> {
  number: number | string;
  line: number | string | null;
}

const toComment = (r: CommentRow): PullComment => ({
  id: r.id,
  number: Number(r.number),
  author: r.author,
  body: r.body,
  path: r.path,
  line: r.line === null ? null : Number(r.line),
  created_at: r.created_at,
});

export const MAX_COMMENT_CHARS = 65_536;

export class PullComments {
  constructor(private readonly o: { store: Store; projectId: string; forge: LocalForge; clock?: () => number }) {}

  /** Add a comment as `author` (from authentication); the pull request must exist. */
  async add(author: string, number: number, c: NewPullComment): Promise<PullComment> {
    const body = c.body.trim();
    if (body === "")
      throw new UsageError(
        "invalid_comment",
        "a review comment needs a body: say what should change, or why it is fine",
      );
    if (body.length > MAX_COMMENT_CHARS)
      throw new UsageError(
        "invalid_comment",
        `a review comment holds at most ${MAX_COMMENT_CHARS} characters (this one has ${body.length}): link to a longer note instead`,
      );
    const path = c.path ?? null;
    const line = c.line ?? null;
    if (line !== null && path === null)
      throw new UsageError(
        "invalid_comment",
        "a comment on a line names its file too: give the path of one of the change's files",
      );
    if (path !== null && (path === "" || path.startsWith("/") || path.split("/").includes("..")))
      throw new UsageError(
        "invalid_comment",
        `"${path}" is not a path of the change: give it relative to the repository, without .. (e.g. src/greet.py)`,
      );
    if (line !== null && (!Number.isInteger(line) || line < 1))
      throw new UsageError("invalid_comment", `a comment's line is a whole number from 1, got ${line}`);
    await this.o.forge.get(number);
    const ms = (this.o.clock ?? Date.now)();
    const comment: PullComment = {
      id: `prc_${randomHex(6)}`,
      number,
      author,
      body,
      path,
      line,
      created_at: new Date(ms).toISOString(),
    };
    await this.o.store.run(
      "INSERT INTO forge_pull_comments (id, project_id, number, author, body, path, line, created_at, created_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
      [comment.id, this.o.projectId, number, author, body, path, line, comment.created_at, ms],
    );
    return comment;
  }

  /** A pull request's comments, oldest first. */
  async list(number: number): Promise<PullComment[]> {
    await this.o.forge.get(number);
    const rows = await this.o.store.all<CommentRow>(
      "SELECT id, number, author, body, path, line, created_at FROM forge_pull_comments WHERE project_id = ? AND number = ? ORDER BY created_ms, id",
      [this.o.projectId, number],
    );
    return rows.map(toComment);
  }
}
