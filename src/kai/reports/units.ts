import type { GitCommit } from "../evidence/index.js";
import type { Evidence } from "./schema.js";

// The window's merged changes as highlights read them: one unit per PR, with its title, body and files.

/** One merged change: a PR (squash or merge commit) or a direct commit, with what it touched. */
export interface ChangeUnit {
  pr: number | null;
  title: string;
  body: string;
  commit: GitCommit;
  at: string;
}

const CONVENTIONAL = new Set(["feat", "fix", "chore", "docs", "ci", "refactor", "test", "perf", "build", "style"]);

/** The merged changes of the window, newest first: merge commits stand for their branch's commits. */
export function changeUnits(commits: GitCommit[]): ChangeUnit[] {
  const merged = new Set(commits.filter((c) => c.is_merge).flatMap((c) => c.parents.slice(1)));
  return commits
    .filter((c) => c.is_merge || !merged.has(c.sha))
    .map((c) => {
      const [head = "", ...rest] = c.is_merge ? c.body.split("\n") : [c.subject];
      // GitHub writes a merge's PR title as the first line of its body; a squash keeps it in the subject.
      const title = (c.is_merge ? head || c.subject : c.subject).replace(/\s*\(#\d+\)\s*$/, "");
      return {
        pr: c.pr_number,
        title,
        body: (c.is_merge ? rest.join("\n") : c.body).trim(),
        commit: c,
        at: c.committed_at,
      };
    });
}

export const ref = (u: ChangeUnit) => (u.pr !== null ? `PR #${u.pr}` : `commit ${u.commit.sha.slice(0, 7)}`);
export function unitEvidence(u: ChangeUnit): Evidence {
  return u.pr !== null
    ? { type: "pr", id: String(u.pr), title: u.title, at: u.at }
    : { type: "commit", id: u.commit.sha, title: u.title, at: u.at };
}

/** The first sentence of a PR body or commit message (its "why"), without Markdown markup; "" when there is none. */
export function firstSentence(text: string, max = 220): string {
  const line = text
    .split("\n")
    .map((l) => l.replace(/^\s*(?:[-*+]|#+|\d+\.)\s*/, "").trim())
    .find((l) => l !== "" && !/^(?:co-authored-by|signed-off-by):/i.test(l));
  if (!line) return "";
  // A Japanese sentence ends at 。 with no space after it.
  const sentence = (/^(.+?(?:[.!?](?=\s|$)|。))/.exec(line)?.[1] ?? line).trim();
  const cut = sentence.length > max ? `${sentence.slice(0, max - 1).trimEnd()}…` : sentence;
  return /[.!?…。]$/.test(cut) ? cut : `${cut}.`;
}

/** Scope of a PR title: `feat(kai): …` → kai, `kai: …` → kai, else null (no group). */
export function titleScope(title: string): string | null {
  const m = /^([A-Za-z][\w.-]*)(?:\(([\w./-]+)\))?!?:\s/.exec(title);
  if (!m) return null;
  const type = m[1]!.toLowerCase();
  if (m[2]) return m[2].toLowerCase();
  return CONVENTIONAL.has(type) ? null : type;
}
