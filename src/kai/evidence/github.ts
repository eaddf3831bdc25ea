// Types only: Octokit loads when GitHub is consulted, not with Kai (`pmagent kai status` without a token needs none of it).
import type { Octokit } from "@octokit/rest";
import { UnavailableError, UsageError } from "../../core/index.js";
import type { Config } from "../../config/light/index.js";
import type { GithubEvidence, GithubIssue, GithubPull, GithubWorkflowRun, EvidenceWindow } from "./types.js";

const before = (at: string | null | undefined, cutoff: Date) =>
  typeof at === "string" && Date.parse(at) <= cutoff.getTime();
/** GitHub's search date syntax takes second precision. */
const searchTime = (d: Date) => d.toISOString().replace(/\.\d{3}Z$/, "Z");

/**
 * Issues, pull requests and workflow runs of the project's GitHub repository touched in the
 * window, as they stood at its end (a PR merged after `as_of` is still open then).
 */
export async function collectGithub(
  octokit: Octokit,
  fullName: string,
  window: EvidenceWindow,
): Promise<GithubEvidence> {
  const [owner = "", repo = ""] = fullName.split("/");
  const since = window.since.toISOString();
  try {
    const rawIssues = await octokit.paginate(octokit.rest.issues.listForRepo, {
      owner,
      repo,
      state: "all",
      since,
      per_page: 100,
    });
    const issues: GithubIssue[] = rawIssues
      .filter((i) => i.pull_request === undefined && before(i.created_at, window.until))
      .map((i) => ({
        number: i.number,
        title: i.title,
        state: before(i.closed_at, window.until) ? "closed" : "open",
        url: i.html_url,
        created_at: i.created_at,
        updated_at: i.updated_at,
        closed_at: before(i.closed_at, window.until) ? i.closed_at : null,
        labels: i.labels.map((l) => (typeof l === "string" ? l : (l.name ?? ""))).filter(Boolean),
      }));
    // Pulls come newest-updated first; stop paging at the first one older than the window.
    const rawPulls = await octokit.paginate(
      octokit.rest.pulls.list,
      { owner, repo, state: "all", sort: "updated", direction: "desc", per_page: 100 },
      (res, done) => {
        if (res.data.some((p) => Date.parse(p.updated_at) < window.since.getTime())) done();
        return res.data;
      },
    );
    const pulls: GithubPull[] = rawPulls
      .filter((p) => Date.parse(p.updated_at) >= window.since.getTime() && before(p.created_at, window.until))
      .map((p) => {
        const closed = before(p.closed_at, window.until);
        return {
          number: p.number,
          title: p.title,
          state: closed ? "closed" : "open",
          merged_at: before(p.merged_at, window.until) ? p.merged_at : null,
          url: p.html_url,
          created_at: p.created_at,
          updated_at: p.updated_at,
          closed_at: closed ? p.closed_at : null,
          head: p.head.ref,
        };
      });
    const rawRuns = await octokit.paginate(octokit.rest.actions.listWorkflowRunsForRepo, {
      owner,
      repo,
      created: `${searchTime(window.since)}..${searchTime(window.until)}`,
      per_page: 100,
    });
    const workflow_runs: GithubWorkflowRun[] = rawRuns
      .filter((r) => before(r.created_at, window.until))
      .map((r) => ({
        id: String(r.id),
        name: r.name ?? r.path,
        path: r.path,
        // A run still going at the cutoff is reported as it was then: in progress, no conclusion.
        status: before(r.updated_at, window.until) ? (r.status ?? "unknown") : "in_progress",
        conclusion: before(r.updated_at, window.until) ? (r.conclusion ?? null) : null,
        url: r.html_url,
        created_at: r.created_at,
        updated_at: r.updated_at,
      }));
    return { repo: fullName, issues, pulls, workflow_runs };
  } catch (err) {
    const status = (err as { status?: number }).status;
    const reason =
      status === 401
        ? "bad credentials (check the token)"
        : status === 404
          ? `repository ${fullName} not found or not visible to the token`
          : (err as Error).message;
    throw new UnavailableError("kai_github_failed", `GitHub ${fullName}: ${reason}`, { cause: err });
  }
}

/**
 * The GitHub source of a project, or why there is none. The token is read from the environment
 * variable the config names and never appears in any message.
 */
export function githubSource(
  config: Config,
  env: NodeJS.ProcessEnv = process.env,
): { source?: (w: EvidenceWindow) => Promise<GithubEvidence>; note?: string } {
  const gh = config.github;
  if (!gh?.repo) return { note: "GitHub was not consulted: no github.repo in the config" };
  const token = env[gh.token_env];
  if (!token) return { note: `GitHub was not consulted: ${gh.token_env} is not set` };
  if (!/^[^/\s]+\/[^/\s]+$/.test(gh.repo))
    throw new UsageError("kai_bad_github_repo", `github.repo "${gh.repo}" must be OWNER/NAME`);
  const repo = gh.repo;
  let octokit: Promise<Octokit> | undefined;
  const client = () =>
    (octokit ??= import("@octokit/rest").then(
      ({ Octokit }) => new Octokit({ auth: token, baseUrl: gh.api_url.replace(/\/$/, ""), request: { retries: 0 } }),
    ));
  return { source: async (w) => collectGithub(await client(), repo, w) };
}
