/**
 * The GitHub REST client sync uses: the real @octokit/rest, pointed at `github.api_url`, with
 * Octokit's throttling plugin (waits out primary rate limits until x-ratelimit-reset and secondary
 * ones for retry-after, or a minute when GitHub gives none, and spaces writes as GitHub asks) and
 * retry plugin (retries 5xx answers such as a 502), both bounded; conditional requests (a GET is
 * sent with the ETag of its last answer, and a 304 — which costs no rate limit — is answered from
 * that); and GitHub's failures mapped to typed errors whose messages say what to fix and never
 * contain the token.
 */
// Types only: Octokit and its plugins load when a client is made (createGithubClient), not with
// the blackboard module, which `pmagent bb list` and every other command import.
import type { Octokit } from "@octokit/rest";
import {
  NotFoundError,
  PmagentError,
  RefusedError,
  UnavailableError,
  UsageError,
  randomHex,
} from "../../core/index.js";

export interface GithubClientOptions {
  /** API base URL, e.g. https://api.github.com or a GitHub Enterprise /api/v3 URL. */
  apiUrl: string;
  token: string;
  /** Name of the environment variable the token came from (for messages). */
  tokenEnv: string;
  /** Retries after a rate-limit or server-error answer before giving up (default 3). */
  maxRetries?: number;
  /** Longest single wait for a rate limit to reset; a longer one fails at once (default 60 s). */
  maxWaitMs?: number;
  /** Abandon a request GitHub has not answered within this time (default 30 s). */
  timeoutMs?: number;
  /** Milliseconds per second of a wait GitHub asks for (default 1000; tests shrink it). */
  retryAfterBaseMs?: number;
  /** Called with each wait taken (nominal milliseconds, before `retryAfterBaseMs` scaling). */
  onWait?: (ms: number) => void;
  /** Least time between two writes (default 1000 ms, as GitHub's best practices ask). */
  writeSpacingMs?: number;
  clock?: () => number;
}

export interface GithubClient {
  octokit: Octokit;
  /** Rate-limit waits taken so far, in milliseconds (reported, never asserted on timing). */
  waits: number[];
  /** GET answers served from a 304 Not Modified (no rate limit spent). */
  notModified: number;
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

/** Octokit with the throttling and retry plugins, loaded once on the first client. */
let throttledOctokit: Promise<new (options: ConstructorParameters<typeof Octokit>[0]) => Octokit> | undefined;
function loadOctokit(): NonNullable<typeof throttledOctokit> {
  throttledOctokit ??= Promise.all([
    import("@octokit/rest"),
    import("@octokit/plugin-retry"),
    import("@octokit/plugin-throttling"),
  ]).then(([rest, r, t]) => rest.Octokit.plugin(t.throttling, r.retry));
  return throttledOctokit;
}

/** Read the token from the configured environment variable, or explain how to set it. */
export function githubToken(tokenEnv: string, env: NodeJS.ProcessEnv = process.env): string {
  const token = env[tokenEnv];
  if (!token)
    throw new UsageError(
      "github_token_missing",
      `${tokenEnv} is not set: export a GitHub token that can read and write the board issue's comments (e.g. export ${tokenEnv}=…)`,
    );
  return token;
}

/** Writes one at a time, `spacingMs` apart: the throttling plugin's `write` limiter, without a Bottleneck of our own. */
function writeSpacer(spacingMs: number): {
  key: () => { schedule: <T>(options: unknown, job: () => Promise<T>) => Promise<T> };
} {
  let last = Promise.resolve(0);
  const schedule = <T>(_options: unknown, job: () => Promise<T>): Promise<T> => {
    const run = last.then(async (previous) => {
      const wait = previous + spacingMs - Date.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      return Date.now();
    });
    last = run.catch(() => Date.now());
    return run.then(job);
  };
  return { key: () => ({ schedule }) };
}

export async function createGithubClient(options: GithubClientOptions): Promise<GithubClient> {
  const clock = options.clock ?? Date.now;
  const maxRetries = options.maxRetries ?? 3;
  const maxWaitMs = options.maxWaitMs ?? 60_000;
  const timeoutMs = options.timeoutMs ?? 30_000;
  const baseMs = options.retryAfterBaseMs ?? 1000;
  let apiUrl: URL;
  try {
    apiUrl = new URL(options.apiUrl);
  } catch {
    throw new UsageError(
      "github_bad_api_url",
      `GitHub API URL "${options.apiUrl}" is not a URL (e.g. https://api.github.com)`,
    );
  }
  const client: GithubClient = { octokit: undefined as unknown as Octokit, waits: [], notModified: 0 };
  /** Why the last rate limit was not waited out, for the error the caller gets. */
  let gaveUp: string | undefined;
  const onLimit = (retryAfterSeconds: number, _request: unknown, _octokit: unknown, retryCount: number): boolean => {
    const wait = retryAfterSeconds * 1000;
    if (retryCount >= maxRetries || wait > maxWaitMs) {
      const until = new Date(clock() + wait).toISOString().replace(/\.\d{3}Z$/, "Z");
      gaveUp = `GitHub rate limit ${retryCount >= maxRetries ? `still exceeded after ${maxRetries} retries` : `exceeded and resets only in ${Math.ceil(wait / 1000)} s (pmagent waits at most ${Math.round(maxWaitMs / 1000)} s)`}: try again after ${until}`;
      return false;
    }
    client.waits.push(wait);
    options.onWait?.(wait);
    return true;
  };
  // A server that accepts the connection and never answers must not hang the sync.
  const timedFetch: typeof fetch = (input, init) =>
    fetch(input, { ...init, signal: init?.signal ?? AbortSignal.timeout(timeoutMs) });
  const ThrottledOctokit = await loadOctokit();
  const octokit = new ThrottledOctokit({
    auth: options.token,
    baseUrl: apiUrl.toString().replace(/\/$/, ""),
    log: silent,
    userAgent: "pmagent",
    request: { fetch: timedFetch },
    throttle: {
      // A group of its own per client: the plugin's limiters are shared by id across instances.
      id: randomHex(6),
      retryAfterBaseValue: baseMs,
      write: writeSpacer(options.writeSpacingMs ?? 1000),
      onRateLimit: onLimit,
      onSecondaryRateLimit: onLimit,
    } as never,
    // Rate limits (403, 429) are the throttling plugin's; the retry plugin retries server errors.
    retry: { retries: maxRetries, retryAfterBaseValue: baseMs, doNotRetry: [400, 401, 403, 404, 410, 422, 429, 451] },
  });
  client.octokit = octokit;
  // Conditional GETs: the ETag of each URL's last answer, and that answer.
  const cache = new Map<string, { etag: string; response: unknown }>();
  octokit.hook.wrap("request", async (request, requestOptions) => {
    const isGet = requestOptions.method === "GET";
    const key = isGet ? octokit.request.endpoint(requestOptions).url : "";
    const cached = isGet ? cache.get(key) : undefined;
    if (cached) requestOptions.headers = { ...requestOptions.headers, "if-none-match": cached.etag };
    try {
      const response = await request(requestOptions);
      const etag = response.headers.etag;
      if (isGet && typeof etag === "string") cache.set(key, { etag, response });
      return response;
    } catch (err) {
      if (cached && isHttpFailure(err) && err.status === 304) {
        client.notModified++;
        return cached.response as Awaited<ReturnType<typeof request>>;
      }
      if (gaveUp !== undefined && isHttpFailure(err) && (err.status === 403 || err.status === 429)) {
        const message = gaveUp;
        gaveUp = undefined;
        throw new UnavailableError("github_rate_limited", message);
      }
      throw err;
    }
  });
  return client;
}

/** Turn a GitHub failure into a typed error naming what was being done and what to fix. */
export function githubError(err: unknown, what: string, context: { tokenEnv: string; apiUrl: string }): PmagentError {
  if (err instanceof PmagentError) return err;
  if (!isHttpFailure(err) || err.status >= 500 || err.response === undefined) {
    const message = isHttpFailure(err) ? err.message : ((err as Error)?.message ?? String(err));
    return new UnavailableError(
      "github_unreachable",
      `cannot ${what}: GitHub at ${context.apiUrl} did not answer (${message})`,
      { cause: err },
    );
  }
  const data = err.response.data as { message?: unknown; errors?: unknown } | undefined;
  // 422 answers carry the reasons in `errors` ({resource, field, code, message?}).
  const reasons = Array.isArray(data?.errors)
    ? (data.errors as Array<{ field?: string; code?: string; message?: string }>).map(
        (e) => e.message ?? `${e.field ?? "?"} ${e.code ?? "invalid"}`,
      )
    : [];
  const said = `${typeof data?.message === "string" ? data.message : err.message}${reasons.length ? ` (${reasons.join("; ")})` : ""}`;
  switch (err.status) {
    case 401:
      return new UnavailableError(
        "github_bad_credentials",
        `cannot ${what}: GitHub rejected the token in ${context.tokenEnv} (401 ${said}): set ${context.tokenEnv} to a valid token`,
      );
    case 403:
      return new RefusedError(
        "github_forbidden",
        `cannot ${what}: GitHub refused (403 ${said}): the token in ${context.tokenEnv} needs access to the repository's issues`,
      );
    case 404:
      return new NotFoundError(
        "github_not_found",
        `cannot ${what}: GitHub answered 404 ${said} (check the repository and issue number, and that the token in ${context.tokenEnv} can see them)`,
      );
    default:
      return new UnavailableError("github_rejected", `cannot ${what}: GitHub answered ${err.status} ${said}`);
  }
}
