/**
 * The doc_update lane's built-in sprites (Aya proposal, Sho review, Tsugu apply, Gen PM snapshot,
 * Hana router), their artifacts' schemas and the review's guard. Run by `pmagent lane-sprite NAME`
 * as a role's `runner.command`.
 */
export * from "./schema.js";
export { guardUpdate, pathRefusal, endsMidSentence, countLines, MIN_KEPT_LINE_RATIO, type GuardResult } from "./guard.js";
export { laneContext, artifactRefs, findArtifact, readArtifact, saveRepoArtifact, artifactPath, PROPOSAL_DIR, REVIEW_DIR, type LaneRunContext, type LaneEntry, type ArtifactRef } from "./context.js";
export { proposalFor } from "./aya.js";
export { reviewProposal } from "./sho.js";
export { BRANCH_PREFIX } from "./tsugu.js";
export { snapshotMarkdown, SNAPSHOT_DIR, type SnapshotInput } from "./gen.js";
export { LANE_SPRITES, MODEL_LANE_SPRITES, runLaneSprite } from "./run.js";
export {
  runLaneAgent,
  ayaTask,
  shoTask,
  decideUpdate,
  documentsContext,
  reviewAnswerSchema,
  parseLaneArtifact,
  laneAgentRole,
  ProposalAnswerSchema,
  LANE_AGENT_ARTIFACTS,
  MAX_DOC_CONTEXT_CHARS,
  type LaneAgentArtifact,
  type LaneAgentOptions,
} from "./model.js";
export { exampleLaneConfig } from "./example.js";
export { CYCLE_DONE_KIND } from "../config/index.js";
export { runDemo, createDemoRepository, demoRequest, DEMO_REQUEST_ID, type DemoOptions, type DemoResult } from "./demo.js";
