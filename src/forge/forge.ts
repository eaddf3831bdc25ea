import { randomUUID } from "node:crypto";
import { existsSync, mkdirSync, renameSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { ConflictError, NotFoundError, UsageError, confinePath } from "../core/index.js";
import {
  Keyset,
  Where,
  inChunks,
  marks,
  type Page,
  type PageRequest,
  type SqlParam,
  type Store,
} from "../store/index.js";
import { assertBranchName, branchSha, git, mergeCommits } from "./git.js";
import { WorkspaceRepo, type WorkspaceSandbox } from "./workspace-git.js";
import { pullRemote, pushRemote, type RemoteUpdate } from "./remote.js";
import { callGitHub, type GitHubClient } from "./github.js";

export interface PullRequestRequest {
  title: string;
  body: string;
  base: string;
  head: string;
  /** The run's workspace repository, holding `head`. */
  workspace: string;
}

export interface PullRequest {
  number: number;
  url: string;
  head: string;
  base: string;
  head_sha: string;
  /** False when an open pull request for the same head already existed (a repeated OPEN_PR). */
  created: boolean;
}

/** A pull request whose head is a branch of a supervisor-owned repository (a lane cycle's branch). */
export interface BranchPullRequest {
  title: string;
  body: string;
  base: string;
  head: string;
  /** The repository holding `head`: the local forge's own bare repository. */
  repo: string;
}

/** Where OPEN_PR pushes and opens pull requests: the local forge or GitHub. */
export interface Forge {
  readonly kind: "local" | "github";
  openPullRequest(request: PullRequestRequest): Promise<PullRequest>;
  /** Open (or update) the pull request of a branch the supervisor already holds: a cycle's. */
  openBranchPullRequest(request: BranchPullRequest): Promise<PullRequest>;
  /** Merge an open pull request into its base; the base's new commit. */
  mergePullRequest(number: number, message: string): Promise<{ sha: string }>;
}

/**
 * A bare repository, created when missing. Two OPEN_PRs (or two processes) may get here at once, so
 * the repository is made beside its place and renamed into it: the first rename wins, the loser's
 * copy is dropped.
 */
export async function ensureBareRepo(path: string): Promise<void> {
  if (existsSync(join(path, "HEAD"))) return;
  mkdirSync(dirname(path), { recursive: true });
  const staging = `${path}.init-${process.pid}-${randomUUID()}`;
  mkdirSync(staging);
  try {
    await git(["init", "--bare", "--quiet", staging], { cwd: staging });
    try {
      renameSync(staging, path);
    } catch (error) {
      if (!existsSync(join(path, "HEAD"))) throw error;
    }
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

/** Where the local forge keeps the commit a pull request's base was at when it was merged. */
export const mergedBaseRef = (number: number) => `refs/pmagent/pulls/${number}/merged-base`;

/** Where a workspace's branch is fetched to before it is checked against the branch it would update. */
const incomingRef = (head: string) => `refs/pmagent/incoming/${head}`;

/**
 * Copy `branch` of the sprite's workspace into a supervisor-owned bare repository, under a private
 * ref (whatever it held before is replaced), and return its commit. Fetching (rather than pushing
 * from the workspace) means no hook or config of the sprite's repository runs with the
 * supervisor's credentials; the workspace's repository is checked first and read alone
 * (workspace-git.ts): a `.git` that names another repository is refused.
 */
async function fetchIncoming(
  repo: string,
  request: PullRequestRequest,
  root: string,
  sandbox: WorkspaceSandbox | undefined,
): Promise<string> {
  const { workspace, head } = request;
  const ws = await WorkspaceRepo.open(workspace, { root, sandbox });
  if (!(await ws.branchSha(head))) {
    throw new UsageError(
      "branch_not_found",
      `OPEN_PR: branch "${head}" does not exist in the run's workspace ${workspace}: commit to it before requesting the pull request`,
    );
  }
  const ref = incomingRef(head);
  await git(["fetch", "--quiet", "--no-tags", "--force", ...ws.fetchSource(), `+refs/heads/${head}:${ref}`], {
    cwd: repo,
    timeoutMs: 600_000,
  });
  return git(["rev-parse", "--verify", `${ref}^{commit}`], { cwd: repo });
}

/** Whether `ancestor` is `sha` or one of its ancestors in `repo` (false when `repo` lacks it). */
async function descends(repo: string, sha: string, ancestor: string): Promise<boolean> {
  try {
    await git(["cat-file", "-e", `${ancestor}^{commit}`], { cwd: repo });
  } catch {
    return false;
  }
  try {
    await git(["merge-base", "--is-ancestor", ancestor, sha], { cwd: repo });
    return true;
  } catch {
    return false;
  }
}

const short = (sha: string) => (/^[0-9a-f]{40,64}$/.test(sha) ? sha.slice(0, 12) : sha);

/** The refusal of an OPEN_PR whose branch would lose commits the branch already has. */
function diverged(head: string, where: string, current: string, incoming: string, pr: number | null): ConflictError {
  const of = pr !== null ? ` (the head of pull request #${pr})` : "";
  return new ConflictError(
    "branch_diverged",
    `OPEN_PR: branch "${head}" in ${where} is at ${short(current)}${of}, and the workspace's "${head}" at ${short(incoming)} does not descend from it (its history was rewritten, or the branch was started elsewhere): nothing was pushed. Commit on top of ${short(current)} to update the pull request, or open it from a new branch`,
    { head, current, incoming, ...(pr !== null ? { pull_request: pr } : {}) },
  );
}

/**
 * The forge's branch moved to `sha`: created, or fast-forwarded when `sha` descends from it (a
 * pull request's head updated with new commits); refused with the reason when it does not.
 */
async function updateBranch(
  repo: string,
  head: string,
  sha: string,
  where: string,
  pr: () => Promise<number | null>,
): Promise<void> {
  const current = await branchSha(repo, head);
  if (current === sha) return;
  if (current && !(await descends(repo, sha, current))) throw diverged(head, where, current, sha, await pr());
  // Compare-and-swap: another OPEN_PR that moved the branch meanwhile makes this one fail (and retry).
  await git(["update-ref", `refs/heads/${head}`, sha, current ?? ""], { cwd: repo });
}

/** Branch names are checked by git outside the workspace (in the project root): nothing of the sprite's repository is read for it. */
async function validate(request: PullRequestRequest, root: string): Promise<void> {
  if (!request.title.trim())
    throw new UsageError("invalid_parameters", "OPEN_PR: parameters.title must be a non-empty string");
  await assertBranchName(request.head, "OPEN_PR: parameters.head", root);
  await assertBranchName(request.base, "OPEN_PR: parameters.base", root);
  if (request.head === request.base)
    throw new UsageError(
      "invalid_parameters",
      `OPEN_PR: head and base are both "${request.head}": a pull request needs two different branches`,
    );
}

export interface LocalPullRequest {
  number: number;
  head: string;
  base: string;
  title: string;
  body: string;
  head_sha: string;
  state: "open" | "closed" | "merged";
  created_at: string;
  url: string;
}

interface PullRow {
  number: number | string;
  head: string;
  base: string;
  title: string;
  body: string;
  head_sha: string;
  state: LocalPullRequest["state"];
  created_at: string;
}

export interface LocalForgeOptions {
  store: Store;
  projectId: string;
  /** Project root: the repository base branches are seeded from. */
  root: string;
  /** Config `forge.bare_repo`, relative to root. */
  bareRepo: string;
  /** The git that reads a sprite's workspace runs in a sandbox like the sprite's (see workspace-git.ts). */
  sandbox?: WorkspaceSandbox;
  clock?: () => number;
  /** Config `forge.remote`: the forge every machine reaches; `bareRepo` is then this machine's mirror of it (remote.ts). */
  remote?: string;
}

/**
 * The forge of a project without GitHub: branches go to a bare repository, pull requests into the
 * store (`pmagent prs`), so the whole OPEN_PR flow works offline.
 */
/** Pull requests by number. */
export const PULL_KEYS = new Keyset("prs", [{ sql: "number", type: "number" }], "oldest");

export class LocalForge implements Forge {
  readonly kind = "local" as const;
  readonly bareRepo: string;

  constructor(private readonly options: LocalForgeOptions) {
    this.bareRepo = confinePath(options.root, options.bareRepo, "forge.bare_repo");
  }

  url(number: number): string {
    return `pmagent-forge://${this.options.projectId}/pulls/${number}`;
  }

  /** The remote forge this one mirrors, if any. */
  get remote(): string | undefined {
    return this.options.remote;
  }

  /** With a remote: the mirror brought up to date with it (before it is read). */
  async sync(): Promise<void> {
    await ensureBareRepo(this.bareRepo);
    if (this.options.remote) await pullRemote(this.bareRepo, this.options.remote);
  }

  async openPullRequest(request: PullRequestRequest): Promise<PullRequest> {
    await validate(request, this.options.root);
    await this.sync();
    await this.seedBase(request.base);
    const sha = await fetchIncoming(this.bareRepo, request, this.options.root, this.options.sandbox);
    const before = await branchSha(this.bareRepo, request.head);
    await updateBranch(
      this.bareRepo,
      request.head,
      sha,
      `the forge ${this.bareRepo}`,
      async () => (await this.openFor(request.head))?.number ?? null,
    );
    await this.publish([{ ref: `refs/heads/${request.head}`, sha, expect: before ?? null }]);
    return this.record(request, sha);
  }

  /** With a remote: what was moved in the mirror, pushed (each ref leased on what was read). */
  private async publish(updates: RemoteUpdate[]): Promise<void> {
    const moved = updates.filter((u) => u.sha !== u.expect);
    if (this.options.remote && moved.length > 0) await pushRemote(this.bareRepo, this.options.remote, moved);
  }

  async openBranchPullRequest(request: BranchPullRequest): Promise<PullRequest> {
    await this.sync();
    await this.seedBase(request.base);
    // The branch is already here (the cycle's hand-on moved it): the pull request records its head.
    const sha = await branchSha(request.repo, request.head);
    if (!sha) throw new UsageError("branch_not_found", `branch "${request.head}" does not exist in ${request.repo}`);
    if (request.repo !== this.bareRepo)
      await git(
        ["fetch", "--quiet", "--no-tags", request.repo, `+refs/heads/${request.head}:refs/heads/${request.head}`],
        { cwd: this.bareRepo },
      );
    return this.record(request, sha);
  }

  async mergePullRequest(number: number, message: string): Promise<{ sha: string }> {
    await this.sync();
    const row = await this.options.store.get<PullRow>(
      "SELECT * FROM lattice_forge_pulls WHERE project_id = ? AND number = ?",
      [this.options.projectId, number],
    );
    if (!row)
      throw new NotFoundError(
        "pull_request_not_found",
        `pull request #${number} does not exist in the local forge (see \`pmagent prs\`)`,
      );
    if (row.state !== "open")
      throw new ConflictError(
        "pull_request_not_open",
        `pull request #${number} is ${row.state}: only an open one can be merged`,
      );
    const base = await branchSha(this.bareRepo, row.base);
    const head = await branchSha(this.bareRepo, row.head);
    if (!base || !head)
      throw new NotFoundError(
        "branch_not_found",
        `pull request #${number}: branch ${!base ? row.base : row.head} is not in the forge ${this.bareRepo}`,
      );
    let sha = head;
    if (!(await descends(this.bareRepo, head, base))) {
      const merged = await mergeCommits(this.bareRepo, base, head, message);
      if ("conflicts" in merged) {
        const files = merged.conflicts;
        throw new ConflictError(
          "merge_conflict",
          `pull request #${number} (${row.head}) conflicts with ${row.base}${files.length ? ` in ${files.slice(0, 20).join(", ")}` : ""}: nothing was merged`,
          { files },
        );
      }
      sha = merged.sha;
    }
    // The base it was merged into, kept: a merged pull request's diff is against it (a fast-forward leaves base = head).
    await git(["update-ref", mergedBaseRef(number), base], { cwd: this.bareRepo });
    // Compare-and-swap on the base, then the record: a merge that lost the race changes nothing.
    await git(["update-ref", `refs/heads/${row.base}`, sha, base], { cwd: this.bareRepo });
    await this.publish([
      { ref: `refs/heads/${row.base}`, sha, expect: base },
      { ref: mergedBaseRef(number), sha: base, expect: null },
    ]);
    await this.options.store.run(
      "UPDATE lattice_forge_pulls SET state = 'merged', head_sha = ? WHERE project_id = ? AND number = ? AND state = 'open'",
      [head, this.options.projectId, number],
    );
    return { sha };
  }

  /** One pull request by number. */
  async get(number: number): Promise<LocalPullRequest> {
    const row = await this.options.store.get<PullRow>(
      "SELECT * FROM lattice_forge_pulls WHERE project_id = ? AND number = ?",
      [this.options.projectId, number],
    );
    if (!row)
      throw new NotFoundError(
        "pull_request_not_found",
        `pull request #${number} does not exist in the local forge (see \`pmagent prs\`)`,
        { number },
      );
    return { ...row, number: Number(row.number), url: this.url(Number(row.number)) };
  }

  /** Close an open pull request without merging it (its branch stays in the forge). */
  async closePullRequest(number: number): Promise<LocalPullRequest> {
    const pull = await this.get(number);
    if (pull.state !== "open")
      throw new ConflictError(
        "pull_request_not_open",
        `pull request #${number} is ${pull.state}: only an open one can be closed`,
        { number, state: pull.state },
      );
    const r = await this.options.store.run(
      "UPDATE lattice_forge_pulls SET state = 'closed' WHERE project_id = ? AND number = ? AND state = 'open'",
      [this.options.projectId, number],
    );
    // Merged or closed meanwhile: say what it is now.
    if (r.changes !== 1) return this.closePullRequest(number);
    return this.get(number);
  }

  /** A new forge has no base yet: seed it from the project's own repository, never the sprite's. */
  private async seedBase(base: string): Promise<void> {
    if (await branchSha(this.bareRepo, base)) return;
    if (!(await branchSha(this.options.root, base))) {
      throw new UsageError(
        "base_not_found",
        `OPEN_PR: base branch "${base}" exists neither in the forge ${this.bareRepo} nor in the project repository ${this.options.root}`,
      );
    }
    await git(["fetch", "--quiet", "--no-tags", this.options.root, `refs/heads/${base}:refs/heads/${base}`], {
      cwd: this.bareRepo,
    });
  }

  private async openFor(head: string): Promise<{ number: number } | undefined> {
    const row = await this.options.store.get<{ number: number | string }>(
      "SELECT number FROM lattice_forge_pulls WHERE project_id = ? AND head = ? AND state = 'open'",
      [this.options.projectId, head],
    );
    return row ? { number: Number(row.number) } : undefined;
  }

  private async record(request: Omit<PullRequestRequest, "workspace">, sha: string): Promise<PullRequest> {
    const ms = (this.options.clock ?? Date.now)();
    return this.options.store.transaction(async (tx) => {
      const existing = await tx.get<PullRow>(
        "SELECT * FROM lattice_forge_pulls WHERE project_id = ? AND head = ? AND state = 'open'",
        [this.options.projectId, request.head],
      );
      if (existing) {
        const number = Number(existing.number);
        await tx.run("UPDATE lattice_forge_pulls SET head_sha = ? WHERE project_id = ? AND number = ?", [
          sha,
          this.options.projectId,
          number,
        ]);
        return {
          number,
          url: this.url(number),
          head: existing.head,
          base: existing.base,
          head_sha: sha,
          created: false,
        };
      }
      if (tx.dialect === "postgres")
        await tx.get("SELECT pg_advisory_xact_lock(hashtext(?))", [`forge:${this.options.projectId}`]);
      const max = await tx.get<{ n: number | string | null }>(
        "SELECT MAX(number) AS n FROM lattice_forge_pulls WHERE project_id = ?",
        [this.options.projectId],
      );
      const number = Number(max?.n ?? 0) + 1;
      await tx.run(
        "INSERT INTO lattice_forge_pulls (project_id, number, head, base, title, body, head_sha, state, created_at, created_ms) VALUES (?, ?, ?, ?, ?, ?, ?, 'open', ?, ?)",
        [
          this.options.projectId,
          number,
          request.head,
          request.base,
          request.title,
          request.body,
          sha,
          new Date(ms).toISOString(),
          ms,
        ],
      );
      return { number, url: this.url(number), head: request.head, base: request.base, head_sha: sha, created: true };
    });
  }

  async list(filter: { state?: LocalPullRequest["state"] } = {}): Promise<LocalPullRequest[]> {
    const params: SqlParam[] = [this.options.projectId];
    let sql = "SELECT * FROM lattice_forge_pulls WHERE project_id = ?";
    if (filter.state) {
      sql += " AND state = ?";
      params.push(filter.state);
    }
    const rows = await this.options.store.all<PullRow>(`${sql} ORDER BY number`, params);
    return rows.map((r) => ({ ...r, number: Number(r.number), url: this.url(Number(r.number)) }));
  }

  /** One page of the pull requests by number (oldest first by default), by cursor. */
  async page(
    filter: { state?: LocalPullRequest["state"] } = {},
    request: PageRequest = {},
  ): Promise<Page<LocalPullRequest>> {
    const where = new Where("project_id = ?", this.options.projectId).when("state = ?", filter.state);
    const plan = PULL_KEYS.plan(where, request);
    const rows = await this.options.store.all<PullRow>(
      `SELECT * FROM lattice_forge_pulls WHERE ${where}${plan.sql}`,
      where.params,
    );
    return PULL_KEYS.page(
      rows,
      plan,
      (r) => [r.number],
      (r) => ({ ...r, number: Number(r.number), url: this.url(Number(r.number)) }),
    );
  }

  /** These pull requests, if they were opened by `untilMs` (by the project/number key). */
  async byNumbers(numbers: readonly number[], untilMs: number): Promise<LocalPullRequest[]> {
    const rows = await inChunks(numbers, (chunk) =>
      this.options.store.all<PullRow>(
        `SELECT * FROM lattice_forge_pulls WHERE project_id = ? AND number IN (${marks(chunk.length)}) AND created_ms <= ? ORDER BY number`,
        [this.options.projectId, ...chunk, untilMs],
      ),
    );
    return rows.map((r) => ({ ...r, number: Number(r.number), url: this.url(Number(r.number)) }));
  }
}

export interface GitHubForgeOptions {
  /** Made on first use, so a project without a token fails only when it opens a pull request. */
  client: () => GitHubClient;
  tokenEnv: string;
  /** The git URL branches are pushed to. */
  remoteUrl: string;
  /** Project root: the supervisor's staging repository lives under it. */
  root: string;
  /** The git that reads a sprite's workspace runs in a sandbox like the sprite's (see workspace-git.ts). */
  sandbox?: WorkspaceSandbox;
}

/** OPEN_PR on GitHub: the supervisor pushes with its own token, then opens the pull request via the REST API. */
export class GitHubForge implements Forge {
  readonly kind = "github" as const;
  private readonly staging: string;

  constructor(private readonly options: GitHubForgeOptions) {
    this.staging = join(options.root, ".pmagent", "push.git");
  }

  async openPullRequest(request: PullRequestRequest): Promise<PullRequest> {
    await validate(request, this.options.root);
    await ensureBareRepo(this.staging);
    const sha = await fetchIncoming(this.staging, request, this.options.root, this.options.sandbox);
    return this.publish(request, sha);
  }

  async openBranchPullRequest(request: BranchPullRequest): Promise<PullRequest> {
    await assertBranchName(request.head, "head", this.options.root);
    await ensureBareRepo(this.staging);
    // A repository of the supervisor's own: fetched as it is.
    await git(
      [
        "fetch",
        "--quiet",
        "--no-tags",
        "--force",
        request.repo,
        `+refs/heads/${request.head}:${incomingRef(request.head)}`,
      ],
      { cwd: this.staging, timeoutMs: 600_000 },
    );
    return this.publish(
      request,
      await git(["rev-parse", "--verify", `${incomingRef(request.head)}^{commit}`], { cwd: this.staging }),
    );
  }

  async mergePullRequest(number: number, message: string): Promise<{ sha: string }> {
    const { octokit, owner, repo } = this.options.client();
    const merged = await callGitHub(`merge pull request #${number} of ${owner}/${repo}`, this.options.tokenEnv, () =>
      octokit.rest.pulls.merge({ owner, repo, pull_number: number, commit_title: message.split("\n")[0] }),
    );
    return { sha: merged.data.sha };
  }

  /** Push `sha` to GitHub as `request.head` and open its pull request (or find the one it has). */
  private async publish(request: Omit<PullRequestRequest, "workspace">, sha: string): Promise<PullRequest> {
    // The staging repository only mirrors what is pushed: GitHub's branch is the one that counts.
    await git(["update-ref", `refs/heads/${request.head}`, sha], { cwd: this.staging });
    const { octokit, owner, repo, token } = this.options.client();
    const tokenEnv = this.options.tokenEnv;
    const find = async () => {
      const open = await callGitHub(`list pull requests of ${owner}/${repo}`, tokenEnv, () =>
        octokit.rest.pulls.list({ owner, repo, head: `${owner}:${request.head}`, state: "open", per_page: 10 }),
      );
      return open.data[0];
    };
    // The token travels in git's environment (GIT_CONFIG_*), never on a command line or in a URL.
    // Not forced: GitHub takes the branch only when it descends from the one it has (a pull
    // request's head updated with new commits), and refuses it otherwise.
    const auth = Buffer.from(`x-access-token:${token}`).toString("base64");
    try {
      await git(["push", "--quiet", this.options.remoteUrl, `refs/heads/${request.head}:refs/heads/${request.head}`], {
        cwd: this.staging,
        env: {
          GIT_CONFIG_COUNT: "1",
          GIT_CONFIG_KEY_0: "http.extraHeader",
          GIT_CONFIG_VALUE_0: `Authorization: Basic ${auth}`,
        },
      });
    } catch (err) {
      if (!/\[rejected\]|non-fast-forward|fetch first/.test((err as Error).message)) throw err;
      const remote = await lsRemoteBranch(this.staging, this.options.remoteUrl, request.head, auth);
      throw diverged(
        request.head,
        `${owner}/${repo}`,
        remote ?? "an unknown commit",
        sha,
        (await find().catch(() => undefined))?.number ?? null,
      );
    }
    // A repeated OPEN_PR (after a crash or a retry) finds the pull request it opened before.
    const existing = await find();
    if (existing)
      return {
        number: existing.number,
        url: existing.html_url,
        head: request.head,
        base: existing.base.ref,
        head_sha: sha,
        created: false,
      };
    try {
      const created = await callGitHub(`open a pull request on ${owner}/${repo}`, tokenEnv, () =>
        octokit.rest.pulls.create({
          owner,
          repo,
          title: request.title,
          body: request.body,
          head: request.head,
          base: request.base,
        }),
      );
      return {
        number: created.data.number,
        url: created.data.html_url,
        head: request.head,
        base: request.base,
        head_sha: sha,
        created: true,
      };
    } catch (err) {
      const raced = await find();
      if (raced)
        return {
          number: raced.number,
          url: raced.html_url,
          head: request.head,
          base: raced.base.ref,
          head_sha: sha,
          created: false,
        };
      throw err;
    }
  }
}

/** The commit a remote's branch is at (undefined when it cannot be read). */
async function lsRemoteBranch(
  cwd: string,
  remoteUrl: string,
  branch: string,
  auth: string,
): Promise<string | undefined> {
  try {
    const out = await git(["ls-remote", remoteUrl, `refs/heads/${branch}`], {
      cwd,
      env: {
        GIT_CONFIG_COUNT: "1",
        GIT_CONFIG_KEY_0: "http.extraHeader",
        GIT_CONFIG_VALUE_0: `Authorization: Basic ${auth}`,
      },
    });
    return out.split(/\s/)[0] || undefined;
  } catch {
    return undefined;
  }
}
