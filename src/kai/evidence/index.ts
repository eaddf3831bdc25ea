/**
 * Kai's evidence collectors: each reads one source (the board, the runs, git history, the STATE
 * document, GitHub) cut at the window's end, and hands the report builders plain data (types.ts).
 */
export type * from "./types.js";
export { pathCategory } from "./types.js";
export {
  collectGit,
  parseGitLog,
  prNumberOf,
  lastChangeBefore,
  lastVersionBefore,
  newSideOfDiff,
  assertRepository,
} from "./git.js";
export { githubSlug, Slugger, parseSections, listItems, subtree } from "./markdown.js";
export {
  absentStateDoc,
  collectStateDoc,
  stateDocPath,
  repoProjects,
  stateView,
  laneSectionIndex,
  type StateView,
} from "./state-doc.js";
export { repoCycles, cycleMentions, isLaneApply, completedInStateDoc } from "./repo-cycles.js";
export { collectBoard, collectLaneBoard } from "./board.js";
export { collectGithub, githubSource } from "./github.js";
export { collectRuns, type RunReaders } from "./runs.js";
export { entryLinks, type EntryLinks } from "./entry-links.js";
export { laneNameMatcher, type LaneNameMatcher } from "./lane-names.js";
export { githubWebUrl, githubRepoOfRemote } from "./remote.js";
