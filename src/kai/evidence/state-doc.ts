import { confinePath } from "../../core/index.js";
import type { LaneConfig } from "../../config/light/index.js";
import type { StateDocEvidence, StateSection } from "./types.js";
import { assertRepository, existsAt, lastVersionBefore, runGit } from "./git.js";
import { firstLine, listItems, parseSections, subtree } from "./markdown.js";
import { laneNameMatcher } from "./lane-names.js";

/**
 * The lane's STATE document as it was committed at the cutoff: its sections with GitHub anchors
 * and when it last changed. Read from git (not the working tree) so that `as_of` sees the past:
 * the text at the cutoff is the text of the last commit before it that touched the file.
 */
export async function collectStateDoc(repo: string, path: string, cutoff: Date): Promise<StateDocEvidence> {
  confinePath(repo, path, "state_file");
  assertRepository(repo);
  const last = await lastVersionBefore(repo, cutoff, path);
  if (last === null) return absentStateDoc(path);
  if (last.text === null) return { path, exists: false, revision: last.sha, updated_at: last.at, sections: [] };
  return { path, exists: true, revision: last.sha, updated_at: last.at, sections: parseSections(last.text) };
}

/** The STATE document as no commit has it (none touched it up to the cutoff). */
export function absentStateDoc(path: string): StateDocEvidence {
  return { path, exists: false, revision: null, updated_at: null, sections: [] };
}

/**
 * The projects living in the repository besides the configured one: each `STATE/<id>/current_state.md`
 * committed on HEAD (the origin keeps one STATE document per project). Empty for a repository
 * without commits.
 */
export async function repoProjects(repo: string): Promise<string[]> {
  const res = await runGit(repo, ["ls-tree", "-r", "--name-only", "HEAD", "--", "STATE/"]);
  if (res.code !== 0) return [];
  return res.stdout
    .toString("utf8")
    .split("\n")
    .flatMap((p) => /^STATE\/([^/]+)\/current_state\.md$/.exec(p)?.[1] ?? [])
    .sort();
}

/** The config's default `state_file`: a lane that leaves it so is read from the project's own document first. */
export const DEFAULT_STATE_FILE = "STATE/current_state.md";

/**
 * Which STATE document the lane reads: the path the lane configures; else, the lane keeping the
 * default, `STATE/<project_id>/current_state.md` when the repository has it at the cutoff, else
 * `STATE/current_state.md`. `found_by` says which rule chose it, for the answer's notes. Only the
 * path: its text (`collectStateDoc`) and its history (`repoCycles`) are then read side by side.
 * `no_commits` is set when the lookup found no commit at or before the cutoff (a fresh `git init`,
 * an as_of before the first commit): every git read up to the cutoff would find nothing.
 */
export async function stateDocPath(
  repo: string,
  projectId: string,
  lane: Pick<LaneConfig, "state_file">,
  cutoff: Date,
): Promise<{ path: string; found_by: string; no_commits?: true }> {
  if (lane.state_file !== DEFAULT_STATE_FILE) {
    confinePath(repo, lane.state_file, "state_file");
    return { path: lane.state_file, found_by: "the lane's configured state_file" };
  }
  const own = `STATE/${projectId}/current_state.md`;
  confinePath(repo, own, "state_file");
  assertRepository(repo);
  const at = await existsAt(repo, cutoff, own);
  if (at.exists) return { path: own, found_by: `the project's own STATE document (${own})` };
  return {
    path: DEFAULT_STATE_FILE,
    found_by: `the default state_file (${own} does not exist at the cutoff)`,
    ...(at.commit === null ? { no_commits: true as const } : {}),
  };
}

/**
 * The section about the lane, its heading in any language the document uses (lane-names.ts): one
 * naming both layer and lane name, else one naming the lane under a section naming the layer,
 * else the layer, else the lane name.
 */
export function laneSectionIndex(sections: StateSection[], lane: Pick<LaneConfig, "layer" | "name">): number | null {
  const is = laneNameMatcher(lane);
  const underLayer = (i: number): boolean => {
    for (let p = sections[i]!.parent; p !== null; p = sections[p]!.parent)
      if (is.layer(sections[p]!.title)) return true;
    return false;
  };
  const tests = [
    (i: number) => is.layer(sections[i]!.title) && is.name(sections[i]!.title),
    (i: number) => is.name(sections[i]!.title) && underLayer(i),
    (i: number) => is.layer(sections[i]!.title),
    (i: number) => is.name(sections[i]!.title),
  ];
  for (const test of tests) {
    const i = sections.findIndex((_, j) => test(j));
    if (i >= 0) return i;
  }
  return null;
}

const isGapTitle = (title: string) => /gap|ギャップ|残課題|未解決|known issues/i.test(title);

export interface StateView {
  state_file: string;
  section_anchor: string | null;
  digest: string;
  known_gaps: string[];
  updated_at: string | null;
}

/** `state_view` of lane_status_v1: the lane section's anchor, a one-line digest, its Gap list. */
export function stateView(doc: StateDocEvidence, lane: Pick<LaneConfig, "layer" | "name">): StateView {
  const base = { state_file: doc.path, updated_at: doc.updated_at };
  if (!doc.exists) {
    return {
      ...base,
      section_anchor: null,
      digest: `${doc.path} does not exist${doc.revision ? ` at ${doc.revision.slice(0, 12)}` : " (no commit touched it up to the cutoff)"}`,
      known_gaps: [],
    };
  }
  const index = laneSectionIndex(doc.sections, lane);
  const scope = index === null ? doc.sections.map((_, i) => i) : subtree(doc.sections, index);
  // Gap list: under the lane's section first, else anywhere in the document.
  const gapIndex =
    scope.find((i) => isGapTitle(doc.sections[i]!.title)) ?? doc.sections.findIndex((s) => isGapTitle(s.title));
  const known_gaps = gapIndex !== undefined && gapIndex >= 0 ? listItems(doc.sections[gapIndex]!.body) : [];
  if (index === null) {
    return {
      ...base,
      section_anchor: null,
      digest: `no section about ${lane.layer}/${lane.name} in ${doc.path}`,
      known_gaps,
    };
  }
  const section = doc.sections[index]!;
  const digest =
    scope
      .filter((i) => !isGapTitle(doc.sections[i]!.title))
      .map((i) => firstLine(doc.sections[i]!.body))
      .find((l) => l !== "") ?? section.title;
  return { ...base, section_anchor: `#${section.anchor}`, digest, known_gaps };
}
