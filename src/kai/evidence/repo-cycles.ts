import type { LaneConfig } from "../../config/light/index.js";
import type { CycleMention, RepoCycle, StateDocEvidence } from "./types.js";
import { gitLog } from "./git.js";
import { subtree } from "./markdown.js";
import { laneSectionIndex } from "./state-doc.js";
import { laneNameMatcher } from "./lane-names.js";

const CYCLE_NUMBER = /\bcycle[-_ ]?(\d+)\b/i;
const APPLY_WORD = /\bappl(?:y|ies|ied|ying)\b/i;
const COMPLETED_CYCLE = /\bcycle[-_ ]?(\d+)\b[^.\n]{0,80}?\b(?:completed?|applied|done|finished|closed)\b/gi;

/** Whether a commit message says it applies this lane's proposal (a lane's apply PR). */
export function isLaneApply(text: string, lane: Pick<LaneConfig, "layer" | "name">): boolean {
  if (!APPLY_WORD.test(text)) return false;
  const is = laneNameMatcher(lane);
  return /proposal|提案/i.test(text) || is.name(text) || is.layer(text);
}

/** Cycle numbers the lane section of the STATE document calls completed or applied. */
export function completedInStateDoc(doc: StateDocEvidence, lane: Pick<LaneConfig, "layer" | "name">): number[] {
  const index = laneSectionIndex(doc.sections, lane);
  if (!doc.exists || index === null) return [];
  const text = subtree(doc.sections, index)
    .map((i) => `${doc.sections[i]!.title}\n${doc.sections[i]!.body}`)
    .join("\n");
  return [...new Set([...text.matchAll(COMPLETED_CYCLE)].map((m) => Number(m[1])))].sort((a, b) => a - b);
}

/** When each cycle number was first named in a commit message (mentions newest first, as `git log` gives them). */
function firstMentions(mentions: readonly CycleMention[]): Map<number, string> {
  const out = new Map<number, string>();
  // Newest first: the last date seen for a number is its first mention.
  for (const c of mentions)
    for (const m of c.text.matchAll(/\bcycle[-_ ]?(\d+)\b/gi)) out.set(Number(m[1]), c.committed_at);
  return out;
}

/** Commit messages on the first-parent history up to `cutoff` that name a cycle (one `git log --grep`). */
export async function cycleMentions(repo: string, cutoff: Date): Promise<CycleMention[]> {
  const log = await gitLog(repo, { until: cutoff }, [
    "--first-parent",
    "-E",
    "-i",
    "--grep=cycle[-_ ]?[0-9]",
    "HEAD",
    "--",
  ]);
  return ("failed" in log ? [] : log.commits).map((c) => ({
    pr_number: c.pr_number,
    text: `${c.subject}\n${c.body}`,
    committed_at: c.committed_at,
  }));
}

/**
 * The lane's cycles as the repository records them up to `cutoff`, oldest first: each commit on
 * the first-parent history that changed the STATE document with a message saying it applies the
 * lane's proposal, and each cycle the lane section calls completed that no such commit names.
 * Reads only the STATE document's own history (one `git log` on its path), begun while the
 * document's text (`stateDoc.read`) may still be on its way.
 */
export async function repoCycles(
  repo: string,
  lane: Pick<LaneConfig, "layer" | "name">,
  stateDoc: { path: string; read: Promise<StateDocEvidence> | StateDocEvidence },
  cutoff: Date,
  mentions?: Promise<readonly CycleMention[]> | readonly CycleMention[],
): Promise<RepoCycle[]> {
  // Awaited together: a text that fails while the log runs is this call's failure, never unhandled.
  const [log, doc] = await Promise.all([
    gitLog(repo, { until: cutoff }, ["--first-parent", "HEAD", "--", stateDoc.path]),
    stateDoc.read,
  ]);
  const commits = "failed" in log ? [] : log.commits.reverse();
  const applies = commits.filter((c) => isLaneApply(`${c.subject}\n${c.body}`, lane));
  const out: RepoCycle[] = [];
  const taken = new Set<number>();
  const stated = completedInStateDoc(doc, lane);
  // The mentions already read (`cycleMentions`, same cutoff) are reused: one walk of the history.
  const mentioned =
    applies.length > 0 || stated.length > 0
      ? firstMentions((await mentions) ?? (await cycleMentions(repo, cutoff)))
      : new Map<number, string>();
  for (const [i, c] of applies.entries()) {
    const named = CYCLE_NUMBER.exec(`${c.subject}\n${c.body}`);
    let n = named ? Number(named[1]) : i + 1;
    // An unnumbered apply takes the next number not taken by one before it.
    while (!named && taken.has(n)) n++;
    if (taken.has(n)) continue; // a second apply of the same cycle: the first one completed it
    taken.add(n);
    const started = named ? (mentioned.get(n) ?? null) : null;
    out.push({
      id: `cycle-${n}`,
      status: "completed",
      started_at: started ?? c.committed_at,
      completed_at: c.committed_at,
      found_in: "git",
      apply: c,
      state_path: doc.path,
    });
  }
  for (const n of stated) {
    if (taken.has(n)) continue;
    const started = mentioned.get(n) ?? null;
    out.push({
      id: `cycle-${n}`,
      status: "completed",
      started_at: started ?? doc.updated_at ?? cutoff.toISOString(),
      completed_at: null,
      found_in: "state_doc",
      apply: null,
      state_path: doc.path,
    });
  }
  return out.sort((a, b) => Number(a.id.slice(6)) - Number(b.id.slice(6)));
}
