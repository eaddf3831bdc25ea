import { NotFoundError } from "../core/index.js";
import { mergedBaseRef, type LocalForge, type LocalPullRequest } from "./forge.js";
import { branchSha, git } from "./git.js";

/** The most of a diff the API returns; a longer one is cut and marked truncated. */
export const PR_DIFF_MAX_BYTES = 512 * 1024;

export interface PullRequestDiff {
  pull: LocalPullRequest;
  /** `git diff --stat` of base...head. */
  stat: string;
  /** The unified diff of base...head (what the pull request would merge), at most PR_DIFF_MAX_BYTES. */
  diff: string;
  truncated: boolean;
}

/** One pull request of the local forge with its diff against its base, read from the forge's bare repository. */
export async function localPullRequestDiff(forge: LocalForge, number: number): Promise<PullRequestDiff> {
  const [pull] = await forge.byNumbers([number], Number.MAX_SAFE_INTEGER);
  if (!pull)
    throw new NotFoundError(
      "pull_request_not_found",
      `pull request #${number} does not exist in the local forge (see GET /v1/prs or \`pmagent prs\`)`,
    );
  // On another machine than the one that merged or pushed it: the team's forge first.
  await forge.sync();
  const cwd = forge.bareRepo;
  // Merged: against the base as it was before the merge (kept by the merge), not the base that now holds it.
  const base =
    (pull.state === "merged"
      ? await git(["rev-parse", "--verify", "--quiet", `${mergedBaseRef(number)}^{commit}`], { cwd }).catch(
          () => undefined,
        )
      : undefined) ?? (await branchSha(cwd, pull.base));
  if (!base)
    throw new NotFoundError(
      "pr_base_missing",
      `pull request #${number}: its base branch "${pull.base}" is not in the forge ${cwd}`,
    );
  const range = `${base}...${pull.head_sha}`;
  const stat = await git(["diff", "--stat", "--no-color", range], { cwd });
  const full = await git(["diff", "--no-color", "--no-ext-diff", range], { cwd });
  const bytes = Buffer.from(full);
  const truncated = bytes.length > PR_DIFF_MAX_BYTES;
  return { pull, stat, diff: truncated ? bytes.subarray(0, PR_DIFF_MAX_BYTES).toString("utf8") : full, truncated };
}
