/**
 * A lane cycle is a branch of the forge's repository (`pmagent/<layer>/<lane>/<cycle>`). Each
 * role's run starts from the branch's head; when the run succeeds, the supervisor commits what its
 * workspace holds onto the branch as one commit of the role, and the next role starts from there.
 *
 * The commit is made from the workspace's files, not from the sprite's own commits: its tree is
 * the working tree as `git add -A` sees it (the user's ignore rules, plus `.lattice/` and
 * `.pmagent/`, which never enter a commit), its one parent the commit the run started from. So a
 * sprite that committed, amended, rebased or checked out another branch hands on its files all the
 * same, and nothing of pmagent's own lands in the pull request. The git that reads the workspace is
 * the checked one of workspace-git.ts (no hooks, sandboxed where sprites are); the branch moves in
 * the forge's repository by compare-and-swap. When another run of the cycle moved the branch
 * meanwhile, the two are merged by `git merge-tree`; a conflict is refused (`cycle_conflict`),
 * nothing is merged blindly.
 */
import { appendFileSync, existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ConflictError, hasCode } from "../core/index.js";
import { branchSha, git, mergeCommits } from "./git.js";
import { ensureBareRepo } from "./forge.js";
import { pullRemote, pushRemote } from "./remote.js";
import { WorkspaceRepo, type WorkspaceSandbox } from "./workspace-git.js";

/** Where a project's cycle branches live, and how the git that reads a workspace runs. */
export interface CycleRepoOptions {
  /** The forge's bare repository (config `forge.bare_repo`): with `remote`, this machine's mirror of it. */
  repo: string;
  /** The forge every machine reaches (config `forge.remote`), see remote.ts. */
  remote?: string;
  /** The project root: a new cycle starts from its current branch. */
  root: string;
  sandbox?: WorkspaceSandbox;
}

/** Where a run starts on its cycle's branch. */
export interface CycleStart {
  branch: string;
  base: string;
  start: string;
}

/** pmagent's own paths (its protocol files, its store, a role agent's run artifacts), never committed onto a cycle branch. */
export const UNCOMMITTED_PATHS = [".lattice/", ".pmagent/", ".pmagent-artifacts/"];

/** A branch-name-safe form of an entry id. */
export function branchSlug(id: string): string {
  return (
    id
      .replace(/[^A-Za-z0-9._-]+/g, "-")
      .replace(/\.{2,}/g, ".")
      .replace(/^[-.]+|[-.]+$/g, "") || "cycle"
  );
}

/** The branch of a lane's cycle. */
export function cycleBranchName(layer: string, lane: string, cycleId: string): string {
  return `pmagent/${branchSlug(layer)}/${branchSlug(lane)}/${branchSlug(cycleId)}`;
}

/** The branch the project root is on, or null (a detached head, or a repository without a commit). */
export async function currentBranch(root: string): Promise<string | null> {
  try {
    const name = await git(["symbolic-ref", "--quiet", "--short", "HEAD"], { cwd: root });
    await git(["rev-parse", "--verify", "--quiet", "HEAD^{commit}"], { cwd: root });
    return name;
  } catch {
    return null;
  }
}

/** The base branch a cycle was started for, kept in the forge repository's config. */
const baseKey = (branch: string) => `pmagent-cycle.${branch}.base`;

/**
 * Put a freshly cloned workspace (the supervisor's own clone: no sprite has run in it yet) on the
 * cycle's branch: the forge's branch when the cycle has one, else a new branch from the project's
 * current one. Returns null when the project is not on a branch with a commit (nothing to start from).
 */
export async function startCycleBranch(
  options: CycleRepoOptions,
  workspace: string,
  branch: string,
): Promise<CycleStart | null> {
  await ensureBareRepo(options.repo);
  // The cycle may have moved on another machine: its branch as the team's forge has it.
  if (options.remote) await pullRemote(options.repo, options.remote);
  const inWs = (args: string[]) => git(args, { cwd: workspace });
  let base: string | null;
  if (await branchSha(options.repo, branch)) {
    await inWs(["fetch", "--quiet", "--no-tags", options.repo, `+refs/heads/${branch}:refs/heads/${branch}`]);
    await inWs(["checkout", "--quiet", branch]);
    base = await git(["config", "--get", baseKey(branch)], { cwd: options.repo }).catch(() => null);
    base ??= await currentBranch(options.root);
  } else {
    base = await currentBranch(options.root);
    if (base === null) return null;
    await inWs(["checkout", "--quiet", "-B", branch]);
    await git(["config", baseKey(branch), base], { cwd: options.repo });
  }
  if (base === null) return null;
  excludeOwnPaths(workspace);
  return { branch, base, start: await inWs(["rev-parse", "HEAD"]) };
}

/** `.lattice/` and `.pmagent/` in the workspace's `info/exclude`: `git add -A` (the sprite's or ours) leaves them out. */
function excludeOwnPaths(workspace: string): void {
  const info = join(workspace, ".git", "info");
  mkdirSync(info, { recursive: true });
  const file = join(info, "exclude");
  const have = existsSync(file) ? readFileSync(file, "utf8") : "";
  const missing = UNCOMMITTED_PATHS.filter((p) => !have.split("\n").includes(p));
  if (missing.length > 0)
    appendFileSync(
      file,
      `${have === "" || have.endsWith("\n") ? "" : "\n"}# pmagent's own files never enter a commit\n${missing.join("\n")}\n`,
    );
}

export interface HandOnRequest {
  workspace: string;
  cycle: CycleStart;
  /** Names the private ref the work is fetched through. */
  runId: string;
  author: { name: string; email: string };
  message: string;
}

export interface HandOnResult {
  /** The branch's head after the hand-on; null when the run changed nothing. */
  commit: string | null;
  /** True when another run had moved the branch and the two were merged. */
  merged: boolean;
}

/** Commit the workspace's files onto the cycle's branch as one commit of the role (see above). */
export async function handOnCycleBranch(options: CycleRepoOptions, request: HandOnRequest): Promise<HandOnResult> {
  const { cycle } = request;
  const ws = await WorkspaceRepo.open(request.workspace, { root: options.root, sandbox: options.sandbox ?? null });
  // Whatever the sprite did to the exclude file, pmagent's own paths stay out.
  await ws.git(["add", "-A"]);
  await ws.git(["rm", "-r", "--cached", "--quiet", "--ignore-unmatch", "--", ...UNCOMMITTED_PATHS]);
  const tree = await ws.git(["write-tree"]);
  const startTree = await ws.git(["rev-parse", `${cycle.start}^{tree}`]);
  if (tree === startTree) return { commit: null, merged: false };
  const identity = ["-c", `user.name=${request.author.name}`, "-c", `user.email=${request.author.email}`];
  // The sprite's own words for its work when it committed (its last commit's message), else ours; our trailers either way.
  const own =
    (await ws.git(["rev-parse", "HEAD"]).catch(() => cycle.start)) !== cycle.start
      ? (await ws.git(["log", "-1", "--format=%B", "HEAD"]).catch(() => "")).trim()
      : "";
  const trailers = request.message.split("\n\n").slice(1).join("\n\n");
  const message = own !== "" ? `${own.slice(0, 4000)}\n\n${trailers}` : request.message;
  const work = await ws.git([...identity, "commit-tree", tree, "-p", cycle.start, "-m", message]);
  const handoff = `refs/pmagent/handoff/${request.runId}`;
  await ws.git(["update-ref", handoff, work]);
  // Fetched by the forge's repository from the checked workspace (upload-pack --strict), never pushed by it.
  const incoming = `refs/pmagent/incoming/${request.runId}`;
  await git(["fetch", "--quiet", "--no-tags", "--force", ...ws.fetchSource(), `+${handoff}:${incoming}`], {
    cwd: options.repo,
    timeoutMs: 600_000,
  });
  // With a remote, another machine may move the branch between our read and our push: read again and redo.
  for (let attempt = 1; ; attempt++) {
    try {
      const result = await moveBranch(options, cycle, work, tree, request.message);
      await git(["update-ref", "-d", incoming], { cwd: options.repo });
      return result;
    } catch (err) {
      if (!hasCode(err, "forge_moved") || attempt >= REMOTE_TRIES) throw err;
    }
  }
}

/** Tries at moving a cycle's branch on a remote forge that other machines move too. */
const REMOTE_TRIES = 3;

/** Put `work` on the cycle's branch: as its new head, or merged with what another run put there. */
async function moveBranch(
  options: CycleRepoOptions,
  cycle: CycleStart,
  work: string,
  tree: string,
  message: string,
): Promise<HandOnResult> {
  if (options.remote) await pullRemote(options.repo, options.remote);
  const current = await branchSha(options.repo, cycle.branch);
  let head = work;
  let merged = false;
  if (
    current !== undefined &&
    current !== cycle.start &&
    (await git(["rev-parse", `${current}^{tree}`], { cwd: options.repo })) === tree
  ) {
    // The branch holds exactly this work already (the sprite's own OPEN_PR pushed it, or this
    // hand-on ran before a crash): nothing to add.
    head = current;
  } else if (current !== undefined && current !== cycle.start) {
    head = await mergeOnto(options.repo, cycle.branch, current, work, message);
    merged = true;
  }
  if (head === current) return { commit: head, merged };
  // Compare-and-swap: a run that moved the branch since makes this one fail rather than be lost.
  await git(["update-ref", "-m", message.split("\n")[0]!, `refs/heads/${cycle.branch}`, head, current ?? ""], {
    cwd: options.repo,
  });
  if (options.remote)
    await pushRemote(options.repo, options.remote, [
      { ref: `refs/heads/${cycle.branch}`, sha: head, expect: current ?? null },
    ]);
  return { commit: head, merged };
}

/** Merge `work` into the branch at `current` (both from the cycle); a conflict is reported, not resolved. */
async function mergeOnto(
  repo: string,
  branch: string,
  current: string,
  work: string,
  message: string,
): Promise<string> {
  const merged = await mergeCommits(repo, current, work, `Merge ${message.split("\n")[0]}`);
  if ("sha" in merged) return merged.sha;
  const files = merged.conflicts;
  throw new ConflictError(
    "cycle_conflict",
    `the cycle's branch ${branch} moved to ${current.slice(0, 12)} while this run worked, and its changes conflict with the run's in ${files.slice(0, 20).join(", ") || "some files"}: nothing was merged. Resolve it on the branch, or run the role again from the branch's head`,
    { branch, current, work, files },
  );
}
