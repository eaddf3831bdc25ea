/**
 * The doc_update lane's built-in sprites, one file per role named by what it does: propose (Aya),
 * review (Sho), apply (Tsugu), snapshot (Gen), route (Hana); their artifacts' schemas, the
 * review's guard, and Aya and Sho through the model.
 */
export * from "./schema.js";
export { guardUpdate, pathRefusal, endsMidSentence, countLines, MIN_KEPT_LINE_RATIO, type GuardResult } from "./guard.js";
export { laneContext, artifactRefs, findArtifact, readArtifact, saveRepoArtifact, artifactPath, PROPOSAL_DIR, REVIEW_DIR, type LaneRunContext, type LaneEntry, type ArtifactRef } from "./context.js";
export { proposalFor } from "./propose.js";
export { reviewProposal } from "./review.js";
export { BRANCH_PREFIX } from "./apply.js";
export { snapshotMarkdown, SNAPSHOT_DIR, type SnapshotInput } from "./snapshot.js";
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
