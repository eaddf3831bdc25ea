/**
 * The GitHub REST client sync uses: the real @octokit/rest, pointed at `github.api_url`, with
 * bounded retries on rate limits (primary: 403/429 with x-ratelimit-remaining 0, wait until
 * x-ratelimit-reset; secondary: retry-after) and GitHub's failures mapped to typed errors whose
 * messages say what to fix and never contain the token.
 */
import { Octokit } from "@octokit/rest";
import { NotFoundError, PmagentError, RefusedError, UnavailableError, UsageError } from "../core/index.js";

export interface GithubClientOptions {
  /** API base URL, e.g. https://api.github.com or a GitHub Enterprise /api/v3 URL. */
  apiUrl: string;
  token: string;
  /** Name of the environment variable the token came from (for messages). */
  tokenEnv: string;
  /** Retries after a rate-limit answer before giving up (default 3). */
  maxRetries?: number;
  /** Longest single wait for a rate limit to reset; a longer one fails at once (default 60 s). */
  maxWaitMs?: number;
  /** Abandon a request GitHub has not answered within this time (default 30 s). */
  timeoutMs?: number;
  sleep?: (ms: number) => Promise<void>;
  clock?: () => number;
}

export interface GithubClient {
  octokit: Octokit;
  /** Rate-limit waits taken so far, in milliseconds (reported, never asserted on timing). */
  waits: number[];
}

interface HttpFailure {
  status: number;
  message: string;
  response?: { headers: Record<string, string | number | undefined>; data?: unknown };
}

function isHttpFailure(err: unknown): err is HttpFailure {
  return err instanceof Error && typeof (err as Partial<HttpFailure>).status === "number";
}

const silent = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

/** Read the token from the configured environment variable, or explain how to set it. */
export function githubToken(tokenEnv: string, env: NodeJS.ProcessEnv = process.env): string {
  const token = env[tokenEnv];
  if (!token) throw new UsageError("github_token_missing", `${tokenEnv} is not set: export a GitHub token that can read and write the board issue's comments (e.g. export ${tokenEnv}=…)`);
  return token;
}

export function createGithubClient(options: GithubClientOptions): GithubClient {
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const clock = options.clock ?? Date.now;
  const maxRetries = options.maxRetries ?? 3;
  const maxWaitMs = options.maxWaitMs ?? 60_000;
  const timeoutMs = options.timeoutMs ?? 30_000;
  let apiUrl: URL;
  try {
    apiUrl = new URL(options.apiUrl);
  } catch {
    throw new UsageError("github_bad_api_url", `GitHub API URL "${options.apiUrl}" is not a URL (e.g. https://api.github.com)`);
  }
  // A server that accepts the connection and never answers must not hang the sync.
  const timedFetch: typeof fetch = (input, init) => fetch(input, { ...init, signal: init?.signal ?? AbortSignal.timeout(timeoutMs) });
  const octokit = new Octokit({ auth: options.token, baseUrl: apiUrl.toString().replace(/\/$/, ""), log: silent, userAgent: "pmagent", request: { fetch: timedFetch } });
  const waits: number[] = [];
  octokit.hook.wrap("request", async (request, requestOptions) => {
    for (let attempt = 0; ; attempt++) {
      try {
        return await request(requestOptions);
      } catch (err) {
        const wait = isHttpFailure(err) ? rateLimitWait(err, clock) : undefined;
        if (wait === undefined) throw err;
        if (attempt >= maxRetries || wait > maxWaitMs) {
          const until = new Date(clock() + wait).toISOString().replace(/\.\d{3}Z$/, "Z");
          const why = attempt >= maxRetries ? `still exceeded after ${maxRetries} retries` : `exceeded and resets only in ${Math.ceil(wait / 1000)} s (pmagent waits at most ${Math.round(maxWaitMs / 1000)} s)`;
          throw new UnavailableError("github_rate_limited", `GitHub rate limit ${why}: try again after ${until}`);
        }
        waits.push(wait);
        await sleep(wait);
      }
    }
  });
  return { octokit, waits };
}

/** How long to wait before retrying, or undefined when the failure is not a rate limit. */
function rateLimitWait(err: HttpFailure, clock: () => number): number | undefined {
  if (err.status !== 403 && err.status !== 429) return undefined;
  const headers = err.response?.headers ?? {};
  const retryAfter = headers["retry-after"];
  if (retryAfter !== undefined && /^\d+$/.test(String(retryAfter))) return Number(retryAfter) * 1000;
  if (String(headers["x-ratelimit-remaining"]) === "0") {
    const reset = Number(headers["x-ratelimit-reset"]);
    // One extra second: GitHub's reset is a whole second and clocks differ a little.
    return Number.isFinite(reset) ? Math.max(0, reset * 1000 - clock()) + 1000 : 60_000;
  }
  // A 429 without either header is still a rate limit (GitHub documents waiting a minute).
  return err.status === 429 ? 60_000 : undefined;
}

/** Turn a GitHub failure into a typed error naming what was being done and what to fix. */
export function githubError(err: unknown, what: string, context: { tokenEnv: string; apiUrl: string }): PmagentError {
  if (err instanceof PmagentError) return err;
  if (!isHttpFailure(err) || err.status >= 500 || err.response === undefined) {
    const message = isHttpFailure(err) ? err.message : (err as Error)?.message ?? String(err);
    return new UnavailableError("github_unreachable", `cannot ${what}: GitHub at ${context.apiUrl} did not answer (${message})`, { cause: err });
  }
  const data = err.response.data as { message?: unknown; errors?: unknown } | undefined;
  // 422 answers carry the reasons in `errors` ({resource, field, code, message?}).
  const reasons = Array.isArray(data?.errors)
    ? (data.errors as Array<{ field?: string; code?: string; message?: string }>).map((e) => e.message ?? `${e.field ?? "?"} ${e.code ?? "invalid"}`)
    : [];
  const said = `${typeof data?.message === "string" ? data.message : err.message}${reasons.length ? ` (${reasons.join("; ")})` : ""}`;
  switch (err.status) {
    case 401:
      return new UnavailableError("github_bad_credentials", `cannot ${what}: GitHub rejected the token in ${context.tokenEnv} (401 ${said}): set ${context.tokenEnv} to a valid token`);
    case 403:
      return new RefusedError("github_forbidden", `cannot ${what}: GitHub refused (403 ${said}): the token in ${context.tokenEnv} needs access to the repository's issues`);
    case 404:
      return new NotFoundError("github_not_found", `cannot ${what}: GitHub answered 404 ${said} (check the repository and issue number, and that the token in ${context.tokenEnv} can see them)`);
    default:
      return new UnavailableError("github_rejected", `cannot ${what}: GitHub answered ${err.status} ${said}`);
  }
}
