import { execFile } from "node:child_process";
import { UnavailableError, UsageError } from "../core/index.js";

export interface GitOptions {
  cwd: string;
  /** Extra environment (the supervisor's own credentials, as GIT_CONFIG_* entries). */
  env?: Record<string, string>;
  /** Wraps the git argv (a sandbox: see workspace-git.ts). */
  wrap?: (argv: string[]) => string[];
  /** Stopped after this long (a repository a sprite wrote may hold a FIFO git would wait on forever). */
  timeoutMs?: number;
}

export interface GitResult {
  /** Null when git was stopped (timeout) or could not start. */
  code: number | null;
  stdout: string;
  stderr: string;
  killed: boolean;
}

/**
 * Run git with a scrubbed environment: PATH and HOME only, no prompts, plus what the caller adds.
 * Nothing of the sprite's environment (or the supervisor's other secrets) reaches git. Resolves
 * however git exits: for commands whose exit code is an answer (`merge-tree`: 1 is a conflict).
 */
export function gitResult(args: string[], options: GitOptions): Promise<GitResult> {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: process.env.HOME ?? "/tmp",
    GIT_TERMINAL_PROMPT: "0",
    GIT_CONFIG_NOSYSTEM: "1",
    LC_ALL: "C",
    ...options.env,
  };
  return new Promise((resolve) => {
    const argv = options.wrap ? options.wrap(["git", ...args]) : ["git", ...args];
    execFile(
      argv[0]!,
      argv.slice(1),
      {
        cwd: options.cwd,
        env,
        maxBuffer: 16 * 1024 * 1024,
        ...(options.timeoutMs ? { timeout: options.timeoutMs, killSignal: "SIGKILL" as const } : {}),
      },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === "number" ? err.code : null) : 0;
        resolve({ code, stdout: String(stdout), stderr: String(stderr), killed: err?.killed === true });
      },
    );
  });
}

/** Run git (see gitResult); its trimmed stdout, or git_failed with the last lines it said. */
export async function git(args: string[], options: GitOptions): Promise<string> {
  const r = await gitResult(args, options);
  if (r.code === 0) return r.stdout.trim();
  // git's advice ("hint: …") would push the reason out of the last lines; a failure that says
  // nothing on stderr is named by its exit code.
  const said = r.stderr
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "" && !l.startsWith("hint:"));
  const reason =
    said.slice(-3).join(" ") ||
    (r.killed ? `stopped after ${options.timeoutMs} ms` : `exit code ${r.code ?? "unknown"}, nothing on stderr`);
  throw new UnavailableError("git_failed", `git ${args[0]} in ${options.cwd} failed: ${reason}`);
}

/**
 * Merge commit `theirs` into `ours` in `repo` without a work tree (`git merge-tree`): the merge
 * commit (by pmagent, parents ours then theirs), or the files that conflict; nothing is written
 * to a branch either way.
 */
export async function mergeCommits(
  repo: string,
  ours: string,
  theirs: string,
  message: string,
): Promise<{ sha: string } | { conflicts: string[] }> {
  const r = await gitResult(["merge-tree", "--write-tree", "--name-only", "--no-messages", ours, theirs], {
    cwd: repo,
    timeoutMs: 600_000,
  });
  // Exit 1 is merge-tree's answer "conflicts": the tree, then the conflicting files.
  if (r.code === 1)
    return {
      conflicts: r.stdout
        .split("\n")
        .slice(1)
        .map((l) => l.trim())
        .filter((l) => l !== ""),
    };
  if (r.code !== 0)
    throw new UnavailableError(
      "git_failed",
      `git merge-tree in ${repo} failed: ${r.stderr.trim().split("\n").slice(-2).join(" ") || `exit code ${r.code}`}`,
    );
  const tree = r.stdout.split("\n")[0]!;
  return {
    sha: await git(
      [
        "-c",
        "user.name=pmagent",
        "-c",
        "user.email=pmagent@pmagent.invalid",
        "commit-tree",
        tree,
        "-p",
        ours,
        "-p",
        theirs,
        "-m",
        message,
      ],
      { cwd: repo },
    ),
  };
}

/** Refuse a branch name git would not accept (also keeps option-like names away from argv). */
export async function assertBranchName(name: string, what: string, cwd: string): Promise<void> {
  if (name.startsWith("-") || name.length > 255)
    throw new UsageError("invalid_branch", `${what} "${name.slice(0, 80)}" is not a valid branch name`);
  try {
    await git(["check-ref-format", "--branch", name], { cwd });
  } catch {
    throw new UsageError("invalid_branch", `${what} "${name}" is not a valid branch name`);
  }
}

/** The commit a branch points to, or undefined. */
export async function branchSha(repo: string, branch: string): Promise<string | undefined> {
  try {
    return await git(["rev-parse", "--verify", "--quiet", `refs/heads/${branch}^{commit}`], { cwd: repo });
  } catch {
    return undefined;
  }
}
