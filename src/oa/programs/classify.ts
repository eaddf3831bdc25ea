/**
 * Deterministic reading of a proposed action: which action category of the mode table it is, and
 * which `no_*` constraints of the OA context it would break.
 */
import type { ActionCategory } from "../kernel.js";

const PATTERNS: Array<[ActionCategory, RegExp]> = [
  [
    "phase_transitions",
    /\b(phase transitions?|transition to phase|advance (?:to )?phase|move to phase|close (?:out )?phase|start phase|enter phase)\b/,
  ],
  ["migrations", /\b(migrat\w*|schema changes?|alter table|drop table|backfill\w*)\b/],
  [
    "remediation",
    /\b(fix\w*|repair\w*|remediat\w*|restor\w*|resolv\w*|revert\w*|re ?sync\w*|regenerat\w*|roll ?back)\b/,
  ],
  [
    "diagnostic",
    /\b(diagnos\w*|inspect\w*|investigat\w*|check|checks|checking|status|read|show|list|audit\w*|verify|guard|snapshot)\b/,
  ],
  ["ops_blocks", /\b(ops ?blocks?|ops mode|run ops)\b/],
  [
    "feature_work",
    /\b(implement\w*|add|adds|adding|build\w*|creat\w*|feature\w*|write|writes|writing|develop\w*|refactor\w*|introduc\w*|updat\w*|edit\w*|chang\w*|apply|propos\w*|docs?|documentation)\b/,
  ],
];

/** Lower-case words only: `doc_update_proposal_request` reads as "doc update proposal request". */
export function normalizeAction(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9.]+/g, " ")
    .trim();
}

/**
 * Migrations and phase transitions anywhere in the text decide (they are the risky ones);
 * otherwise the earliest keyword decides: "fix the docs" is remediation, "implement a status
 * page" is feature work. null when nothing matches.
 */
export function classifyAction(text: string): ActionCategory | null {
  const t = normalizeAction(text);
  for (const [category, re] of PATTERNS.slice(0, 2)) if (re.test(t)) return category;
  let best: { category: ActionCategory; at: number } | null = null;
  for (const [category, re] of PATTERNS.slice(2)) {
    const m = re.exec(t);
    if (m && (best === null || m.index < best.at)) best = { category, at: m.index };
  }
  return best?.category ?? null;
}

const SYNONYMS: Record<string, string[]> = {
  db: ["db", "database", "sql", "table", "migrat", "postgres", "sqlite"],
  database: ["db", "database", "sql", "table", "migrat", "postgres", "sqlite"],
  write: ["write", "insert", "updat", "delet", "drop", "alter", "migrat", "modif", "backfill"],
  git: ["git", "push", "commit", "merge", "rebase", "branch", "pr", "pull request"],
  push: ["push"],
  network: ["network", "http", "fetch", "download", "upload", "curl", "api"],
  deploy: ["deploy", "release", "publish", "ship"],
  delete: ["delet", "remov", "drop", "rm"],
};

function stem(word: string): string {
  return word.length > 3 && word.endsWith("s") ? word.slice(0, -1) : word;
}

/** `no_db_writes`-style constraints: broken when every word (or a synonym) occurs in the action. */
export function checkConstraints(
  action: string,
  constraints: readonly string[],
): { violated: string[]; unchecked: string[] } {
  const words = normalizeAction(action).split(" ");
  const has = (prefix: string) =>
    prefix.includes(" ") ? words.join(" ").includes(prefix) : words.some((w) => w.startsWith(prefix));
  const violated: string[] = [];
  const unchecked: string[] = [];
  for (const constraint of constraints) {
    const m = /^no[_\s-]+(.+)$/i.exec(constraint.trim());
    if (!m) {
      unchecked.push(constraint);
      continue;
    }
    const terms = normalizeAction(m[1]!).split(" ").filter(Boolean).map(stem);
    if (terms.length > 0 && terms.every((term) => (SYNONYMS[term] ?? [term]).some(has))) violated.push(constraint);
  }
  return { violated, unchecked };
}
