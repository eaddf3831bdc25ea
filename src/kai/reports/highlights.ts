import { plural } from "../../core/index.js";
import type { LaneConfig } from "../../config/index.js";
import { pathCategory, type GitCommit, type StateDocEvidence, type StateSection, subtree, isLaneApply, laneSectionIndex } from "../evidence/index.js";
import type { Evidence, Highlight } from "./schema.js";

/** A highlight before ranking: `impact` is what it changes for the lane (higher first). */
export type Candidate = Omit<Highlight, "rank"> & { impact: number; at: string };

/**
 * Significance of what a window's changes did, highest first. A cycle's completion moves the lane;
 * a change to the lane's STATE section changes what everyone reads; a capability built across
 * several PRs, reverts, new workflows and specs follow; a PR that only touches a workflow is noise.
 */
export const IMPACT = {
  cycle_completed: 100,
  state_lane_section: 90,
  capability: 80,
  revert: 70,
  state_other_sections: 60,
  new_workflow: 55,
  new_spec: 50,
  workflow_changed: 30,
  single_pr: 20,
} as const;

/** One merged change: a PR (squash or merge commit) or a direct commit, with what it touched. */
export interface ChangeUnit {
  pr: number | null;
  title: string;
  body: string;
  commit: GitCommit;
  at: string;
}

const CONVENTIONAL = new Set(["feat", "fix", "chore", "docs", "ci", "refactor", "test", "perf", "build", "style"]);
const CYCLE = /\bcycle[-_ ]?(\d+)\b/i;

/** The merged changes of the window, newest first: merge commits stand for their branch's commits. */
export function changeUnits(commits: GitCommit[]): ChangeUnit[] {
  const merged = new Set(commits.filter((c) => c.is_merge).flatMap((c) => c.parents.slice(1)));
  return commits
    .filter((c) => c.is_merge || !merged.has(c.sha))
    .map((c) => {
      const [head = "", ...rest] = c.is_merge ? c.body.split("\n") : [c.subject];
      // GitHub writes a merge's PR title as the first line of its body; a squash keeps it in the subject.
      const title = (c.is_merge ? head || c.subject : c.subject).replace(/\s*\(#\d+\)\s*$/, "");
      return { pr: c.pr_number, title, body: (c.is_merge ? rest.join("\n") : c.body).trim(), commit: c, at: c.committed_at };
    });
}

const ref = (u: ChangeUnit) => (u.pr !== null ? `PR #${u.pr}` : `commit ${u.commit.sha.slice(0, 7)}`);
export function unitEvidence(u: ChangeUnit): Evidence {
  return u.pr !== null ? { type: "pr", id: String(u.pr), title: u.title, at: u.at } : { type: "commit", id: u.commit.sha, title: u.title, at: u.at };
}

/** The first sentence of a PR body or commit message (its "why"), without Markdown markup; "" when there is none. */
export function firstSentence(text: string, max = 220): string {
  const line = text
    .split("\n")
    .map((l) => l.replace(/^\s*(?:[-*+]|#+|\d+\.)\s*/, "").trim())
    .find((l) => l !== "" && !/^(?:co-authored-by|signed-off-by):/i.test(l));
  if (!line) return "";
  const sentence = (/^(.+?[.!?])(?:\s|$)/.exec(line)?.[1] ?? line).trim();
  const cut = sentence.length > max ? `${sentence.slice(0, max - 1).trimEnd()}…` : sentence;
  return /[.!?…]$/.test(cut) ? cut : `${cut}.`;
}

/** Scope of a PR title: `feat(kai): …` → kai, `kai: …` → kai, else null (no group). */
export function titleScope(title: string): string | null {
  const m = /^([A-Za-z][\w.-]*)(?:\(([\w./-]+)\))?!?:\s/.exec(title);
  if (!m) return null;
  const type = m[1]!.toLowerCase();
  if (m[2]) return m[2].toLowerCase();
  return CONVENTIONAL.has(type) ? null : type;
}

/** Sections whose text differs between two versions of a document (added, removed or changed), by title. */
export function changedSections(before: StateSection[], after: StateSection[]): Array<{ title: string; anchor: string; change: "added" | "removed" | "changed"; index: number | null }> {
  const key = (s: StateSection) => `${s.level}\0${s.title}`;
  const old = new Map(before.map((s) => [key(s), s]));
  const out: Array<{ title: string; anchor: string; change: "added" | "removed" | "changed"; index: number | null }> = [];
  after.forEach((s, index) => {
    const prev = old.get(key(s));
    if (!prev) out.push({ title: s.title, anchor: s.anchor, change: "added", index });
    else if (prev.body.trim() !== s.body.trim()) out.push({ title: s.title, anchor: s.anchor, change: "changed", index });
    old.delete(key(s));
  });
  for (const s of old.values()) out.push({ title: s.title, anchor: s.anchor, change: "removed", index: null });
  return out;
}

export interface GitHighlightContext {
  lane: LaneConfig;
  /** The lane's STATE document at the window's end and start. */
  state: StateDocEvidence | null;
  stateBefore: StateDocEvidence | null;
  /** Cycle ids the blackboard already reports as completed in the window (not repeated). */
  boardCompleted: Set<string>;
}

/**
 * Highlights from the window's merged changes, grouped: a cycle's proposal, review and apply PRs
 * are one; PRs sharing a title scope are one capability; the STATE sections the window changed
 * are one; workflows and specs added are one each. Every unit lands in at most one group.
 */
export function gitCandidates(units: ChangeUnit[], ctx: GitHighlightContext): { candidates: Candidate[]; used: Set<ChangeUnit> } {
  const lane = `${ctx.lane.layer}/${ctx.lane.name}`;
  const statePath = ctx.state?.path ?? null;
  const out: Candidate[] = [];
  const used = new Set<ChangeUnit>();
  const touches = (u: ChangeUnit, test: (path: string) => boolean) => u.commit.files.some((f) => test(f.path));
  const oldestFirst = [...units].reverse();

  // A cycle applied to STATE by a merged PR, with the PRs naming the same cycle (its proposal, review).
  for (const apply of oldestFirst.filter((u) => statePath !== null && touches(u, (p) => p === statePath) && isLaneApply(`${u.title}\n${u.body}`, ctx.lane))) {
    if (used.has(apply)) continue;
    const n = CYCLE.exec(`${apply.title}\n${apply.body}`)?.[1];
    const id = n !== undefined ? `cycle-${n}` : null;
    if (id !== null && ctx.boardCompleted.has(id)) continue;
    const related = id === null ? [] : oldestFirst.filter((u) => u !== apply && !used.has(u) && CYCLE.exec(`${u.title}\n${u.body}`)?.[1] === n);
    for (const u of [apply, ...related]) used.add(u);
    const before = related.length > 0 ? ` It followed ${related.map((u) => `${ref(u)} (${u.title})`).join(", ")}.` : "";
    const why = firstSentence(apply.body);
    out.push({
      impact: IMPACT.cycle_completed,
      at: apply.at,
      category: ctx.lane.layer,
      title: `${lane} ${id ?? "cycle"} completed: applied to STATE by ${ref(apply)}`,
      summary: `${ref(apply)} "${apply.title}" applied the lane's proposal to ${statePath}, completing ${id ?? "a cycle"}.${before}${why ? ` ${why}` : ""}`,
      evidence: [...[...related, apply].map(unitEvidence), { type: "file", id: statePath!, path: statePath! }],
    });
  }

  // The STATE sections this window changed: the lane's own section first.
  if (ctx.state?.exists && statePath !== null) {
    const changed = changedSections(ctx.stateBefore?.exists ? ctx.stateBefore.sections : [], ctx.state.sections);
    const laneIndex = laneSectionIndex(ctx.state.sections, ctx.lane);
    const laneScope = new Set(laneIndex === null ? [] : subtree(ctx.state.sections, laneIndex));
    const byPr = units.filter((u) => touches(u, (p) => p === statePath));
    if (changed.length > 0 && byPr.length > 0) {
      const inLane = changed.filter((c) => c.index !== null && laneScope.has(c.index));
      const names = changed.slice(0, 4).map((c) => `${c.title} (${c.change})`).join(", ") + (changed.length > 4 ? `, and ${changed.length - 4} more` : "");
      const section = laneIndex === null ? null : ctx.state.sections[laneIndex]!;
      const now = section ? firstSentence(subtree(ctx.state.sections, laneIndex!).map((i) => ctx.state!.sections[i]!.body).join("\n")) : "";
      out.push({
        impact: inLane.length > 0 ? IMPACT.state_lane_section : IMPACT.state_other_sections,
        at: byPr[0]!.at,
        category: "state_doc",
        title: inLane.length > 0 ? `STATE: the ${section!.title} section changed` : `STATE: ${plural(changed.length, "section")} changed`,
        summary: `${plural(byPr.length, "change")} (${byPr.slice(0, 4).map(ref).join(", ")}) edited ${statePath}: ${names}.${now ? ` The lane section now reads: ${now}` : ""}`,
        evidence: [{ type: "file", id: statePath, path: section ? `${statePath}#${section.anchor}` : statePath }, ...byPr.slice(0, 5).map(unitEvidence)],
      });
    }
  }

  // A capability built across several PRs: the same title scope, at least one adding files.
  const groups = new Map<string, ChangeUnit[]>();
  for (const u of oldestFirst) {
    const scope = used.has(u) ? null : titleScope(u.title);
    if (scope !== null) groups.set(scope, [...(groups.get(scope) ?? []), u]);
  }
  for (const [scope, list] of groups) {
    const adds = list.some((u) => u.commit.files.some((f) => f.change === "added" && pathCategory(f.path) !== "workflow"));
    if (list.length < 3 || !adds) continue;
    for (const u of list) used.add(u);
    const first = list[0]!;
    const last = list.at(-1)!;
    const why = firstSentence(first.body);
    out.push({
      impact: IMPACT.capability + Math.min(list.length, 8),
      at: last.at,
      category: "capability",
      title: `${scope}: ${first.title.replace(/^[^:]*:\s*/, "")} (${plural(list.length, "PR")})`,
      summary: `${plural(list.length, "change")} built ${scope}, from ${ref(first)} "${first.title}" to ${ref(last)} "${last.title}".${why ? ` ${why}` : ""}`,
      evidence: list.map(unitEvidence),
    });
  }

  // Reverts undo something the team relied on.
  for (const u of units.filter((u) => !used.has(u) && /^revert\b/i.test(u.title))) {
    used.add(u);
    out.push({ impact: IMPACT.revert, at: u.at, category: "revert", title: `Reverted: ${u.title.replace(/^revert:?\s*/i, "").replace(/^"|"$/g, "")}`, summary: `${ref(u)} reverted an earlier change.${firstSentence(u.body) ? ` ${firstSentence(u.body)}` : ""}`, evidence: [unitEvidence(u)] });
  }

  // Workflows added (a new automation) and specs added.
  const added = (u: ChangeUnit, test: (p: string) => boolean) => u.commit.files.filter((f) => f.change === "added" && test(f.path)).map((f) => f.path);
  const isWorkflow = (p: string) => pathCategory(p) === "workflow";
  const isSpec = (p: string) => /(^|\/)specs?(\/|[-_.])/i.test(p) && !isWorkflow(p);
  for (const [test, impact, label, category] of [[isWorkflow, IMPACT.new_workflow, "New workflow", "workflow"], [isSpec, IMPACT.new_spec, "New spec", "docs"]] as const) {
    const list = units.filter((u) => !used.has(u) && added(u, test).length > 0);
    if (list.length === 0) continue;
    for (const u of list) used.add(u);
    const paths = list.flatMap((u) => added(u, test));
    out.push({
      impact,
      at: list[0]!.at,
      category,
      title: `${label}${paths.length > 1 ? "s" : ""}: ${paths.slice(0, 3).join(", ")}${paths.length > 3 ? ", …" : ""}`,
      summary: `${list.map((u) => `${ref(u)} "${u.title}"`).join("; ")} added ${paths.length > 1 ? "them" : "it"}.${firstSentence(list[0]!.body) ? ` ${firstSentence(list[0]!.body)}` : ""}`,
      evidence: [...paths.slice(0, 5).map((p): Evidence => ({ type: "file", id: p, path: p })), ...list.slice(0, 5).map(unitEvidence)],
    });
  }

  // Changes to existing workflows: one line for all of them, low.
  const wf = units.filter((u) => !used.has(u) && touches(u, isWorkflow));
  if (wf.length > 0) {
    for (const u of wf) used.add(u);
    const files = [...new Set(wf.flatMap((u) => u.commit.files.filter((f) => isWorkflow(f.path)).map((f) => f.path)))].sort();
    out.push({
      impact: IMPACT.workflow_changed,
      at: wf[0]!.at,
      category: "workflow",
      title: `Workflows changed: ${files.slice(0, 3).join(", ")}${files.length > 3 ? ", …" : ""}`,
      summary: `${plural(wf.length, "change")} edited ${plural(files.length, "workflow")}; the latest was ${ref(wf[0]!)} "${wf[0]!.title}".`,
      evidence: [...files.slice(0, 5).map((p): Evidence => ({ type: "file", id: p, path: p })), ...wf.slice(0, 3).map(unitEvidence)],
    });
  }
  return { candidates: out, used };
}
