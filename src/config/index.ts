export * from "./schema.js";
export { CYCLE_DONE_KIND, HANA_KINDS, KAI_ANALYSIS_KIND, ANALYSIS_DONE_KIND, CODE_KINDS, LANE_TEMPLATES, docUpdateLane, codeLane, defaultConfig, type LaneTemplate } from "./defaults.js";
export { CONFIG_FILE, findConfig, parseConfig, loadProject, initProject, ignorePmagentDir, GITIGNORE_LINE, allRoles, findRole, findLane, cycleRootId, followUpId, nextStep, finalKinds, localActor, type Project } from "./load.js";
export { pathRefusal } from "./allowed-paths.js";
