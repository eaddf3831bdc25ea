/**
 * A local GitHub REST API for tests: node:http on 127.0.0.1 (port 0), answering the endpoints
 * pmagent uses the way docs.github.com documents them — JSON shapes, `per_page`/`page` with
 * RFC 5988 `Link` headers, 401 "Bad credentials", 404 "Not Found", 422 "Validation Failed",
 * primary (403 + x-ratelimit-*) and secondary (403 or 429, with or without retry-after) rate limits,
 * 502 Bad Gateway on demand, and conditional requests (an `ETag` on every GET answer; a GET whose
 * `If-None-Match` matches is answered 304 Not Modified and, as GitHub documents, not counted
 * against the rate limit) — so that code under test runs through the real @octokit/rest client.
 *
 * Endpoints:
 *   GET    /repos/{o}/{r}/issues                       (state, since, labels, per_page, page)
 *   GET    /repos/{o}/{r}/issues/{n}
 *   GET    /repos/{o}/{r}/issues/{n}/comments          (since, per_page, page)
 *   POST   /repos/{o}/{r}/issues/{n}/comments          {body}
 *   GET    /repos/{o}/{r}/issues/comments/{id}
 *   PATCH  /repos/{o}/{r}/issues/comments/{id}         {body}
 *   DELETE /repos/{o}/{r}/issues/comments/{id}
 *   POST   /repos/{o}/{r}/issues/{n}/labels            {labels: [...]} or [...]
 *   GET    /repos/{o}/{r}/pulls                        (state, head, base, sort, direction, per_page, page)
 *   POST   /repos/{o}/{r}/pulls                        {title, head, base, body?, draft?}
 *   GET    /repos/{o}/{r}/actions/runs                 (branch, status, event, created, per_page, page)
 *   GET    /repos/{o}/{r}/actions/runs/{id}/artifacts  (name, per_page, page)
 *   GET    /repos/{o}/{r}/actions/artifacts/{id}/zip   302 to a short-lived URL serving the zip; 410 when expired
 */
import { createHash } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { zipSync } from "fflate";

export interface GitHubUser {
  login: string;
  id: number;
  node_id: string;
  type: "User" | "Bot";
  html_url: string;
}

export interface GitHubComment {
  id: number;
  node_id: string;
  url: string;
  html_url: string;
  issue_url: string;
  body: string;
  user: GitHubUser;
  created_at: string;
  updated_at: string;
  author_association: string;
}

export interface GitHubLabel {
  id: number;
  node_id: string;
  url: string;
  name: string;
  color: string;
  default: boolean;
  description: string | null;
}

export interface GitHubIssue {
  id: number;
  node_id: string;
  url: string;
  html_url: string;
  number: number;
  title: string;
  body: string | null;
  state: "open" | "closed";
  labels: GitHubLabel[];
  user: GitHubUser;
  comments: number;
  created_at: string;
  updated_at: string;
  closed_at: string | null;
  /** Present only on pull requests, as in GitHub's issues listing. */
  pull_request?: { url: string; html_url: string; merged_at: string | null };
}

export interface GitHubPull {
  id: number;
  node_id: string;
  url: string;
  html_url: string;
  number: number;
  title: string;
  body: string | null;
  state: "open" | "closed";
  draft: boolean;
  merged: boolean;
  merged_at: string | null;
  merge_commit_sha: string | null;
  user: GitHubUser;
  head: { ref: string; sha: string; label: string };
  base: { ref: string; sha: string; label: string };
  created_at: string;
  updated_at: string;
  closed_at: string | null;
}

export interface GitHubWorkflowRun {
  id: number;
  node_id: string;
  name: string;
  /** The workflow file, e.g. ".github/workflows/ci.yml". */
  path: string;
  html_url: string;
  head_branch: string;
  head_sha: string;
  event: string;
  status: "queued" | "in_progress" | "completed";
  conclusion: "success" | "failure" | "cancelled" | "skipped" | null;
  run_number: number;
  created_at: string;
  updated_at: string;
}

/** An artifact as GitHub's Actions artifacts API lists it. */
export interface GitHubArtifact {
  id: number;
  node_id: string;
  name: string;
  size_in_bytes: number;
  url: string;
  archive_download_url: string;
  expired: boolean;
  created_at: string;
  updated_at: string;
  expires_at: string;
  workflow_run: {
    id: number;
    repository_id: number;
    head_repository_id: number;
    head_branch: string;
    head_sha: string;
  };
}

export interface RecordedRequest {
  method: string;
  /** Path without the query string. */
  path: string;
  query: Record<string, string>;
  headers: Record<string, string | string[] | undefined>;
  /** Parsed JSON body, or undefined. */
  body: unknown;
  /** Status the fake answered with. */
  status: number;
}

export interface RateLimitScript {
  /** How many upcoming (authenticated) requests are refused. */
  requests: number;
  /** "primary": 403 with x-ratelimit-remaining 0 and x-ratelimit-reset; "secondary": 429 with retry-after. */
  kind: "primary" | "secondary";
  /** primary: seconds from now until x-ratelimit-reset (default 1). */
  resetInSeconds?: number;
  /** secondary: the retry-after value in seconds (default 1); null: no retry-after header (GitHub may omit it). */
  retryAfterSeconds?: number | null;
  /** secondary: the status, 403 or 429 (GitHub documents both; default 429). */
  status?: 403 | 429;
}

interface RepoState {
  owner: string;
  name: string;
  id: number;
  issues: Map<number, GitHubIssue>;
  pulls: Map<number, GitHubPull>;
  comments: Map<number, { issue: number; comment: GitHubComment }>;
  labels: Map<string, GitHubLabel>;
  runs: GitHubWorkflowRun[];
  artifacts: Array<{ artifact: GitHubArtifact; zip: Uint8Array }>;
  nextNumber: number;
}

export interface FakeGitHubOptions {
  /** Valid tokens and the login each authenticates as (default: {"test-token": "pmagent-bot"}). */
  tokens?: Record<string, string>;
  /** Clock for created_at/updated_at (default Date.now). */
  clock?: () => number;
  /** Base of html_url fields (never fetched). */
  htmlBase?: string;
}

const DOCS = "https://docs.github.com/rest";

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly body: Record<string, unknown>,
    readonly headers: Record<string, string> = {},
  ) {
    super(String(body.message));
  }
}

const notFound = () => new HttpError(404, { message: "Not Found", documentation_url: DOCS, status: "404" });

function validationFailed(resource: string, field: string, code = "missing_field", message?: string): HttpError {
  const error: Record<string, unknown> = { resource, code, field };
  if (message !== undefined) error.message = message;
  return new HttpError(422, { message: "Validation Failed", errors: [error], documentation_url: DOCS, status: "422" });
}

/**
 * The `created` filter of the workflow-runs listing, in GitHub's search date syntax:
 * `A..B`, `>=A`, `>A`, `<=A`, `<A`, or `A` (that day). Anything else is 422, as GitHub answers.
 */
function createdFilter(value: string | null): (at: string) => boolean {
  if (value === null) return () => true;
  const ms = (d: string) => {
    const t = Date.parse(d);
    if (Number.isNaN(t)) throw validationFailed("WorkflowRun", "created", "invalid");
    return t;
  };
  const range = /^(.+)\.\.(.+)$/.exec(value);
  if (range) {
    const [from, to] = [ms(range[1]!), ms(range[2]!)];
    return (at) => Date.parse(at) >= from && Date.parse(at) <= to;
  }
  const cmp = /^(>=|<=|>|<)(.+)$/.exec(value);
  if (cmp) {
    const t = ms(cmp[2]!);
    const op = cmp[1];
    return (at) =>
      op === ">="
        ? Date.parse(at) >= t
        : op === "<="
          ? Date.parse(at) <= t
          : op === ">"
            ? Date.parse(at) > t
            : Date.parse(at) < t;
  }
  const day = ms(value);
  return (at) => Date.parse(at) >= day && Date.parse(at) < day + 86_400_000;
}

/** GitHub timestamps: ISO 8601 UTC with second precision. */
function githubTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
}

function nodeId(prefix: string, id: number): string {
  return `${prefix}_${Buffer.from(`fake:${id}`).toString("base64url")}`;
}

export class FakeGitHub {
  /** Every request received, in order (including refused ones). */
  readonly requests: RecordedRequest[] = [];
  private readonly server: Server;
  private readonly tokens: Map<string, string>;
  private readonly clock: () => number;
  private readonly htmlBase: string;
  private readonly repos = new Map<string, RepoState>();
  private readonly users = new Map<string, GitHubUser>();
  private nextId = 1000;
  private rateLimit: Required<RateLimitScript> | undefined;
  private baseUrl = "";

  private constructor(options: FakeGitHubOptions) {
    this.tokens = new Map(Object.entries(options.tokens ?? { "test-token": "pmagent-bot" }));
    this.clock = options.clock ?? Date.now;
    this.htmlBase = options.htmlBase ?? "https://github.com";
    this.server = createServer((req, res) => void this.handle(req, res));
  }

  /** Start a server on 127.0.0.1 with an ephemeral port. */
  static async start(options: FakeGitHubOptions = {}): Promise<FakeGitHub> {
    const fake = new FakeGitHub(options);
    await new Promise<void>((resolve, reject) => {
      fake.server.once("error", reject);
      fake.server.listen(0, "127.0.0.1", () => resolve());
    });
    fake.baseUrl = `http://127.0.0.1:${(fake.server.address() as AddressInfo).port}`;
    return fake;
  }

  /** The API base URL to give Octokit (`baseUrl`) or pmagent (`github.api_url`). */
  get url(): string {
    return this.baseUrl;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  // ---- scripting -------------------------------------------------------------------------

  /** Create a repository (idempotent); `fullName` is "owner/name". */
  addRepo(fullName: string): void {
    const [owner, name] = fullName.split("/");
    if (!owner || !name) throw new Error(`addRepo: "${fullName}" is not owner/name`);
    if (!this.repos.has(fullName.toLowerCase())) {
      this.repos.set(fullName.toLowerCase(), {
        owner,
        name,
        id: this.id(),
        issues: new Map(),
        pulls: new Map(),
        comments: new Map(),
        labels: new Map(),
        runs: [],
        artifacts: [],
        nextNumber: 1,
      });
    }
  }

  addIssue(
    fullName: string,
    fields: { title?: string; body?: string; state?: "open" | "closed"; labels?: string[]; login?: string } = {},
  ): GitHubIssue {
    const repo = this.repoOrThrow(fullName);
    const number = repo.nextNumber++;
    const id = this.id();
    const now = githubTime(this.clock());
    const issue: GitHubIssue = {
      id,
      node_id: nodeId("I", id),
      url: `${this.baseUrl}/repos/${repo.owner}/${repo.name}/issues/${number}`,
      html_url: `${this.htmlBase}/${repo.owner}/${repo.name}/issues/${number}`,
      number,
      title: fields.title ?? `Issue ${number}`,
      body: fields.body ?? null,
      state: fields.state ?? "open",
      labels: (fields.labels ?? []).map((l) => this.label(repo, l)),
      user: this.user(fields.login ?? "octocat"),
      comments: 0,
      created_at: now,
      updated_at: now,
      closed_at: fields.state === "closed" ? now : null,
    };
    repo.issues.set(number, issue);
    return structuredClone(issue);
  }

  /** Add a comment as if `login` wrote it on GitHub. */
  addComment(fullName: string, issueNumber: number, body: string, login = "octocat"): GitHubComment {
    const repo = this.repoOrThrow(fullName);
    const issue = repo.issues.get(issueNumber);
    if (!issue) throw new Error(`addComment: ${fullName} has no issue #${issueNumber}`);
    return structuredClone(this.createComment(repo, issue, body, login));
  }

  /** Edit a comment as if someone did it on GitHub (updated_at moves). */
  editComment(commentId: number, body: string): GitHubComment {
    const found = this.findComment(commentId);
    if (!found) throw new Error(`editComment: no comment ${commentId}`);
    found.comment.body = body;
    found.comment.updated_at = githubTime(this.clock());
    return structuredClone(found.comment);
  }

  deleteComment(commentId: number): void {
    for (const repo of this.repos.values()) {
      const found = repo.comments.get(commentId);
      if (found) {
        repo.comments.delete(commentId);
        repo.issues.get(found.issue)!.comments -= 1;
        return;
      }
    }
    throw new Error(`deleteComment: no comment ${commentId}`);
  }

  /** Comments of an issue, oldest first. */
  comments(fullName: string, issueNumber: number): GitHubComment[] {
    const repo = this.repoOrThrow(fullName);
    return [...repo.comments.values()].filter((c) => c.issue === issueNumber).map((c) => structuredClone(c.comment));
  }

  comment(commentId: number): GitHubComment | undefined {
    const found = this.findComment(commentId);
    return found ? structuredClone(found.comment) : undefined;
  }

  issue(fullName: string, number: number): GitHubIssue | undefined {
    const issue = this.repoOrThrow(fullName).issues.get(number);
    return issue ? structuredClone(issue) : undefined;
  }

  pulls(fullName: string): GitHubPull[] {
    return [...this.repoOrThrow(fullName).pulls.values()].map((p) => structuredClone(p));
  }

  /** Merge an open pull request (sets merged, merged_at, merge_commit_sha, closes it). */
  mergePull(fullName: string, number: number, mergeCommitSha = "0".repeat(40)): GitHubPull {
    const repo = this.repoOrThrow(fullName);
    const pull = repo.pulls.get(number);
    if (!pull) throw new Error(`mergePull: ${fullName} has no pull request #${number}`);
    const now = githubTime(this.clock());
    Object.assign(pull, {
      state: "closed",
      merged: true,
      merged_at: now,
      merge_commit_sha: mergeCommitSha,
      closed_at: now,
      updated_at: now,
    });
    const issue = repo.issues.get(number)!;
    Object.assign(issue, {
      state: "closed",
      closed_at: now,
      updated_at: now,
      pull_request: { ...issue.pull_request!, merged_at: now },
    });
    return structuredClone(pull);
  }

  addWorkflowRun(
    fullName: string,
    fields: Partial<Omit<GitHubWorkflowRun, "id" | "node_id" | "html_url">> = {},
  ): GitHubWorkflowRun {
    const repo = this.repoOrThrow(fullName);
    const id = this.id();
    const now = githubTime(this.clock());
    const run: GitHubWorkflowRun = {
      id,
      node_id: nodeId("WFR", id),
      name: fields.name ?? "CI",
      path: fields.path ?? `.github/workflows/${(fields.name ?? "CI").toLowerCase().replace(/[^a-z0-9_-]+/g, "-")}.yml`,
      html_url: `${this.htmlBase}/${repo.owner}/${repo.name}/actions/runs/${id}`,
      head_branch: fields.head_branch ?? "main",
      head_sha: fields.head_sha ?? "0".repeat(40),
      event: fields.event ?? "push",
      status: fields.status ?? "completed",
      conclusion: fields.conclusion === undefined ? "success" : fields.conclusion,
      run_number: fields.run_number ?? repo.runs.length + 1,
      created_at: fields.created_at ?? now,
      updated_at: fields.updated_at ?? now,
    };
    repo.runs.push(run);
    return structuredClone(run);
  }

  /**
   * Upload an artifact to a workflow run (as actions/upload-artifact does): `files` by their path
   * inside the zip. `expired` makes it one past its retention period.
   */
  addArtifact(
    fullName: string,
    runId: number,
    name: string,
    files: Record<string, string | Uint8Array>,
    options: { expired?: boolean } = {},
  ): GitHubArtifact {
    const repo = this.repoOrThrow(fullName);
    const run = repo.runs.find((r) => r.id === runId);
    if (!run) throw new Error(`addArtifact: ${fullName} has no workflow run ${runId}`);
    const zip = zipSync(
      Object.fromEntries(
        Object.entries(files).map(([path, data]) => [
          path,
          typeof data === "string" ? new TextEncoder().encode(data) : data,
        ]),
      ),
    );
    const id = this.id();
    const now = this.clock();
    const api = `${this.baseUrl}/repos/${repo.owner}/${repo.name}/actions/artifacts/${id}`;
    const artifact: GitHubArtifact = {
      id,
      node_id: nodeId("MDg6QXJ0aWZhY3Q", id),
      name,
      size_in_bytes: zip.length,
      url: api,
      archive_download_url: `${api}/zip`,
      expired: options.expired ?? false,
      created_at: githubTime(now),
      updated_at: githubTime(now),
      expires_at: githubTime(now + (options.expired ? -1 : 90) * 86_400_000),
      workflow_run: {
        id: run.id,
        repository_id: repo.id,
        head_repository_id: repo.id,
        head_branch: run.head_branch,
        head_sha: run.head_sha,
      },
    };
    repo.artifacts.push({ artifact, zip });
    return structuredClone(artifact);
  }

  /** Zips served at the short-lived URLs the download endpoint redirects to, by path. */
  private blobs = new Map<string, Uint8Array>();

  /** Refuse the next `requests` authenticated requests with a rate-limit answer. */
  rateLimitNext(script: RateLimitScript): void {
    this.rateLimit = { resetInSeconds: 1, retryAfterSeconds: 1, status: 429, ...script };
  }

  /** Answer the next `requests` authenticated requests with a server error (a 502 Bad Gateway by default). */
  failNext(requests: number, status = 502): void {
    this.serverErrors = { requests, status };
  }

  /**
   * Hold the answer to the next request until `release()` (to overlap two clients in a test);
   * `reached` resolves when that request has arrived.
   */
  holdNext(): { reached: Promise<void>; release: () => void } {
    let arrived!: () => void;
    let release!: () => void;
    const reached = new Promise<void>((resolve) => (arrived = resolve));
    const released = new Promise<void>((resolve) => (release = resolve));
    this.hold = { arrived, released };
    return { reached, release };
  }

  private hold: { arrived: () => void; released: Promise<void> } | undefined;

  /** Requests counted against the rate limit: every authenticated answer but a 304 Not Modified. */
  charged = 0;
  private serverErrors: { requests: number; status: number } | undefined;

  // ---- HTTP ------------------------------------------------------------------------------

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", this.baseUrl);
    const query = Object.fromEntries(url.searchParams);
    const raw = await readBody(req);
    let body: unknown;
    const record: RecordedRequest = {
      method: req.method ?? "GET",
      path: url.pathname,
      query,
      headers: { ...req.headers },
      body: undefined,
      status: 0,
    };
    this.requests.push(record);
    const hold = this.hold;
    this.hold = undefined;
    if (hold) {
      hold.arrived();
      await hold.released;
    }
    try {
      if (raw.length > 0) {
        try {
          body = JSON.parse(raw);
        } catch {
          throw new HttpError(400, { message: "Problems parsing JSON", documentation_url: DOCS, status: "400" });
        }
      }
      record.body = body;
      // The signed URL a download redirects to needs no token (it is the credential itself).
      const blob = req.method === "GET" ? this.blobs.get(url.pathname + url.search) : undefined;
      if (url.pathname.startsWith("/_blobs/")) {
        record.status = blob ? 200 : 403;
        if (!blob) {
          res.writeHead(403, { "content-type": "application/xml" });
          res.end("<Error><Code>AuthenticationFailed</Code></Error>");
          return;
        }
        res.writeHead(200, { "content-type": "application/zip", "content-length": blob.length });
        res.end(Buffer.from(blob));
        return;
      }
      const login = this.authenticate(req.headers.authorization);
      this.checkRateLimit();
      this.checkServerError();
      const { status, json, headers } = this.route(record.method, url, body, login);
      if (record.method === "GET" && status === 200) {
        const etag = `W/"${createHash("sha1").update(JSON.stringify(json)).digest("hex")}"`;
        if (req.headers["if-none-match"] === etag) {
          record.status = 304;
          this.send(res, 304, undefined, { ...this.rateHeaders(), etag });
          return;
        }
        record.status = status;
        this.charged++;
        this.send(res, status, json, { ...this.rateHeaders(), ...headers, etag });
        return;
      }
      record.status = status;
      this.charged++;
      this.send(res, status, json, { ...this.rateHeaders(), ...headers });
    } catch (err) {
      // A bug in the fake answers 500 (as GitHub would) instead of leaving the client hanging.
      const answer =
        err instanceof HttpError
          ? err
          : new HttpError(500, { message: `fake GitHub failed: ${(err as Error).message}`, status: "500" });
      record.status = answer.status;
      this.send(res, answer.status, answer.body, answer.headers);
    }
  }

  private send(res: ServerResponse, status: number, json: unknown, headers: Record<string, string>): void {
    const text = json === undefined ? "" : JSON.stringify(json);
    res.writeHead(status, {
      ...(json === undefined ? {} : { "content-type": "application/json; charset=utf-8" }),
      "content-length": Buffer.byteLength(text),
      "x-github-media-type": "github.v3; format=json",
      "x-github-request-id": `FAKE:${this.requests.length}`,
      ...headers,
    });
    res.end(text);
  }

  private authenticate(header: string | undefined): string {
    const match = /^(?:token|bearer)\s+(\S+)$/i.exec(header ?? "");
    const login = match ? this.tokens.get(match[1]!) : undefined;
    if (login === undefined)
      throw new HttpError(401, { message: "Bad credentials", documentation_url: DOCS, status: "401" });
    return login;
  }

  private checkServerError(): void {
    const script = this.serverErrors;
    if (!script || script.requests <= 0) return;
    script.requests -= 1;
    if (script.requests === 0) this.serverErrors = undefined;
    throw new HttpError(script.status, { message: "Server Error" });
  }

  private checkRateLimit(): void {
    const script = this.rateLimit;
    if (!script || script.requests <= 0) return;
    script.requests -= 1;
    if (script.requests === 0) this.rateLimit = undefined;
    if (script.kind === "primary") {
      const reset = Math.floor(this.clock() / 1000) + script.resetInSeconds;
      throw new HttpError(
        403,
        {
          message:
            "API rate limit exceeded for user ID 1. If you reach out to GitHub Support for help, please include the request ID.",
          documentation_url: `${DOCS}/overview/rate-limits-for-the-rest-api`,
          status: "403",
        },
        {
          "x-ratelimit-limit": "5000",
          "x-ratelimit-remaining": "0",
          "x-ratelimit-used": "5000",
          "x-ratelimit-reset": String(reset),
          "x-ratelimit-resource": "core",
        },
      );
    }
    throw new HttpError(
      script.status,
      {
        message: "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.",
        documentation_url: `${DOCS}/overview/rate-limits-for-the-rest-api`,
        status: String(script.status),
      },
      script.retryAfterSeconds === null ? {} : { "retry-after": String(script.retryAfterSeconds) },
    );
  }

  private rateHeaders(): Record<string, string> {
    return {
      "x-ratelimit-limit": "5000",
      "x-ratelimit-remaining": String(5000 - this.charged),
      "x-ratelimit-used": String(this.charged),
      "x-ratelimit-reset": String(Math.floor(this.clock() / 1000) + 3600),
      "x-ratelimit-resource": "core",
    };
  }

  private route(
    method: string,
    url: URL,
    body: unknown,
    login: string,
  ): { status: number; json: unknown; headers?: Record<string, string> } {
    const parts = url.pathname.split("/").filter(Boolean).map(decodeURIComponent);
    if (parts[0] !== "repos" || parts.length < 4) throw notFound();
    const repo = this.repos.get(`${parts[1]}/${parts[2]}`.toLowerCase());
    if (!repo) throw notFound();
    const rest = parts.slice(3);
    const key = `${method} ${rest.map((p) => (/^\d+$/.test(p) ? ":n" : p)).join("/")}`;
    const num = (i: number) => Number(rest[i]);
    switch (key) {
      case "GET issues":
        return this.page(url, this.listIssues(repo, url.searchParams));
      case "GET issues/:n":
        return { status: 200, json: this.issueOrThrow(repo, num(1)) };
      case "GET issues/:n/comments":
        return this.page(url, this.listComments(repo, num(1), url.searchParams));
      case "POST issues/:n/comments": {
        const issue = this.issueOrThrow(repo, num(1));
        const text = commentBody(body);
        return { status: 201, json: this.createComment(repo, issue, text, login) };
      }
      case "GET issues/comments/:n":
        return { status: 200, json: this.commentOrThrow(repo, num(2)).comment };
      case "PATCH issues/comments/:n": {
        const found = this.commentOrThrow(repo, num(2));
        const text = commentBody(body);
        found.comment.body = text;
        found.comment.updated_at = githubTime(this.clock());
        return { status: 200, json: found.comment };
      }
      case "DELETE issues/comments/:n": {
        const found = this.commentOrThrow(repo, num(2));
        repo.comments.delete(found.comment.id);
        repo.issues.get(found.issue)!.comments -= 1;
        return { status: 204, json: undefined };
      }
      case "POST issues/:n/labels": {
        const issue = this.issueOrThrow(repo, num(1));
        const names = Array.isArray(body) ? body : field(body, "labels");
        if (!Array.isArray(names) || names.some((n) => typeof n !== "string" || n.length === 0))
          throw validationFailed("Label", "labels", "invalid");
        for (const name of names as string[]) {
          if (!issue.labels.some((l) => l.name.toLowerCase() === name.toLowerCase()))
            issue.labels.push(this.label(repo, name));
        }
        issue.updated_at = githubTime(this.clock());
        return { status: 200, json: issue.labels };
      }
      case "GET pulls":
        return this.page(url, this.listPulls(repo, url.searchParams));
      case "POST pulls":
        return { status: 201, json: this.createPull(repo, body, login) };
      case "GET actions/runs": {
        const runs = this.listRuns(repo, url.searchParams);
        const { json, headers } = this.page(url, runs);
        return { status: 200, json: { total_count: runs.length, workflow_runs: json }, headers };
      }
      case "GET actions/runs/:n/artifacts": {
        if (!repo.runs.some((r) => r.id === num(2))) throw notFound();
        const name = url.searchParams.get("name");
        const artifacts = repo.artifacts
          .filter((a) => a.artifact.workflow_run.id === num(2) && (name === null || a.artifact.name === name))
          .map((a) => a.artifact);
        const { json, headers } = this.page(url, artifacts);
        return { status: 200, json: { total_count: artifacts.length, artifacts: json }, headers };
      }
      case "GET actions/artifacts/:n/zip": {
        const found = repo.artifacts.find((a) => a.artifact.id === num(2));
        if (!found) throw notFound();
        if (found.artifact.expired)
          throw new HttpError(410, { message: "Artifact has expired", documentation_url: DOCS, status: "410" });
        const path = `/_blobs/artifact-${found.artifact.id}.zip?sig=${createHash("sha1")
          .update(String(this.clock()) + found.artifact.id)
          .digest("hex")}`;
        this.blobs.set(path, found.zip);
        return { status: 302, json: undefined, headers: { location: `${this.baseUrl.replace(/\/$/, "")}${path}` } };
      }
      default:
        throw notFound();
    }
  }

  /** Slice `items` by per_page (default 30, max 100) and page, with GitHub's Link header. */
  private page<T>(url: URL, items: T[]): { status: number; json: T[]; headers: Record<string, string> } {
    const perPage = Math.min(100, Math.max(1, intParam(url.searchParams, "per_page", 30)));
    const page = Math.max(1, intParam(url.searchParams, "page", 1));
    const last = Math.max(1, Math.ceil(items.length / perPage));
    const link = (p: number, rel: string) => {
      const u = new URL(url.pathname, this.baseUrl);
      for (const [k, v] of url.searchParams) if (k !== "page") u.searchParams.set(k, v);
      u.searchParams.set("per_page", String(perPage));
      u.searchParams.set("page", String(p));
      return `<${u.toString()}>; rel="${rel}"`;
    };
    const links: string[] = [];
    if (page > 1) links.push(link(Math.min(page - 1, last), "prev"));
    if (page < last) links.push(link(page + 1, "next"), link(last, "last"));
    if (page > 1) links.push(link(1, "first"));
    const headers: Record<string, string> = links.length > 0 ? { link: links.join(", ") } : {};
    return { status: 200, json: items.slice((page - 1) * perPage, page * perPage), headers };
  }

  private listIssues(repo: RepoState, params: URLSearchParams): GitHubIssue[] {
    const state = params.get("state") ?? "open";
    if (!["open", "closed", "all"].includes(state)) throw validationFailed("Issue", "state", "invalid");
    const since = params.get("since");
    const sinceMs = since === null ? undefined : Date.parse(since);
    if (sinceMs !== undefined && Number.isNaN(sinceMs)) throw validationFailed("Issue", "since", "invalid");
    const labels =
      params
        .get("labels")
        ?.split(",")
        .filter(Boolean)
        .map((l) => l.toLowerCase()) ?? [];
    const direction = params.get("direction") ?? "desc";
    const out = [...repo.issues.values()].filter(
      (i) =>
        (state === "all" || i.state === state) &&
        (sinceMs === undefined || Date.parse(i.updated_at) >= sinceMs) &&
        labels.every((l) => i.labels.some((x) => x.name.toLowerCase() === l)),
    );
    const sortKey = params.get("sort") === "updated" ? "updated_at" : "created_at";
    out.sort((a, b) => a[sortKey].localeCompare(b[sortKey]) || a.number - b.number);
    return direction === "asc" ? out : out.reverse();
  }

  private listComments(repo: RepoState, issueNumber: number, params: URLSearchParams): GitHubComment[] {
    this.issueOrThrow(repo, issueNumber);
    const since = params.get("since");
    const sinceMs = since === null ? undefined : Date.parse(since);
    if (sinceMs !== undefined && Number.isNaN(sinceMs)) throw validationFailed("IssueComment", "since", "invalid");
    return [...repo.comments.values()]
      .filter((c) => c.issue === issueNumber && (sinceMs === undefined || Date.parse(c.comment.updated_at) >= sinceMs))
      .map((c) => c.comment);
  }

  private listPulls(repo: RepoState, params: URLSearchParams): GitHubPull[] {
    const state = params.get("state") ?? "open";
    if (!["open", "closed", "all"].includes(state)) throw validationFailed("PullRequest", "state", "invalid");
    const head = params.get("head");
    const base = params.get("base");
    const sort = params.get("sort") ?? "created";
    if (!["created", "updated", "popularity", "long-running"].includes(sort))
      throw validationFailed("PullRequest", "sort", "invalid");
    // GitHub: direction defaults to desc for sort=created (or none), asc otherwise.
    const direction = params.get("direction") ?? (sort === "created" ? "desc" : "asc");
    const key = sort === "updated" ? "updated_at" : "created_at";
    const out = [...repo.pulls.values()]
      .filter(
        (p) =>
          (state === "all" || p.state === state) &&
          (head === null || p.head.label === head) &&
          (base === null || p.base.ref === base),
      )
      .sort((a, b) => a[key].localeCompare(b[key]) || a.number - b.number);
    return direction === "asc" ? out : out.reverse();
  }

  private listRuns(repo: RepoState, params: URLSearchParams): GitHubWorkflowRun[] {
    const branch = params.get("branch");
    const status = params.get("status");
    const event = params.get("event");
    const created = createdFilter(params.get("created"));
    return repo.runs
      .filter(
        (r) =>
          (branch === null || r.head_branch === branch) &&
          (event === null || r.event === event) &&
          (status === null || r.status === status || r.conclusion === status) &&
          created(r.created_at),
      )
      .slice()
      .reverse();
  }

  private createComment(repo: RepoState, issue: GitHubIssue, body: string, login: string): GitHubComment {
    const id = this.id();
    const now = githubTime(this.clock());
    const comment: GitHubComment = {
      id,
      node_id: nodeId("IC", id),
      url: `${this.baseUrl}/repos/${repo.owner}/${repo.name}/issues/comments/${id}`,
      html_url: `${issue.html_url}#issuecomment-${id}`,
      issue_url: issue.url,
      body,
      user: this.user(login),
      created_at: now,
      updated_at: now,
      author_association: "OWNER",
    };
    repo.comments.set(id, { issue: issue.number, comment });
    issue.comments += 1;
    issue.updated_at = now;
    return comment;
  }

  private createPull(repo: RepoState, body: unknown, login: string): GitHubPull {
    for (const name of ["title", "head", "base"]) {
      const value = field(body, name);
      if (typeof value !== "string" || value.length === 0) throw validationFailed("PullRequest", name);
    }
    const title = field(body, "title") as string;
    const headRef = (field(body, "head") as string).replace(/^[^:]+:/, "");
    const baseRef = field(body, "base") as string;
    if (headRef === baseRef)
      throw validationFailed("PullRequest", "base", "invalid", `No commits between ${baseRef} and ${headRef}`);
    const headLabel = `${repo.owner}:${headRef}`;
    if ([...repo.pulls.values()].some((p) => p.state === "open" && p.head.label === headLabel)) {
      throw validationFailed("PullRequest", "head", "custom", `A pull request already exists for ${headLabel}.`);
    }
    const number = repo.nextNumber++;
    const id = this.id();
    const now = githubTime(this.clock());
    const text = field(body, "body");
    const pull: GitHubPull = {
      id,
      node_id: nodeId("PR", id),
      url: `${this.baseUrl}/repos/${repo.owner}/${repo.name}/pulls/${number}`,
      html_url: `${this.htmlBase}/${repo.owner}/${repo.name}/pull/${number}`,
      number,
      title,
      body: typeof text === "string" ? text : null,
      state: "open",
      draft: field(body, "draft") === true,
      merged: false,
      merged_at: null,
      merge_commit_sha: null,
      user: this.user(login),
      head: { ref: headRef, sha: "1".repeat(40), label: headLabel },
      base: { ref: baseRef, sha: "2".repeat(40), label: `${repo.owner}:${baseRef}` },
      created_at: now,
      updated_at: now,
      closed_at: null,
    };
    repo.pulls.set(number, pull);
    // Every pull request is also an issue (GET /issues lists it with a pull_request key).
    repo.issues.set(number, {
      id,
      node_id: nodeId("I", id),
      url: `${this.baseUrl}/repos/${repo.owner}/${repo.name}/issues/${number}`,
      html_url: pull.html_url,
      number,
      title,
      body: pull.body,
      state: "open",
      labels: [],
      user: pull.user,
      comments: 0,
      created_at: now,
      updated_at: now,
      closed_at: null,
      pull_request: { url: pull.url, html_url: pull.html_url, merged_at: null },
    });
    return pull;
  }

  // ---- helpers ---------------------------------------------------------------------------

  private id(): number {
    return ++this.nextId;
  }

  private user(login: string): GitHubUser {
    let user = this.users.get(login);
    if (!user) {
      const id = this.id();
      user = {
        login,
        id,
        node_id: nodeId("U", id),
        type: login.endsWith("[bot]") ? "Bot" : "User",
        html_url: `${this.htmlBase}/${login}`,
      };
      this.users.set(login, user);
    }
    return user;
  }

  private label(repo: RepoState, name: string): GitHubLabel {
    let label = repo.labels.get(name.toLowerCase());
    if (!label) {
      const id = this.id();
      label = {
        id,
        node_id: nodeId("LA", id),
        url: `${this.baseUrl}/repos/${repo.owner}/${repo.name}/labels/${encodeURIComponent(name)}`,
        name,
        color: "ededed",
        default: false,
        description: null,
      };
      repo.labels.set(name.toLowerCase(), label);
    }
    return label;
  }

  private repoOrThrow(fullName: string): RepoState {
    const repo = this.repos.get(fullName.toLowerCase());
    if (!repo) throw new Error(`fake GitHub has no repository ${fullName} (call addRepo first)`);
    return repo;
  }

  private issueOrThrow(repo: RepoState, number: number): GitHubIssue {
    const issue = repo.issues.get(number);
    if (!issue) throw notFound();
    return issue;
  }

  private commentOrThrow(repo: RepoState, id: number): { issue: number; comment: GitHubComment } {
    const found = repo.comments.get(id);
    if (!found) throw notFound();
    return found;
  }

  private findComment(id: number): { issue: number; comment: GitHubComment } | undefined {
    for (const repo of this.repos.values()) {
      const found = repo.comments.get(id);
      if (found) return found;
    }
    return undefined;
  }
}

function field(body: unknown, name: string): unknown {
  return body !== null && typeof body === "object" && !Array.isArray(body)
    ? (body as Record<string, unknown>)[name]
    : undefined;
}

/** GitHub's limit on a comment body is 65536 characters. */
export const MAX_COMMENT_LENGTH = 65_536;

function commentBody(body: unknown): string {
  const text = field(body, "body");
  if (typeof text !== "string") throw validationFailed("IssueComment", "body");
  if (text.length > MAX_COMMENT_LENGTH)
    throw validationFailed(
      "IssueComment",
      "body",
      "custom",
      `body is too long (maximum is ${MAX_COMMENT_LENGTH} characters)`,
    );
  return text;
}

function intParam(params: URLSearchParams, name: string, fallback: number): number {
  const value = params.get(name);
  if (value === null) return fallback;
  const n = Number(value);
  return Number.isInteger(n) ? n : fallback;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}
