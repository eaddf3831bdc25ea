// The blackboard without its zod schema and its GitHub side: the board itself (whose writers load
// the schema on their first call), its statuses and lifecycle, and what other modules read of it.
// Readers of a board (`bb list`, a project's board) import this;
// blackboard/index.ts re-exports all of it.
export {
  STATUSES,
  DEFAULT_BLACKBOARD_TYPE,
  entryContent,
  type Status,
  type StoredEntry,
  type HistoryRecord,
} from "../entry.js";
export type { Entry, EntryInput } from "../schema.js";
export { TRANSITIONS, canTransition, isTerminal } from "../lifecycle.js";
export { Blackboard, storedProjects, type BlackboardOptions } from "../blackboard.js";
export { OPEN_CHANNEL } from "../wake.js";
export { BoardFeed, type BoardFeedOptions, type BoardWatch, type BoardWatcher } from "../feed.js";
export type { ListFilter, EntryPageFilter } from "../queries.js";
export { byCreation } from "../queries.js";
export type { EntryOutline, OutlineFilter } from "../outline.js";
export type { ChangeOptions, EntryPatch } from "../change.js";
export { entrySummary } from "../title.js";
