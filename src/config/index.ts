export * from "./schema.js";
export { HANA_KINDS, LANE_TEMPLATES, docUpdateLane, codeLane, defaultConfig, type LaneTemplate } from "./defaults.js";
export { parseConfig, loadProject, initProject, ignorePmagentDir, GITIGNORE_LINE } from "./load.js";
export * from "./light/index.js";
export { pathRefusal } from "./allowed-paths.js";
export type * from "./error-codes.js"; // the codes this module raises, merged into core's ErrorCodes
