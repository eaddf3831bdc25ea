import { plural } from "../../core/index.js";
import type { LaneConfig } from "../../config/light/index.js";
import { type StateDocEvidence, type StateSection, subtree, isLaneApply, laneSectionIndex } from "../evidence/index.js";
import type { Highlight } from "./schema.js";
import { findThemes, themeHighlight } from "./themes.js";
import { firstSentence, ref, unitEvidence, type ChangeUnit } from "./units.js";

/** A highlight before ranking: `impact` is what it changes for the lane (higher first). */
export type Candidate = Omit<Highlight, "rank"> & { impact: number; at: string };

/**
 * Significance of what a window's changes did, highest first. A cycle's completion moves the lane;
 * a change to the lane's STATE section changes what everyone reads; themes (themes.ts) score
 * themselves between 6 and 98 by what they did; a PR in no theme is background.
 */
export const IMPACT = {
  cycle_completed: 100,
  state_lane_section: 78,
  revert: 70,
  state_other_sections: 60,
  single_pr: 20,
} as const;

const CYCLE = /\bcycle[-_ ]?(\d+)\b/i;

/** Sections whose text differs between two versions of a document (added, removed or changed), by title. */
export function changedSections(
  before: StateSection[],
  after: StateSection[],
): Array<{ title: string; anchor: string; change: "added" | "removed" | "changed"; index: number | null }> {
  const key = (s: StateSection) => `${s.level}\0${s.title}`;
  const old = new Map(before.map((s) => [key(s), s]));
  const out: Array<{ title: string; anchor: string; change: "added" | "removed" | "changed"; index: number | null }> =
    [];
  after.forEach((s, index) => {
    const prev = old.get(key(s));
    if (!prev) out.push({ title: s.title, anchor: s.anchor, change: "added", index });
    else if (prev.body.trim() !== s.body.trim())
      out.push({ title: s.title, anchor: s.anchor, change: "changed", index });
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

/** `A`, `A and B`, `A, B and C`. */
export function listText(items: string[]): string {
  return items.length <= 1 ? (items[0] ?? "") : `${items.slice(0, -1).join(", ")} and ${items.at(-1)}`;
}

/**
 * The cycles applied to STATE by merged PRs, each with the PRs naming the same cycle (its proposal,
 * review): one highlight however many cycles the window completed.
 */
function cycleCandidate(units: ChangeUnit[], ctx: GitHighlightContext, used: Set<ChangeUnit>): Candidate | null {
  const statePath = ctx.state?.path ?? null;
  if (statePath === null) return null;
  const lane = `${ctx.lane.layer}/${ctx.lane.name}`;
  const oldestFirst = [...units].reverse();
  const cycles: Array<{ id: string | null; apply: ChangeUnit; related: ChangeUnit[] }> = [];
  for (const apply of oldestFirst.filter(
    (u) => u.commit.files.some((f) => f.path === statePath) && isLaneApply(`${u.title}\n${u.body}`, ctx.lane),
  )) {
    if (used.has(apply)) continue;
    const n = CYCLE.exec(`${apply.title}\n${apply.body}`)?.[1];
    const id = n !== undefined ? `cycle-${n}` : null;
    if (id !== null && ctx.boardCompleted.has(id)) continue;
    const related =
      id === null
        ? []
        : oldestFirst.filter((u) => u !== apply && !used.has(u) && CYCLE.exec(`${u.title}\n${u.body}`)?.[1] === n);
    for (const u of [apply, ...related]) used.add(u);
    cycles.push({ id, apply, related });
  }
  if (cycles.length === 0) return null;
  const latest = cycles.at(-1)!;
  // The lane's own section of STATE is what the applies changed: the evidence points into it.
  const laneIndex = ctx.state ? laneSectionIndex(ctx.state.sections, ctx.lane) : null;
  const sectionPath = laneIndex === null ? statePath : `${statePath}#${ctx.state!.sections[laneIndex]!.anchor}`;
  const evidence = [
    ...cycles.flatMap((c) => [...c.related, c.apply].map(unitEvidence)),
    { type: "file", id: statePath, path: sectionPath } as const,
  ];
  if (cycles.length === 1) {
    const { id, apply, related } = latest;
    const before = related.length > 0 ? ` It followed ${related.map((u) => `${ref(u)} (${u.title})`).join(", ")}.` : "";
    const why = firstSentence(apply.body);
    return {
      impact: IMPACT.cycle_completed,
      at: apply.at,
      category: ctx.lane.layer,
      title: `${lane} ${id ?? "cycle"} completed: applied to STATE by ${ref(apply)}`,
      summary: `${ref(apply)} "${apply.title}" applied the lane's proposal to ${statePath}, completing ${id ?? "a cycle"}.${before}${why ? ` ${why}` : ""}`,
      evidence,
    };
  }
  const names = cycles.map((c) => c.id ?? `a cycle (${ref(c.apply)})`);
  const others = cycles.reduce((n, c) => n + c.related.length, 0);
  const why = firstSentence(latest.apply.body);
  return {
    impact: IMPACT.cycle_completed + Math.min(cycles.length, 9),
    at: latest.apply.at,
    category: ctx.lane.layer,
    title: `${lane}: ${cycles.length} cycles completed (${listText(names)})`,
    summary:
      `${listText(cycles.map((c) => `${ref(c.apply)} applied ${c.id ?? "a cycle"}`))} to ${statePath}.` +
      `${others > 0 ? ` ${plural(others, "more change")} proposed and reviewed them.` : ""}${why ? ` The latest: ${why}` : ""}`,
    evidence,
  };
}

/** The STATE sections this window changed, by changes in no cycle: the lane's own section first. */
function stateCandidate(
  units: ChangeUnit[],
  ctx: GitHighlightContext,
  used: Set<ChangeUnit>,
  cyclesApplied: boolean,
): Candidate | null {
  const statePath = ctx.state?.path ?? null;
  if (!ctx.state?.exists || statePath === null) return null;
  const byPr = units.filter((u) => !used.has(u) && u.commit.files.some((f) => f.path === statePath));
  let changed = changedSections(ctx.stateBefore?.exists ? ctx.stateBefore.sections : [], ctx.state.sections);
  if (changed.length === 0 || byPr.length === 0) return null;
  for (const u of byPr) used.add(u);
  const laneIndex = laneSectionIndex(ctx.state.sections, ctx.lane);
  const laneScope = new Set(laneIndex === null ? [] : subtree(ctx.state.sections, laneIndex));
  // The lane section's change belongs to the cycles applied this window, when there were any.
  const outside = changed.filter((c) => c.index === null || !laneScope.has(c.index));
  if (cyclesApplied && outside.length > 0) changed = outside;
  const inLane = changed.filter((c) => c.index !== null && laneScope.has(c.index));
  const names =
    changed
      .slice(0, 4)
      .map((c) => `${c.title} (${c.change})`)
      .join(", ") + (changed.length > 4 ? `, and ${changed.length - 4} more` : "");
  const section = laneIndex === null ? null : ctx.state.sections[laneIndex]!;
  const now = section
    ? firstSentence(
        subtree(ctx.state.sections, laneIndex!)
          .map((i) => ctx.state!.sections[i]!.body)
          .join("\n"),
      )
    : "";
  const why = firstSentence(byPr[0]!.body);
  return {
    impact: inLane.length > 0 ? IMPACT.state_lane_section : IMPACT.state_other_sections,
    at: byPr[0]!.at,
    category: "state_doc",
    title:
      inLane.length > 0
        ? `STATE: the ${section!.title} section changed`
        : `STATE: ${plural(changed.length, "section")} changed`,
    summary: `${plural(byPr.length, "change")} (${byPr.slice(0, 4).map(ref).join(", ")}) edited ${statePath}: ${names}.${why ? ` ${why}` : ""}${now && inLane.length > 0 ? ` The lane section now reads: ${now}` : ""}`,
    evidence: [
      { type: "file", id: statePath, path: section ? `${statePath}#${section.anchor}` : statePath },
      ...byPr.slice(0, 5).map(unitEvidence),
    ],
  };
}

/** A revert, with the change it undid when that was merged in the window too. */
function revertCandidates(units: ChangeUnit[], used: Set<ChangeUnit>): Candidate[] {
  const out: Candidate[] = [];
  for (const u of units.filter((u) => !used.has(u) && /^revert\b/i.test(u.title))) {
    used.add(u);
    const what = u.title.replace(/^revert:?\s*/i, "").replace(/^"|"$/g, "");
    const undone = units.find(
      (o) => o !== u && !used.has(o) && o.title === what && Date.parse(o.at) <= Date.parse(u.at),
    );
    if (undone) used.add(undone);
    const why = firstSentence(u.body);
    out.push({
      impact: IMPACT.revert,
      at: u.at,
      category: "revert",
      title: `Reverted: ${what}`,
      summary: `${ref(u)} reverted ${undone ? `${ref(undone)}, merged earlier in this window` : "an earlier change"}.${why ? ` ${why}` : ""}`,
      evidence: [...(undone ? [unitEvidence(undone)] : []), unitEvidence(u)],
    });
  }
  return out;
}

/**
 * Highlights from the window's merged changes, one per story: the cycles completed (however
 * many), the STATE edits outside them, reverts, then the themes the rest forms (themes.ts). Every
 * unit lands in at most one; the units in none are left to the caller.
 */
export function gitCandidates(
  units: ChangeUnit[],
  ctx: GitHighlightContext,
): { candidates: Candidate[]; used: Set<ChangeUnit> } {
  const used = new Set<ChangeUnit>();
  const out: Candidate[] = [];
  const cycle = cycleCandidate(units, ctx, used);
  if (cycle) out.push(cycle);
  const state = stateCandidate(units, ctx, used, cycle !== null);
  if (state) out.push(state);
  out.push(...revertCandidates(units, used));
  const { themes } = findThemes(units.filter((u) => !used.has(u)));
  for (const t of themes) {
    for (const u of t.units) used.add(u);
    out.push({ impact: t.significance, at: t.units.at(-1)!.at, ...themeHighlight(t) });
  }
  return { candidates: out, used };
}
