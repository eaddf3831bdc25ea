import { createRequire } from "node:module";
import type { Octokit } from "@octokit/rest";
import { NotFoundError, PmagentError, RefusedError, UnavailableError, UsageError } from "../core/index.js";

type OctokitClass = typeof Octokit;

export interface GitHubSettings {
  /** OWNER/NAME. */
  repo: string;
  /** Environment variable holding the token (config `github.token_env`). */
  tokenEnv: string;
  apiUrl: string;
}

export interface GitHubClient {
  octokit: Octokit;
  owner: string;
  repo: string;
  /** The token, for the supervisor's own git push (never logged, never handed to a sprite). */
  token: string;
}

export function gitHubClient(settings: GitHubSettings, env: NodeJS.ProcessEnv = process.env): GitHubClient {
  const token = env[settings.tokenEnv];
  if (!token)
    throw new RefusedError(
      "github_token_missing",
      `no GitHub token: set the environment variable ${settings.tokenEnv} (config github.token_env) for the supervisor`,
    );
  const [owner, repo] = settings.repo.split("/") as [string, string];
  // No retry plugin: the action executor retries transient failures itself, with its own backoff.
  // Octokit is loaded with the first client, not with lattice (that every command's import of the
  // facade would pay for): require() of the ES module, synchronous as this function is.
  const { Octokit: OctokitRest } = createRequire(import.meta.url)("@octokit/rest") as { Octokit: OctokitClass };
  const octokit = new OctokitRest({
    auth: token,
    baseUrl: settings.apiUrl.replace(/\/$/, ""),
    userAgent: "pmagent",
    log: { debug() {}, info() {}, warn() {}, error() {} },
  });
  return { octokit, owner, repo, token };
}

/**
 * Map an Octokit failure to a typed error: rate limits, 5xx and network failures are transient
 * (unavailable, retried); bad credentials, missing resources and validation errors are not.
 */
export function gitHubError(err: unknown, what: string, tokenEnv: string): PmagentError {
  if (err instanceof PmagentError) return err;
  const e = err as {
    status?: number;
    message?: string;
    response?: { headers?: Record<string, string | undefined>; data?: unknown };
  };
  const status = typeof e.status === "number" ? e.status : undefined;
  const headers = e.response?.headers ?? {};
  const message = (e.message ?? String(err)).split("\n")[0]!.slice(0, 300);
  if (status === undefined || status >= 500)
    return new UnavailableError("github_unavailable", `GitHub failed to ${what}: ${message}`);
  if (
    status === 429 ||
    (status === 403 && (headers["x-ratelimit-remaining"] === "0" || headers["retry-after"] !== undefined))
  ) {
    return new UnavailableError(
      "github_rate_limited",
      `GitHub rate limit reached while trying to ${what}; retrying later`,
    );
  }
  if (status === 401)
    return new RefusedError(
      "github_unauthorized",
      `GitHub refused the token in ${tokenEnv} (401 Bad credentials) while trying to ${what}: check or renew it`,
    );
  if (status === 403)
    return new RefusedError(
      "github_forbidden",
      `GitHub forbade the supervisor to ${what} (403): the token in ${tokenEnv} lacks the permission`,
    );
  if (status === 404)
    return new NotFoundError(
      "github_not_found",
      `GitHub answered 404 Not Found when trying to ${what}: check github.repo and the issue or pull request number, and that the token can see the repository`,
    );
  const details = (
    e.response?.data as { errors?: Array<{ message?: string; field?: string; code?: string }> } | undefined
  )?.errors;
  const reason = details?.map((d) => d.message ?? `${d.field ?? "?"} ${d.code ?? ""}`.trim()).join("; ");
  return new UsageError("github_rejected", `GitHub rejected the request to ${what} (${status}): ${reason || message}`);
}

/** Run a GitHub call, mapping its failure. */
export async function callGitHub<T>(what: string, tokenEnv: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw gitHubError(err, what, tokenEnv);
  }
}

/** The git URL of a GitHub repository, derived from the API URL (github.com or GitHub Enterprise). */
export function gitHubRemoteUrl(apiUrl: string, repo: string): string {
  const u = new URL(apiUrl);
  if (u.hostname === "api.github.com") return `https://github.com/${repo}.git`;
  return `${u.origin}/${repo}.git`;
}
