/**
 * The forge as a git remote every machine reaches (issue 33): `forge.remote` names a repository
 * (git://, http(s)://, ssh or a path) that holds the project's cycle branches, base branches and
 * merged pull requests' bases. Each machine's `forge.bare_repo` is then its mirror of it: the
 * remote's refs are fetched into the mirror before they are read, and what the supervisor moves in
 * the mirror (a cycle's commit, a merge) is pushed with a lease on the value it read, so two
 * machines moving the same branch never lose each other's work: the second is told it moved.
 * Workspaces never push: the supervisor fetches from them into its mirror, as without a remote.
 */
import { ConflictError, UnavailableError } from "../core/index.js";
import { gitResult, git } from "./git.js";

/** Long enough for a large repository's first fetch; a dead remote still fails. */
const REMOTE_TIMEOUT_MS = 600_000;

/** What the remote holds that the mirror must see: branches, and the local forge's pull request refs. */
const MIRRORED = ["+refs/heads/*:refs/heads/*", "+refs/pmagent/pulls/*:refs/pmagent/pulls/*"];

/** Bring the remote's branches into the mirror `repo` (the remote wins: it is where the team's work is). */
export async function pullRemote(repo: string, remote: string): Promise<void> {
  await git(["fetch", "--quiet", "--no-tags", "--force", remote, ...MIRRORED], {
    cwd: repo,
    timeoutMs: REMOTE_TIMEOUT_MS,
  });
}

export interface RemoteUpdate {
  /** A full ref name (`refs/heads/…`). */
  ref: string;
  sha: string;
  /** What the ref must still be on the remote (as last fetched); null: it must not exist yet. */
  expect: string | null;
}

/**
 * Move refs on the remote, all or none (`--atomic`), each only while it still holds what this
 * machine read (`--force-with-lease`). Refused with `forge_moved` when another machine moved one
 * meanwhile: fetch again and redo the work on top of it.
 */
export async function pushRemote(repo: string, remote: string, updates: readonly RemoteUpdate[]): Promise<void> {
  if (updates.length === 0) return;
  const leases = updates.map((u) => `--force-with-lease=${u.ref}:${u.expect ?? ""}`);
  const specs = updates.map((u) => `${u.sha}:${u.ref}`);
  const r = await gitResult(["push", "--quiet", "--porcelain", "--atomic", ...leases, remote, ...specs], {
    cwd: repo,
    timeoutMs: REMOTE_TIMEOUT_MS,
  });
  if (r.code === 0) return;
  const said = `${r.stdout}\n${r.stderr}`;
  if (/\[rejected\]|stale info|atomic push failed|fetch first|non-fast-forward/.test(said)) {
    throw new ConflictError(
      "forge_moved",
      `the forge ${remote} moved ${updates.map((u) => u.ref.replace(/^refs\/heads\//, "")).join(", ")} while this machine worked: nothing was pushed`,
      { remote, refs: updates.map((u) => u.ref) },
    );
  }
  const lines = said
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "" && !l.startsWith("hint:") && l !== "Done");
  throw new UnavailableError(
    "forge_unreachable",
    `cannot push to the forge ${remote}: ${lines.slice(-2).join(" ") || `git exited with ${r.code}`}`,
    { details: { remote } },
  );
}
