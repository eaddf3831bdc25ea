/**
 * Kai's report builders: lane_status and what_changed from the collected evidence (they never
 * read a repository or a database themselves), their Markdown digests and the model's polish, and
 * the request and answer schemas they fill.
 */
// what_changed's builder and the model's work on an answer load on first use: a lane_status
// answer without the model (`pmagent kai status`) loads none of them.
import type * as whatChanged from "./what-changed.js";
import type * as polish from "./polish.js";
import type * as digest from "./model-digest.js";
import type * as schemas from "./schema.js";
export * from "./contract.js";
// The schemas' types are free; their values (zod) load on demand, so an answer needs no zod.
export type * from "./schema.js";
/** The module of Kai's zod schemas. */
export type KaiSchemas = typeof schemas;
/** The wire formats as zod schemas (kai_request_v1, kai_response_v1, …), loaded on first call. */
export const kaiSchemas = (): Promise<KaiSchemas> => import("./schema.js");
export { laneCycles, ownCycleName, type Cycle, type CycleStatus } from "./cycles.js";
export { buildLaneStatus, type LaneContext } from "./lane-status.js";
/** The what_changed report builder's module (`buildWhatChanged`), loaded on first call. */
export const whatChangedReport = (): Promise<typeof whatChanged> => import("./what-changed.js");
export { laneStatusSummary, whatChangedSummary, errorSummary } from "./summary.js";
// The model's work keeps its callers' signatures: wrappers that load its module on the first call.
/** Let the model reword summary_md (see polish.ts). */
export const polishSummary: typeof polish.polishSummary = async (...args) =>
  (await import("./polish.js")).polishSummary(...args);
/** Let the model write the highlights (see model-digest.ts). */
export const modelDigest: typeof digest.modelDigest = async (...args) =>
  (await import("./model-digest.js")).modelDigest(...args);
export { withUrls, type LinkBase } from "./links.js";
export { answerZone, daysBefore, type Zone } from "./zone.js";
