import type { Config } from "../../config/light/index.js";
import { runGit } from "./git.js";

/** `owner/name` of a GitHub remote URL (https, ssh, scp-like `git@github.com:owner/name.git`), or null for any other host. */
export function githubRepoOfRemote(url: string): string | null {
  const m =
    /^(?:https?:\/\/(?:[^@/]+@)?|ssh:\/\/(?:[^@/]+@)?|[^@/\s]+@)github\.com[:/]([^/\s]+)\/([^/\s]+?)(?:\.git)?\/?$/i.exec(
      url.trim(),
    );
  return m ? `${m[1]}/${m[2]}` : null;
}

/**
 * The repository's web address on GitHub, for evidence URLs: from its `origin` remote when that is
 * on github.com, else from the config's `github.repo` when it is github.com's (its api_url the
 * default); null when neither is known. A remote's credentials never reach the answer: only the
 * owner and name are kept.
 */
export async function githubWebUrl(repo: string, config: Pick<Config, "github">): Promise<string | null> {
  const res = await runGit(repo, ["remote", "get-url", "origin"]);
  const fromRemote = res.code === 0 ? githubRepoOfRemote(res.stdout.toString("utf8")) : null;
  if (fromRemote) return `https://github.com/${fromRemote}`;
  const gh = config.github;
  if (gh?.repo && /^[^/\s]+\/[^/\s]+$/.test(gh.repo) && /^https:\/\/api\.github\.com\/?$/.test(gh.api_url))
    return `https://github.com/${gh.repo}`;
  return null;
}
