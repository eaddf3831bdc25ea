import type { GithubClient } from "./client.js";
import { githubError } from "./client.js";
import type { RemoteComment } from "./read.js";

/**
 * The board issue on GitHub, as the sync uses it: list its comments, rewrite one, post one. Every
 * call names what it was doing when it fails (githubError).
 */
export class BoardIssue {
  private readonly owner: string;
  private readonly name: string;

  constructor(
    private readonly client: GithubClient,
    /** "OWNER/NAME", as given. */
    readonly repo: string,
    readonly issue: number,
    private readonly context: { tokenEnv: string; apiUrl: string },
  ) {
    [this.owner, this.name] = repo.split("/") as [string, string];
  }

  /** Every comment of the issue (all pages). */
  async comments(): Promise<RemoteComment[]> {
    const { octokit } = this.client;
    const all = await this.call(`list the comments of ${this.repo}#${this.issue}`, () =>
      octokit.paginate(octokit.rest.issues.listComments, {
        owner: this.owner,
        repo: this.name,
        issue_number: this.issue,
        per_page: 100,
      }),
    );
    return all.map((c) => ({ id: c.id, body: c.body ?? "", updated_at: c.updated_at }));
  }

  async rewrite(commentId: number, body: string): Promise<RemoteComment> {
    const { octokit } = this.client;
    const { data } = await this.call(`rewrite comment ${commentId} of ${this.repo}#${this.issue}`, () =>
      octokit.rest.issues.updateComment({ owner: this.owner, repo: this.name, comment_id: commentId, body }),
    );
    return { id: data.id, body: data.body ?? "", updated_at: data.updated_at };
  }

  async post(entryId: string, body: string): Promise<RemoteComment> {
    const { octokit } = this.client;
    const { data } = await this.call(`post entry ${entryId} to ${this.repo}#${this.issue}`, () =>
      octokit.rest.issues.createComment({ owner: this.owner, repo: this.name, issue_number: this.issue, body }),
    );
    return { id: data.id, body: data.body ?? "", updated_at: data.updated_at };
  }

  private async call<T>(what: string, call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (err) {
      throw githubError(err, what, this.context);
    }
  }
}
