/**
 * What the agent changed in a git workspace during one attempt: files whose content differs from
 * before (uncommitted, or in commits it made) and the commits it made. Codex and the others
 * report edits made through their own edit tools, but not what a shell command wrote; git sees both.
 */
import { spawnSync } from "node:child_process";
import { isAbsolute, relative } from "node:path";
import { LATTICE_DIR } from "../protocol/index.js";

export interface GitSnapshot {
  head: string | null;
  /** Changed or untracked path → its content's object id (null: deleted). */
  files: Map<string, string | null>;
}

export type WorkspaceChange = { kind: "file"; path: string; ref: string } | { kind: "commit"; ref: string };

function git(cwd: string, args: string[]): string | null {
  const r = spawnSync("git", ["-c", "core.quotepath=off", ...args], {
    cwd,
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
  });
  return r.status === 0 ? r.stdout : null;
}

function statusPaths(cwd: string): string[] {
  const out = git(cwd, ["status", "--porcelain=v1", "-z", "--untracked-files=all"]);
  if (out === null) return [];
  const parts = out.split("\0");
  const paths: string[] = [];
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i]!;
    if (p.length < 4) continue;
    paths.push(p.slice(3));
    if (p[0] === "R" || p[0] === "C") i++; // the rename's source follows
  }
  return paths.filter((p) => p !== LATTICE_DIR && !p.startsWith(`${LATTICE_DIR}/`));
}

function objectIds(cwd: string, paths: string[]): Map<string, string | null> {
  const ids = new Map<string, string | null>();
  if (paths.length === 0) return ids;
  const r = spawnSync("git", ["hash-object", "--stdin-paths"], { cwd, input: paths.join("\n"), encoding: "utf8" });
  const hashes = r.status === 0 ? r.stdout.trim().split("\n") : [];
  // A deleted path makes the whole call fail: then one at a time.
  if (hashes.length === paths.length) paths.forEach((p, i) => ids.set(p, hashes[i]!));
  else for (const p of paths) ids.set(p, git(cwd, ["hash-object", "--", p])?.trim() ?? null);
  return ids;
}

/** The workspace's state before the agent runs; null outside a git repository. */
export function gitSnapshot(workspace: string): GitSnapshot | null {
  if (git(workspace, ["rev-parse", "--is-inside-work-tree"])?.trim() !== "true") return null;
  const head = git(workspace, ["rev-parse", "--verify", "-q", "HEAD"])?.trim() || null;
  return { head, files: objectIds(workspace, statusPaths(workspace)) };
}

/** Files and commits changed since `before`, plus the paths the agent's own items reported. */
export function changedSince(
  workspace: string,
  before: GitSnapshot | null,
  reported: Iterable<string>,
): WorkspaceChange[] {
  const files = new Set<string>();
  for (const p of reported) {
    const rel = isAbsolute(p) ? relative(workspace, p) : p;
    if (!rel.startsWith("..") && !rel.startsWith(`${LATTICE_DIR}/`)) files.add(rel);
  }
  const commits: string[] = [];
  if (before) {
    const now = statusPaths(workspace);
    const ids = objectIds(workspace, now);
    for (const p of now) if (!before.files.has(p) || before.files.get(p) !== ids.get(p)) files.add(p);
    const head = git(workspace, ["rev-parse", "--verify", "-q", "HEAD"])?.trim() || null;
    if (head && head !== before.head) {
      const range = before.head ? [`${before.head}..${head}`] : [head];
      commits.push(
        ...(git(workspace, ["rev-list", "--reverse", ...range])
          ?.trim()
          .split("\n")
          .filter(Boolean) ?? []),
      );
      const names = before.head
        ? git(workspace, ["diff", "--name-only", "-z", before.head, head])
        : git(workspace, ["ls-tree", "-r", "--name-only", "-z", head]);
      for (const p of names?.split("\0").filter(Boolean) ?? []) if (!p.startsWith(`${LATTICE_DIR}/`)) files.add(p);
    }
  }
  // Repository-relative: the path the next role (and a pull request) knows the file by.
  return [
    ...[...files].sort().map((path) => ({ kind: "file" as const, path, ref: path })),
    ...commits.map((ref) => ({ kind: "commit" as const, ref })),
  ];
}
