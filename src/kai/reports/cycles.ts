import { finalKinds, type LaneConfig } from "../../config/index.js";
import type { BoardEntryEvidence, RunEvidence } from "../evidence/index.js";

export type CycleStatus = "completed" | "in_progress" | "blocked";

export interface Cycle {
  /** `cycle-N`, N counting the lane's root entries from the oldest (the root's `cycle` when the collector numbered it). */
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
export function laneCycles(board: BoardEntryEvidence[], lane: LaneConfig, humans: string[], runs: RunEvidence[]): Cycle[] {
  const roleKinds = new Map(lane.roles.map((r) => [r.name, new Set(r.allowed_kinds)]));
  // Parsed once: sorting thousands of entries must not parse dates in every comparison.
  const createdMs = new Map(board.map((e) => [e.id, Date.parse(e.created_at)]));
  const byCreated = (a: BoardEntryEvidence, b: BoardEntryEvidence) => createdMs.get(a.id)! - createdMs.get(b.id)! || a.id.localeCompare(b.id);
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
  return roots.map((root, i) => {
    const entries = members.get(root.id)!.sort(byCreated);
    // A final step done ends the cycle only when nothing but word to a human came after it: a
    // reviewer's sent-back outcome (on_outcome) posts the work on to a role, and the cycle goes on.
    const finished = entries.findLast((e, i) => finalKindsOf.get(e.to)?.has(e.kind) && e.status === "done" && entries.slice(i + 1).every((later) => humans.includes(later.to)));
    const failed = entries.some((e) => e.status === "error" || ["failed", "waiting"].includes(lastRun.get(e.id)?.state ?? ""));
    // Every entry terminal but the lane's end not reached: nothing will move this cycle on.
    const stalled = entries.every((e) => TERMINAL.has(e.status));
    const status: CycleStatus = finished ? "completed" : failed || stalled ? "blocked" : "in_progress";
    return { id: `cycle-${root.cycle ?? i + 1}`, root, entries, status, started_at: root.created_at, completed_at: finished ? finished.updated_at : null };
  });
}
