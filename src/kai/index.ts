// Kai: lane_status and what_changed, from evidence (evidence/) to answers (reports/).
export * from "./reports/index.js";
export * from "./evidence/index.js";
export { checkRequest, checkRequestText, type RequestCheck } from "./request.js";
export { kaiSources, type KaiSourcesInput } from "./sources.js";
export { answer, answerText, answerRequest, type KaiOptions, type KaiSources } from "./kai.js";
export type * from "./error-codes.js"; // the codes this module raises, merged into core's ErrorCodes
