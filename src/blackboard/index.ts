export { EntrySchema, EntryInputSchema, StatusSchema, STATUSES, TargetDocsSchema, TargetDocObjectSchema, entryContent } from "./schema.js";
export type { Entry, EntryInput, Status, StoredEntry, HistoryRecord } from "./schema.js";
export { TRANSITIONS, canTransition, isTerminal, mayChange } from "./lifecycle.js";
export { Blackboard, OPEN_CHANNEL, DEFAULT_LEASE_MS, type BlackboardOptions, type ListFilter, type EntryOutline, type OutlineFilter, type ChangeOptions, type EntryPatch } from "./blackboard.js";
export { parseComment, renderComment, isBlackboardComment, assertBlackboardType, BlackboardCommentError, DEFAULT_BLACKBOARD_TYPE, type DecodedComment } from "./codec.js";
export { findJsonSyntaxError, type JsonSyntaxError } from "./json-syntax.js";
export { syncBoard, withBoardLink, SYNC_ACTOR, type SyncOptions } from "./github-sync.js";
export { createGithubClient, githubToken, githubError, type GithubClient, type GithubClientOptions } from "./github-client.js";
export { SyncReportSchema, type SyncReport } from "./sync-report.js";
