import { spawn } from "node:child_process";
import { existsSync, readFileSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { UnavailableError, UsageError } from "../../core/index.js";
import type { FileChangeKind, GitCommit, GitEvidence, GitFileChange } from "./types.js";

export interface GitResult {
  code: number;
  stdout: Buffer;
  stderr: string;
}

/**
 * What the repository, its committed files or the caller's environment could otherwise change in
 * what Kai reads: pinned. Replace refs and grafts ignored (they rewrite history as git shows it);
 * no signature checks; paths and text as bytes in UTF-8; a root commit's files; a path's log not
 * followed across renames. (Gitlink changes: `collectGit`'s `--ignore-submodules=none`.)
 */
const PINNED = [
  "--no-replace-objects",
  // The empty graft file (gitEnv) would otherwise put git's deprecation advice before every error.
  "-c",
  "advice.graftFileDeprecated=false",
  "-c",
  "log.showSignature=false",
  "-c",
  "core.quotepath=off",
  "-c",
  "i18n.logOutputEncoding=UTF-8",
  "-c",
  "log.showRoot=true",
  "-c",
  "log.follow=false",
];

/**
 * The environment git runs in: the process's, without the variables that point git at another
 * repository, index or object store, or reshape its diffs (a hook's GIT_DIR, GIT_DIFF_OPTS).
 */
function gitEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, GIT_TERMINAL_PROMPT: "0", LC_ALL: "C", GIT_GRAFT_FILE: "/dev/null" };
  for (const name of [
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_COMMON_DIR",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_NAMESPACE",
    "GIT_REPLACE_REF_BASE",
    "GIT_DIFF_OPTS",
    "GIT_EXTERNAL_DIFF",
  ])
    delete env[name];
  return env;
}

/** Run git in `repo` with a fixed, non-interactive environment, `input` on stdin; output collected as bytes. */
export function runGit(repo: string, args: string[], input?: string): Promise<GitResult> {
  return new Promise((resolve, reject) => {
    const child = spawn("git", ["-C", repo, ...PINNED, ...args], {
      stdio: [input === undefined ? "ignore" : "pipe", "pipe", "pipe"],
      env: gitEnv(),
    });
    // git may exit before reading it all (a failure): its answer is the exit code, not EPIPE.
    child.stdin?.on("error", () => undefined);
    child.stdin?.end(input);
    const out: Buffer[] = [];
    let err = "";
    child.stdout!.on("data", (d: Buffer) => out.push(d));
    child.stderr!.on("data", (d: Buffer) => (err += d.toString()));
    child.on("error", (e) =>
      reject(
        new UnavailableError("kai_git_unavailable", `cannot run git: ${e.message} (is git installed?)`, { cause: e }),
      ),
    );
    child.on("close", (code) => resolve({ code: code ?? 1, stdout: Buffer.concat(out), stderr: err.trim() }));
  });
}

/** Check that `repo` is a directory; git itself says whether it is a repository (see `gitError`). */
export function assertRepository(repo: string): void {
  if (!existsSync(repo) || !statSync(repo).isDirectory()) {
    throw new UsageError("kai_repo_not_found", `repository directory ${repo} does not exist (pass --repo DIR)`);
  }
}

/**
 * A fresh `git init` has no HEAD yet: git's answer then means "no history", not a failure. Every
 * command naming HEAD ends its revisions with `--`, so a file named HEAD is never taken for it.
 */
const NO_HISTORY = /bad revision 'HEAD'/;

/** The error for a failed git command: not a repository or a git too old (the user's to fix), or git failing. */
function gitError(repo: string, what: string, res: GitResult): Error {
  const unknown = /unrecognized argument: (--[\w-]+)/.exec(res.stderr);
  if (unknown)
    return new UnavailableError(
      "kai_git_too_old",
      `${what} in ${repo} needs git 2.38 or newer: this git does not know ${unknown[1]} (git --version tells which it is)`,
    );
  if (/not a git repository/i.test(res.stderr)) {
    return new UsageError(
      "kai_not_a_repository",
      `${repo} is not a git repository (pass --repo DIR with the project's repository)`,
    );
  }
  return new UnavailableError("kai_git_failed", `${what} failed in ${repo}: ${res.stderr}`);
}

/**
 * The `git log -z --format` `parseGitLog` reads. Every field ends with a NUL, which a commit
 * message cannot hold: a message (which a sprite writes) cannot end a field early or forge a
 * commit, its files or its line counts, as a message holding a separator character could.
 */
const LOG_FORMAT = "%H%x00%P%x00%ct%x00%an%x00%s%x00%b%x00";
/** How many NUL-ended fields `LOG_FORMAT` gives per commit. */
const LOG_FIELDS = 6;
/** A commit id: SHA-1, or SHA-256 in a repository of that format. */
const COMMIT_ID = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/;
/** A `--numstat` line: added, deleted (`-` for binary) and the path, empty for a rename (two paths follow). */
const NUMSTAT = /^(\d+|-)\t(\d+|-)\t(.*)$/s;
/** A `--name-status` status (`M`, `R087`, …). */
const NAME_STATUS = /^[A-Z]\d*$/;

const CHANGE_KINDS: Record<string, FileChangeKind> = {
  A: "added",
  M: "modified",
  D: "deleted",
  R: "renamed",
  C: "copied",
  T: "type_changed",
};

/** PR number of a merge (`Merge pull request #N from …`) or squash (`Title (#N)`) commit. */
export function prNumberOf(subject: string): number | null {
  const m = /^Merge pull request #(\d+)\b/.exec(subject) ?? /\(#(\d+)\)\s*$/.exec(subject);
  return m ? Number(m[1]) : null;
}

function unreadable(what: string): UnavailableError {
  return new UnavailableError("kai_git_unreadable", `git log gave output Kai cannot read: ${what}`);
}

/** A commit time as git prints it (`%ct`: seconds since the epoch), in UTC; null when it is not one. */
function timeOf(text: string): string | null {
  const at = /^\d+$/.test(text) ? new Date(Number(text) * 1000) : null;
  return at === null || Number.isNaN(at.getTime()) ? null : at.toISOString();
}

/** A commit git printed no time for and does not date either. */
function undated(sha: string): UnavailableError {
  return unreadable(`the commit time of ${sha} (git printed none and does not date the commit)`);
}

/** The window git filtered a log by: `--since-as-filter` (inclusive) and `--until`. */
export interface LogBounds {
  since?: Date;
  until: Date;
}

/**
 * git's options for `bounds`. Since as a filter: plain --since stops the walk at the first commit
 * older than it, so one commit dated in the past (a sprite sets its own dates) would hide every
 * commit below it.
 */
function boundArgs(bounds: LogBounds): string[] {
  return [
    ...(bounds.since ? [`--since-as-filter=${bounds.since.toISOString()}`] : []),
    `--until=${bounds.until.toISOString()}`,
  ];
}

/**
 * A printed `%ct` in UTC when it is a time within the window git filtered by (git compares whole
 * seconds), else null: then the commit is dated by the time git filtered it by (`filterTimes`).
 */
function printedTime(printed: string, bounds: LogBounds | undefined): string | null {
  const at = timeOf(printed);
  if (at === null || !bounds) return at;
  const seconds = Number(printed);
  const inside =
    seconds <= Math.floor(bounds.until.getTime() / 1000) &&
    (bounds.since === undefined || seconds >= Math.floor(bounds.since.getTime() / 1000));
  return inside ? at : null;
}

/**
 * The times git dates commits by when it filters a window (`rev-list --timestamp`, one process):
 * the committer line right after the author line, where `%ct` prints the last one. For a commit git
 * printed no time for (an `encoding` header naming one git re-encodes the commit's ASCII headers
 * out of, EBCDIC, which a sprite may write), or one whose `%ct` lies outside the window git put it
 * in (a sprite's object with two committer lines). A commit git does not date is absent.
 * `reachable`: only those HEAD reaches, found by walking HEAD's history instead of by their ids.
 */
async function filterTimes(
  repo: string,
  shas: readonly string[],
  { reachable = false }: { reachable?: boolean } = {},
): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const wanted = new Set(shas);
  if (wanted.size === 0) return out;
  const res = await runGit(
    repo,
    reachable
      ? ["rev-list", "--timestamp", "HEAD", "--"]
      : ["rev-list", "--no-walk=unsorted", "--timestamp", "--stdin"],
    reachable ? undefined : `${shas.join("\n")}\n`,
  );
  if (res.code !== 0) return out;
  for (const line of res.stdout.toString("utf8").split("\n")) {
    const [time, sha] = line.split(" ");
    if (time && sha && wanted.has(sha)) out.set(sha, time);
  }
  return out;
}

/**
 * The time of commit `sha`: `%ct` as git printed it when it lies in `bounds`, else the time git
 * filtered the commit by (`filterTimes`); refused when git gives neither, never dated by guess.
 */
async function commitTime(repo: string, sha: string, printed: string, bounds: LogBounds): Promise<string> {
  const at = printedTime(printed, bounds);
  if (at !== null) return at;
  const dated = COMMIT_ID.test(sha) ? timeOf((await filterTimes(repo, [sha])).get(sha) ?? "") : null;
  if (dated === null) throw undated(sha);
  return dated;
}

/**
 * One commit's `-z` diff output, from `tokens[at]` up to the next commit's id: its files, and its
 * lines added plus deleted when the output has counts. Either `--name-status` (a status token, then
 * the path, or a rename's old and new paths), or `--raw --numstat`: each file's `:modes shas STATUS`
 * token and paths, then each file's `added\tdeleted\tpath` (a rename's paths as two tokens after
 * an empty one). Paths are taken by position, so a path that looks like a count or an id stays a path.
 */
function parseChanges(
  tokens: readonly string[],
  at: number,
): { files: GitFileChange[]; lines: number | undefined; next: number } {
  const files: GitFileChange[] = [];
  let lines: number | undefined;
  let i = at;
  while (i < tokens.length) {
    // Empty tokens end the format's fields; a diff begins after a newline.
    const token = tokens[i]!.replace(/^\n/, "");
    if (token === "") {
      i++;
      continue;
    }
    if (COMMIT_ID.test(token)) break;
    i++;
    const counts = token.startsWith(":") ? null : NUMSTAT.exec(token);
    if (counts) {
      lines = (lines ?? 0) + (counts[1] === "-" ? 0 : Number(counts[1])) + (counts[2] === "-" ? 0 : Number(counts[2]));
      if (counts[3] === "") i += 2; // a rename: its old and new paths follow
      continue;
    }
    const status = token.startsWith(":") ? token.slice(token.lastIndexOf(" ") + 1) : token;
    if (!NAME_STATUS.test(status)) throw unreadable(`a diff line ${JSON.stringify(token.slice(0, 80))}`);
    const change = CHANGE_KINDS[status[0]!] ?? "modified";
    const paths = change === "renamed" || change === "copied" ? 2 : 1;
    if (i + paths > tokens.length) throw unreadable("a file change without its path");
    files.push(
      paths === 2
        ? { change, path: tokens[i + 1]!, old_path: tokens[i]! }
        : { change, path: tokens[i]!, old_path: null },
    );
    i += paths;
  }
  return { files, lines, next: i };
}

/**
 * Parse `git log -z --format=LOG_FORMAT` output, bare, with `--name-status` or with
 * `--raw --numstat` (then each commit has `lines_changed`). Read by position: each commit is its
 * id and five more NUL-ended fields, then the diff's tokens until the next id. A commit whose `%ct`
 * is missing or outside `bounds` (the window git filtered by) is dated from `times`
 * (`filterTimes`), its other fields as git printed them (none, for an EBCDIC commit); without a
 * time there it is refused.
 */
export function parseGitLog(
  text: string,
  times: ReadonlyMap<string, string> = new Map(),
  bounds?: LogBounds,
): GitCommit[] {
  const { commits, undated: missing } = readGitLog(text, times, bounds);
  if (missing.length > 0) throw undated(missing[0]!);
  return commits;
}

/** `parseGitLog`'s reading: the commits, and the ids of those it could not date from `%ct` or `times`. */
function readGitLog(
  text: string,
  times: ReadonlyMap<string, string>,
  bounds: LogBounds | undefined,
): { commits: GitCommit[]; undated: string[] } {
  const tokens = text.split("\0");
  const commits: GitCommit[] = [];
  const missing: string[] = [];
  let i = 0;
  while (i < tokens.length) {
    if (tokens[i] === "") {
      i++;
      continue;
    }
    if (i + LOG_FIELDS > tokens.length) throw unreadable("a commit cut short");
    const [sha = "", parents = "", committed_at = "", author = "", subject = "", body = ""] = tokens.slice(
      i,
      i + LOG_FIELDS,
    );
    if (!COMMIT_ID.test(sha)) throw unreadable(`a commit id ${JSON.stringify(sha.slice(0, 80))}`);
    const { files, lines, next } = parseChanges(tokens, i + LOG_FIELDS);
    i = next;
    // No time printed (git could not decode the commit, and printed none of its text), or one
    // outside the window git filtered the commit into: the time git filtered it by.
    const time = printedTime(committed_at, bounds) ?? timeOf(times.get(sha) ?? "");
    if (time === null) {
      missing.push(sha);
      continue;
    }
    const parentList = parents.split(" ").filter(Boolean);
    commits.push({
      sha,
      parents: parentList,
      committed_at: time,
      author,
      subject,
      body: body.trim(),
      is_merge: parentList.length > 1,
      pr_number: prNumberOf(subject),
      files,
      ...(lines === undefined ? {} : { lines_changed: lines }),
    });
  }
  return { commits, undated: missing };
}

/**
 * `git log ARGS` filtered by `bounds`, in the form `parseGitLog` reads (`-z` and `LOG_FORMAT`,
 * which need each other): its commits, each dated within the bounds, or git's answer when it failed.
 */
export async function gitLog(
  repo: string,
  bounds: LogBounds,
  args: string[],
): Promise<{ commits: GitCommit[] } | { failed: GitResult }> {
  const res = await runGit(repo, ["log", "-z", "--no-color", `--format=${LOG_FORMAT}`, ...boundArgs(bounds), ...args]);
  if (res.code !== 0) return { failed: res };
  const text = res.stdout.toString("utf8");
  const first = readGitLog(text, new Map(), bounds);
  if (first.undated.length === 0) return { commits: first.commits };
  return { commits: parseGitLog(text, await filterTimes(repo, first.undated), bounds) };
}

/**
 * Commits of HEAD committed in (since, until], with their changed files (`-M`, so renames are one
 * change with the old path) and their lines added plus deleted (what a highlight says about a
 * change's size), in one `git log --raw --numstat`. A merge commit lists what it brought in (its
 * diff against the first parent), so a pull request's paths are known without one git call per merge.
 * `shallow`: also find whether the repository is a shallow clone cut after the window's start
 * (`shallowCuts`, one process more beside the log): for an answer about the window itself.
 */
export async function collectGit(
  repo: string,
  window: { since: Date; until: Date },
  { shallow = false }: { shallow?: boolean } = {},
): Promise<GitEvidence> {
  assertRepository(repo);
  const evidence: GitEvidence = {
    repo,
    since: window.since.toISOString(),
    until: window.until.toISOString(),
    commits: [],
  };
  const [log, cuts] = await Promise.all([
    gitLog(repo, window, [
      "--raw",
      "--numstat",
      "-M",
      // A committed .gitmodules may say `ignore = all`, which no config setting overrides.
      "--ignore-submodules=none",
      "--diff-merges=first-parent",
      "HEAD",
      "--",
    ]),
    shallow ? shallowCuts(repo) : [],
  ]);
  if ("failed" in log) {
    if (NO_HISTORY.test(log.failed.stderr)) return evidence;
    throw gitError(repo, "git log", log.failed);
  }
  // Commits behind a cut dated after the window's start may belong in the window (a commit is rarely
  // dated after its child), whether or not the cut itself lies in it.
  const reached = cuts.filter((c) => Date.parse(c.at) > window.since.getTime()).map((c) => c.at);
  if (reached.length > 0) evidence.shallow_cut_at = reached.sort().at(-1)!;
  // --since-as-filter is inclusive; the window is (since, until], so a commit exactly at `since` belongs to the previous window.
  evidence.commits = log.commits.filter((c) => Date.parse(c.committed_at) > window.since.getTime());
  // A commit that changed no file has no line counts: zero.
  for (const c of evidence.commits) c.lines_changed ??= 0;
  return evidence;
}

/**
 * Where a shallow clone's history was cut (`git clone --depth`, `--shallow-since`): the commits of
 * HEAD's history it holds without their parents, each with the time git filters it by. Empty for a
 * full history, which costs one process (`git rev-parse`, beside the log); a shallow clone's cut
 * costs two more.
 */
export async function shallowCuts(repo: string): Promise<Array<{ sha: string; at: string }>> {
  const res = await runGit(repo, ["rev-parse", "--is-shallow-repository", "--git-path", "shallow"]);
  if (res.code !== 0) throw gitError(repo, "git rev-parse", res);
  const [shallow, file] = res.stdout.toString("utf8").split("\n");
  if (shallow !== "true" || !file) return [];
  let listed: string[];
  try {
    // git's own file (the commits it fetched without their parents), relative to where git ran.
    listed = readFileSync(resolve(repo, file), "utf8")
      .split("\n")
      .filter((l) => COMMIT_ID.test(l));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return []; // unshallowed meanwhile
    throw new UnavailableError(
      "kai_git_unavailable",
      `cannot read git's list of shallow commits ${resolve(repo, file)}: ${(err as Error).message}`,
      { cause: err },
    );
  }
  // git lists a first commit too when the depth reached it: a cut is a commit whose object names parents.
  const cut = await withParents(repo, listed);
  // git lists the cuts of every ref it fetched shallow: only HEAD's tell of the answer's history
  // (one walk of it, which a shallow clone keeps short).
  const times = await filterTimes(repo, cut, { reachable: true });
  return cut.flatMap((sha) => {
    const at = timeOf(times.get(sha) ?? "");
    return at === null ? [] : [{ sha, at }];
  });
}

/** Those of `shas` whose commit objects name a parent (read raw: `cat-file` ignores what shallow hides). */
async function withParents(repo: string, shas: readonly string[]): Promise<string[]> {
  if (shas.length === 0) return [];
  const res = await runGit(repo, ["cat-file", "--batch"], `${shas.join("\n")}\n`);
  if (res.code !== 0) throw gitError(repo, "git cat-file", res);
  const out: string[] = [];
  const bytes = res.stdout;
  let at = 0;
  while (at < bytes.length) {
    const eol = bytes.indexOf(0x0a, at);
    if (eol === -1) break;
    const [sha, type, size] = bytes.toString("utf8", at, eol).split(" ");
    if (size === undefined) {
      at = eol + 1; // "<sha> missing"
      continue;
    }
    const body = bytes.subarray(eol + 1, eol + 1 + Number(size));
    // A commit's header: its tree line, then its parents' lines (git reads parents there only).
    const lines = body.toString("utf8", 0, Math.min(body.length, 2 * 80)).split("\n");
    if (type === "commit" && sha && lines[1]?.startsWith("parent ")) out.push(sha);
    at = eol + 1 + Number(size) + 1;
  }
  return out;
}

/** The last commit at or before `cutoff` that touched `path` (the commit its text at the cutoff comes from), or null. */
export async function lastChangeBefore(
  repo: string,
  cutoff: Date,
  path: string,
): Promise<{ sha: string; at: string } | null> {
  const res = await runGit(repo, [
    "log",
    "-1",
    "--format=%H %ct",
    `--until=${cutoff.toISOString()}`,
    "HEAD",
    "--",
    path,
  ]);
  if (res.code !== 0) {
    if (NO_HISTORY.test(res.stderr)) return null;
    throw gitError(repo, "git log", res);
  }
  const [sha, at] = res.stdout.toString("utf8").trim().split(" ");
  // A commit whose time git cannot print has its id and an empty time: dated as git filtered it.
  return sha ? { sha, at: await commitTime(repo, sha, at ?? "", { until: cutoff }) } : null;
}

/**
 * The new side of a one-file `git log -p` diff whose context is the whole file: its text, null when
 * the commit deleted the file, or undefined when the diff does not give it (no hunk: a merge, a
 * mode change alone, an empty file; binary content; anything unexpected).
 */
export function newSideOfDiff(diff: string): string | null | undefined {
  const lines = diff.split("\n");
  if (lines.at(-1) === "") lines.pop();
  const hunk = lines.findIndex((l) => l.startsWith("@@ "));
  if (hunk < 0) return undefined;
  const header = lines.slice(0, hunk);
  if (header.includes("+++ /dev/null")) return null;
  const m = /^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@/.exec(lines[hunk]!);
  if (!m) return undefined;
  const expected = m[2] === undefined ? 1 : Number(m[2]);
  // The whole file starts at its line 1 (line 0 when empty); any other hunk is a part of it.
  if (Number(m[1]) !== (expected === 0 ? 0 : 1)) return undefined;
  const out: string[] = [];
  let newSide = false;
  for (const line of lines.slice(hunk + 1)) {
    const mark = line[0];
    if (mark === "\\") {
      // "\ No newline at end of file" after a line of the new side: that line ends the file bare.
      if (newSide && out.length > 0) out[out.length - 1] = out.at(-1)!.slice(0, -1);
      continue;
    }
    // An empty line is an empty context line (diff.suppressBlankEmpty); another @@ would be a second hunk.
    if (mark === "@") return undefined;
    newSide = mark !== "-";
    if (newSide) out.push(`${line.slice(1)}\n`);
  }
  return out.length === expected ? out.join("") : undefined;
}

/**
 * The last commit at or before `cutoff` that touched `path`, with the file's text there (null when
 * that commit deleted it), or null when no commit touched it. One `git log -p` whose diff has the
 * whole file as context, so the text is the diff's new side; a commit whose diff does not give the
 * text (see `newSideOfDiff`) has it read with `git show`.
 */
export async function lastVersionBefore(
  repo: string,
  cutoff: Date,
  path: string,
): Promise<{ sha: string; at: string; text: string | null } | null> {
  const res = await runGit(repo, [
    "log",
    "-1",
    "-p",
    "--no-color",
    "--no-ext-diff",
    "--no-textconv",
    "--no-renames",
    `--unified=${2 ** 31 - 1}`,
    "--format=%H %ct",
    `--until=${cutoff.toISOString()}`,
    "HEAD",
    "--",
    path,
  ]);
  if (res.code !== 0) {
    if (NO_HISTORY.test(res.stderr)) return null;
    throw gitError(repo, "git log", res);
  }
  const out = res.stdout.toString("utf8");
  const eol = out.indexOf("\n");
  // The first line is the format's (the log's only commit); the patch follows it.
  const [sha, at] = out.slice(0, eol < 0 ? undefined : eol).split(" ");
  if (!sha) return null;
  const text = eol < 0 ? undefined : newSideOfDiff(out.slice(eol + 1));
  return {
    sha,
    at: await commitTime(repo, sha, at ?? "", { until: cutoff }),
    text: text === undefined ? await readAtRevision(repo, sha, path) : text,
  };
}

/** A file's text at a revision, or null when the file does not exist there (deleted by it). */
export async function readAtRevision(repo: string, revision: string, path: string): Promise<string | null> {
  const res = await runGit(repo, ["show", `${revision}:${path}`]);
  return res.code === 0 ? res.stdout.toString("utf8") : null;
}

/**
 * Whether `path` exists in the tree of the last commit at or before `cutoff`: two lookups, where
 * asking `git log -- path` about a path that never existed walks the whole history. `commit` is
 * that commit, null when there is none (no commit yet, or none that early).
 */
export async function existsAt(
  repo: string,
  cutoff: Date,
  path: string,
): Promise<{ commit: string | null; exists: boolean }> {
  const head = await runGit(repo, ["rev-list", "-1", `--until=${cutoff.toISOString()}`, "HEAD", "--"]);
  if (head.code !== 0 && !NO_HISTORY.test(head.stderr)) throw gitError(repo, "git rev-list", head);
  const sha = head.code === 0 ? head.stdout.toString("utf8").trim() : "";
  if (sha === "") return { commit: null, exists: false };
  return { commit: sha, exists: (await runGit(repo, ["cat-file", "-e", `${sha}:${path}`])).code === 0 };
}
