import { execFileSync } from "node:child_process";
import { UnavailableError } from "../../core/index.js";
import { branchSlug } from "../../forge/index.js";

/** Run git in `cwd` (inside a sprite this is the supervisor's shim, which refuses push). */
export function git(cwd: string, args: string[]): string {
  try {
    return execFileSync("git", args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim();
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new UnavailableError(
      "git_failed",
      `git ${args[0]} failed in ${cwd}: ${(e.stderr ?? e.message).trim().slice(0, 500)}`,
    );
  }
}

/** Prefix of the branch a cycle's artifacts and document updates are committed on. */
export const BRANCH_PREFIX = "doc-update/";

/** The branch a cycle's proposal, review, updates and snapshot are committed on. */
export function cycleBranch(cycleId: string): string {
  return `${BRANCH_PREFIX}${branchSlug(cycleId)}`;
}

/** The branch the workspace was cloned from (the pull request's base), else its current one. */
export function defaultBranch(workspace: string): string {
  try {
    return git(workspace, ["rev-parse", "--abbrev-ref", "origin/HEAD"]).replace(/^origin\//, "");
  } catch {
    return git(workspace, ["symbolic-ref", "--short", "HEAD"]);
  }
}

/** Check `branch` of the repository at `repo` out in `workspace` (created or reset to it). */
export function checkoutBranchFrom(workspace: string, repo: string, branch: string): void {
  git(workspace, ["fetch", "--quiet", "--no-tags", repo, `refs/heads/${branch}`]);
  git(workspace, ["checkout", "--quiet", "-B", branch, "FETCH_HEAD"]);
}
