/**
 * Kai's report builders: lane_status and what_changed from the collected evidence (they never
 * read a repository or a database themselves), their Markdown digests and the model's polish, and
 * the request and answer schemas they fill.
 */
export * from "./contract.js";
// The schemas' types are free; their values (zod) load on demand, so an answer needs no zod.
export type * from "./schema.js";
import type * as schemas from "./schema.js";
/** The module of Kai's zod schemas. */
export type KaiSchemas = typeof schemas;
/** The wire formats as zod schemas (kai_request_v1, kai_response_v1, …), loaded on first call. */
export const kaiSchemas = (): Promise<KaiSchemas> => import("./schema.js");
export { laneCycles, type Cycle, type CycleStatus } from "./cycles.js";
export { buildLaneStatus, type LaneContext } from "./lane-status.js";
export { buildWhatChanged, type ChangesContext } from "./what-changed.js";
export { laneStatusSummary, whatChangedSummary, errorSummary } from "./summary.js";
export { polishSummary, rewriteProblem } from "./polish.js";
export { modelDigest, evidenceKey, type ModelDigest } from "./model-digest.js";
export { withUrls, type LinkBase } from "./links.js";
export { answerZone, daysBefore, type Zone } from "./zone.js";
