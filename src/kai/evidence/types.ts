/**
 * What the collectors hand to the report builders: plain data, already cut at the request's
 * cutoff (`as_of`, or now). The builders never read a repository or a database themselves, so a
 * collector can be added or replaced without touching them.
 */

import type { ModelUsage } from "../../lattice/runs/index.js";

/** The time span evidence is read for: (since, until], until being the cutoff (`as_of` or now). */
export interface EvidenceWindow {
  since: Date;
  until: Date;
}

export type FileChangeKind = "added" | "modified" | "deleted" | "renamed" | "copied" | "type_changed";

export interface GitFileChange {
  change: FileChangeKind;
  path: string;
  /** The path before a rename or copy. */
  old_path: string | null;
}

export interface GitCommit {
  sha: string;
  parents: string[];
  committed_at: string;
  author: string;
  subject: string;
  body: string;
  is_merge: boolean;
  /** From `Merge pull request #N …` or a squash subject ending in `(#N)`. */
  pr_number: number | null;
  /** A merge's files are its changes against its first parent: what the merged branch brought in. */
  files: GitFileChange[];
  /** Lines added plus lines deleted (`--numstat`; binary files count 0); absent when not read. */
  lines_changed?: number;
}

export interface GitEvidence {
  repo: string;
  since: string;
  until: string;
  /** Newest first, as `git log` gives them. */
  commits: GitCommit[];
  /**
   * The repository is a shallow clone cut at a commit dated after the window's start (the newest
   * such time): commits behind the cut, not here, may belong in the window.
   */
  shallow_cut_at?: string;
}

export interface StateSection {
  level: number;
  title: string;
  /** GitHub-style anchor, without the `#`. */
  anchor: string;
  /** 1-based line of the heading. */
  line: number;
  /** The section's own text up to the next heading of any level. */
  body: string;
  /** Index of the enclosing section, or null at the top. */
  parent: number | null;
}

export interface StateDocEvidence {
  path: string;
  exists: boolean;
  /** The commit the text was read from: the last one up to the cutoff that touched the file. */
  revision: string | null;
  /** When the document last changed (committer date of the last commit touching it). */
  updated_at: string | null;
  sections: StateSection[];
}

export interface BoardEntryEvidence {
  id: string;
  from: string;
  to: string;
  kind: string;
  /** The status the entry had at the cutoff. */
  status: string;
  created_at: string;
  /** The last change at or before the cutoff. */
  updated_at: string;
  source_issue: number | null;
  source_comment_id: string | null;
  source_run_id: string | null;
  summary: string;
  refs: Record<string, unknown>;
  target_docs: string[];
  /** `payload.details` (the origin's roles name their files there: `proposal_path`, `review_path`). */
  details?: Record<string, unknown>;
  /** The entry's top-level `payload_ref` as the origin writes it (`{kind: "path", value}`, `{type: "actions_artifact", workflow_run_id, artifact_name}`). */
  payload_ref?: unknown;
  /** On a lane's root entry read by `collectLaneBoard`: its cycle's number (its place among the lane's roots, oldest first). */
  cycle?: number;
}

export type RunState = "queued" | "running" | "waiting" | "succeeded" | "failed" | "canceled";

/** A supervisor run as Kai needs it (the lattice module adapts its run records to this). */
export interface RunEvidence {
  run_id: string;
  role: string;
  entry_id: string;
  state: RunState;
  started_at: string;
  finished_at: string | null;
  waiting: { checkpoint: string; expected_inputs: Record<string, string>; since: string } | null;
  /** ARTIFACT events: `path` is the artifact's metadata.path, else its ref, else its url. */
  artifacts: Array<{ path: string; kind?: string }>;
  /**
   * ACTION_REQUESTs and how they stood at the cutoff. An OPEN_PR that had succeeded carries the pull
   * request: its number and URL, its title, and (local forge) its state.
   */
  actions: Array<{
    id: string;
    type: string;
    status: string;
    pr_number: number | null;
    url: string | null;
    title?: string | null;
    pr_state?: "open" | "closed" | "merged" | null;
  }>;
  events: number;
  /** Tokens the run reported, per model (absent: not read). */
  usage?: ModelUsage[];
  /** The run's lane cycle branch: the commit it handed on, the cycle's pull request, the base commit its approval merged. */
  cycle?: { branch: string; commit: string | null; pull_request: number | null; merged: string | null } | null;
  environment_proposals: Array<{
    id: string;
    status: "pending" | "accepted" | "rejected";
    summary: string;
    count: number;
  }>;
}

export interface GithubIssue {
  number: number;
  title: string;
  state: "open" | "closed";
  url: string;
  created_at: string;
  updated_at: string;
  closed_at: string | null;
  labels: string[];
}

export interface GithubPull {
  number: number;
  title: string;
  state: "open" | "closed";
  merged_at: string | null;
  url: string;
  created_at: string;
  updated_at: string;
  closed_at: string | null;
  head: string;
}

export interface GithubWorkflowRun {
  id: string;
  name: string;
  path: string;
  status: string;
  conclusion: string | null;
  url: string;
  created_at: string;
  updated_at: string;
}

export interface GithubEvidence {
  repo: string;
  issues: GithubIssue[];
  pulls: GithubPull[];
  workflow_runs: GithubWorkflowRun[];
}

export interface KaiEvidence {
  git: GitEvidence | null;
  state_doc: StateDocEvidence | null;
  board: BoardEntryEvidence[] | null;
  runs: RunEvidence[] | null;
  github: GithubEvidence | null;
  /** The STATE document as it was at the window's start (what_changed compares its sections). */
  state_doc_before?: StateDocEvidence | null;
  /** The lane's cycles as git and the STATE document record them (applies merged to STATE). */
  repo_cycles?: RepoCycle[] | null;
  /** Commit messages up to the cutoff that name a cycle (`cycle-1`), for cycles named as the project names them. */
  cycle_mentions?: CycleMention[] | null;
  /** The repository's web address on GitHub (`https://github.com/owner/name`), for evidence URLs; null when unknown. */
  web_url?: string | null;
  /** Caveats from collecting (a source not configured, a source that failed), for `notes`. */
  notes: string[];
}

/** Category of a changed path, by prefix. */
export function pathCategory(path: string): "state_doc" | "docs" | "reports" | "workflow" | "code" {
  if (path.startsWith("STATE/")) return "state_doc";
  if (path.startsWith("docs/")) return "docs";
  if (path.startsWith("reports/")) return "reports";
  if (path.startsWith(".github/workflows/")) return "workflow";
  return "code";
}

/**
 * A cycle of a lane found in the repository rather than on the blackboard: a merged pull request
 * (or commit) that applied the lane's proposal to the STATE document, or a cycle the STATE
 * document's lane section says is completed.
 */
export interface RepoCycle {
  /** `cycle-N`: the number the PR or the STATE section gives, else the apply's rank, oldest first. */
  id: string;
  status: "completed";
  /** The earliest commit naming the cycle, else the apply itself. */
  started_at: string;
  /** The apply's commit time; null for a cycle known only from the STATE section's text. */
  completed_at: string | null;
  found_in: "git" | "state_doc";
  /** The commit that applied it (absent for one known only from the STATE section). */
  apply: GitCommit | null;
  /** The STATE document's path and the anchor of the lane section naming the cycle. */
  state_path: string;
}

/** A commit (a squash-merged PR, usually) whose message names a cycle of the project's own numbering. */
export interface CycleMention {
  pr_number: number | null;
  /** Subject and body. */
  text: string;
  committed_at: string;
}
