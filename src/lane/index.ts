/**
 * The lanes: the doc_update lane's built-in sprites (doc-update/: Aya proposal, Sho review, Tsugu
 * apply, Gen PM snapshot, Hana router), their artifacts' schemas and the review's guard, run by
 * `pmagent lane-sprite NAME` as a role's `runner.command`; the example configuration and the demo.
 */
export * from "./doc-update/index.js";
export { exampleLaneConfig } from "./example.js";
export { runDemo, createDemoRepository, type DemoOptions, type DemoResult } from "./demo.js";
export type * from "./error-codes.js"; // the codes this module raises, merged into core's ErrorCodes
