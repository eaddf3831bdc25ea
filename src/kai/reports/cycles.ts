import { finalKinds, type LaneConfig } from "../../config/light/index.js";
import { entryLinks, type BoardEntryEvidence, type CycleMention, type RunEvidence } from "../evidence/index.js";

export type CycleStatus = "completed" | "in_progress" | "blocked";

export interface Cycle {
  /**
   * `cycle-N` as the project names it (see `cycleNames`), else N counting the lane's root entries
   * from the oldest (the root's `cycle` when the collector numbered it).
   */
  id: string;
  root: BoardEntryEvidence;
  /** The root and its follow-ups, oldest first. */
  entries: BoardEntryEvidence[];
  status: CycleStatus;
  started_at: string;
  completed_at: string | null;
}

const TERMINAL = new Set(["done", "error", "canceled"]);

/** The latest run of each entry (runs are retried; the newest one tells the entry's state). */
export function latestRunByEntry(runs: RunEvidence[]): Map<string, RunEvidence> {
  const out = new Map<string, RunEvidence>();
  for (const run of runs) {
    const seen = out.get(run.entry_id);
    if (!seen || Date.parse(run.started_at) >= Date.parse(seen.started_at)) out.set(run.entry_id, run);
  }
  return out;
}

/**
 * Cycles of a lane: a root entry written by a human to one of the lane's roles (with a kind that
 * role picks), and its follow-ups, whose ids extend the root's id with `-suffix` parts. An entry
 * is assigned to the longest root id it extends, so roots that prefix each other stay apart.
 */
export function laneCycles(
  board: BoardEntryEvidence[],
  lane: LaneConfig,
  humans: string[],
  runs: RunEvidence[],
  mentions: readonly CycleMention[] = [],
): Cycle[] {
  const roleKinds = new Map(lane.roles.map((r) => [r.name, new Set(r.allowed_kinds)]));
  // Parsed once: sorting thousands of entries must not parse dates in every comparison.
  const createdMs = new Map(board.map((e) => [e.id, Date.parse(e.created_at)]));
  const byCreated = (a: BoardEntryEvidence, b: BoardEntryEvidence) =>
    createdMs.get(a.id)! - createdMs.get(b.id)! || a.id.localeCompare(b.id);
  const roots = board.filter((e) => humans.includes(e.from) && roleKinds.get(e.to)?.has(e.kind)).sort(byCreated);
  const members = new Map<string, BoardEntryEvidence[]>(roots.map((r) => [r.id, [r]]));
  for (const entry of board) {
    if (members.has(entry.id)) continue;
    // Cut the id at each "-" from the right: the first prefix that is a root is the longest one.
    for (let cut = entry.id.lastIndexOf("-"); cut > 0; cut = entry.id.lastIndexOf("-", cut - 1)) {
      const cycle = members.get(entry.id.slice(0, cut));
      if (cycle) {
        cycle.push(entry);
        break;
      }
    }
  }
  // The lane ends at a role without a next step, or one whose next step goes back to a human.
  const finalKindsOf = new Map(lane.roles.map((r) => [r.name, new Set(finalKinds(r, humans))]));
  const lastRun = latestRunByEntry(runs);
  const names = cycleNames(
    roots.map((r) => members.get(r.id)!),
    runs,
    mentions,
  );
  return roots.map((root, i) => {
    const entries = members.get(root.id)!.sort(byCreated);
    // A final step done ends the cycle only when nothing but word to a human came after it: a
    // reviewer's sent-back outcome (on_outcome) posts the work on to a role, and the cycle goes on.
    const finished = entries.findLast(
      (e, i) =>
        finalKindsOf.get(e.to)?.has(e.kind) &&
        e.status === "done" &&
        entries.slice(i + 1).every((later) => humans.includes(later.to)),
    );
    const failed = entries.some(
      (e) => e.status === "error" || ["failed", "waiting"].includes(lastRun.get(e.id)?.state ?? ""),
    );
    // Every entry terminal but the lane's end not reached: nothing will move this cycle on.
    const stalled = entries.every((e) => TERMINAL.has(e.status));
    const status: CycleStatus = finished ? "completed" : failed || stalled ? "blocked" : "in_progress";
    return {
      id: names[i] ?? `cycle-${root.cycle ?? i + 1}`,
      root,
      entries,
      status,
      started_at: root.created_at,
      completed_at: finished ? finished.updated_at : null,
    };
  });
}

const CYCLE = /\bcycle[-_ ]?(\d+)\b/i;

/**
 * The name a cycle gives itself: the `refs.cycle` of one of its entries, or `cycle-N` in its
 * root's id or summary; null when it gives none (then only a commit can name it: `cycleNames`).
 */
export function ownCycleName(root: BoardEntryEvidence, entries: readonly BoardEntryEvidence[]): string | null {
  const own =
    entries.map((e) => entryLinks(e).cycle).find((c) => c !== null) ?? CYCLE.exec(`${root.id}\n${root.summary}`)?.[0];
  return own ? `cycle-${Number(CYCLE.exec(own)![1])}` : null;
}

/**
 * The name the project gives each cycle (oldest first; null where it gives none), so that a cycle
 * the project calls "cycle-1" is not "cycle-4" because three trial requests came before it: a
 * cycle named by its entries (`refs.cycle`, `cycle-N` in the root's id or summary), else by a
 * commit naming a cycle that is the cycle's pull request (named by its entries or opened by its
 * runs) or names the cycle's root entry id. An unnamed cycle whose counted name a named one took
 * is told apart by its root id.
 */
export function cycleNames(
  cycles: BoardEntryEvidence[][],
  runs: RunEvidence[],
  mentions: readonly CycleMention[],
): Array<string | null> {
  const named = cycles.map((entries) => {
    const root = entries[0]!;
    const own = ownCycleName(root, entries);
    if (own) return own;
    const ids = new Set(entries.map((e) => e.id));
    const prs = new Set([
      ...entries.flatMap((e) => entryLinks(e).pr_number ?? []),
      ...runs
        .filter((r) => ids.has(r.entry_id))
        .flatMap((r) => [
          ...r.actions.flatMap((a) => a.pr_number ?? []),
          ...(r.cycle?.pull_request ? [r.cycle.pull_request] : []),
        ]),
    ]);
    const rootId = new RegExp(`(?<![\\w-])${root.id.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}(?![\\w-])`);
    const m = mentions.find((c) => (c.pr_number !== null && prs.has(c.pr_number)) || rootId.test(c.text));
    const n = m ? CYCLE.exec(m.text)?.[1] : undefined;
    return n === undefined ? null : `cycle-${Number(n)}`;
  });
  const taken = new Set(named.filter((n) => n !== null));
  return cycles.map((entries, i) => {
    if (named[i] !== null) return named[i]!;
    const root = entries[0]!;
    const counted = `cycle-${root.cycle ?? i + 1}`;
    return taken.has(counted) ? `${counted}-${root.id}` : null;
  });
}
