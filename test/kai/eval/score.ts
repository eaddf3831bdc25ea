import type { Highlight } from "../../../src/kai/index.js";

/** The story a highlight tells: the one most of its PRs belong to (more than half), else null. */
export function storyOf(h: Highlight, prStory: Map<number, string>): string | null {
  const prs = h.evidence.filter((e) => e.type === "pr").map((e) => prStory.get(Number(e.id)) ?? null);
  if (prs.length === 0) return null;
  const counts = new Map<string | null, number>();
  for (const s of prs) counts.set(s, (counts.get(s) ?? 0) + 1);
  const [best, n] = [...counts].sort((a, b) => b[1] - a[1])[0]!;
  return n * 2 > prs.length ? best : null;
}

export interface WeekScore {
  points: number;
  max: number;
  /** The story of each highlight, in rank order (null: none). */
  told: Array<string | null>;
}

/**
 * A week's score: each expected theme found among the highlights earns 1, and 1 more when it is
 * ranked no lower than its place in the expected order; a second highlight of one story costs 1.
 */
export function scoreWeek(highlights: Highlight[], expected: string[], prStory: Map<number, string>): WeekScore {
  const told = highlights.map((h) => storyOf(h, prStory));
  let points = 0;
  expected.forEach((id, i) => {
    const rank = told.indexOf(id);
    if (rank < 0) return;
    points += 1 + (rank <= i ? 1 : 0);
  });
  const seen = new Set<string>();
  for (const s of told) {
    if (s === null) continue;
    if (seen.has(s)) points -= 1;
    seen.add(s);
  }
  return { points: Math.max(0, points), max: 2 * expected.length, told };
}
