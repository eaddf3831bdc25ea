/**
 * Kai's report builders: lane_status and what_changed from the collected evidence (they never
 * read a repository or a database themselves), their Markdown digests and the model's polish, and
 * the request and answer schemas they fill.
 */
export * from "./schema.js";
export { laneCycles, type Cycle, type CycleStatus } from "./cycles.js";
export { buildLaneStatus, type LaneContext } from "./lane-status.js";
export { buildWhatChanged, type ChangesContext } from "./what-changed.js";
export { laneStatusSummary, whatChangedSummary, errorSummary } from "./summary.js";
export { polishSummary, rewriteProblem } from "./polish.js";
export { modelDigest, evidenceKey, type ModelDigest } from "./model-digest.js";
export { withUrls, type LinkBase } from "./links.js";
export { answerZone, daysBefore, type Zone } from "./zone.js";
