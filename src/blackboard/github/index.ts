/**
 * The blackboard on GitHub: the comment codec (an entry as an issue comment), reading a text of
 * such comments, the GitHub client and the two-way sync of a board with an issue's comments. It
 * sits above the board's core (blackboard.ts, schema, lifecycle), which never imports it.
 */
export {
  parseComment,
  renderComment,
  splitComments,
  isBlackboardComment,
  assertBlackboardType,
  BlackboardCommentError,
  type DecodedComment,
} from "./codec.js";
export { findJsonSyntaxError, type JsonSyntaxError } from "./json-syntax.js";
export { syncBoard, withBoardLink, SYNC_ACTOR, type SyncOptions } from "./sync.js";
export { createGithubClient, githubToken, githubError, type GithubClient, type GithubClientOptions } from "./client.js";
export { SyncReportSchema, type SyncReport } from "./report.js";
export { readImportText, type ImportText, type ImportBadComment } from "./import-text.js";
