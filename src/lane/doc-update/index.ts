/**
 * The doc_update lane's built-in sprites, one file per role named by what it does: propose (Aya),
 * review (Sho), apply (Tsugu), snapshot (Gen), route (Hana); their artifacts' schemas, the
 * review's guard, and Aya and Sho through the model.
 */
export * from "./schema.js";
export {
  guardUpdate,
  guardFinalContent,
  wholeFileText,
  pathRefusal,
  endsMidSentence,
  countLines,
  MIN_KEPT_LINE_RATIO,
  type GuardResult,
} from "./guard.js";
export {
  laneContext,
  artifactRefs,
  findArtifact,
  readArtifactJson,
  saveRepoArtifact,
  artifactPath,
  PROPOSAL_DIR,
  REVIEW_DIR,
  type LaneRunContext,
  type LaneEntry,
  type ArtifactRef,
} from "./context.js";
export {
  buildProposal,
  buildReview,
  proposalUpdates,
  readProposal,
  readReview,
  riskOf,
  toProposalUpdate,
  type ReviewDecisionInput,
} from "./formats.js";
export { proposalFor } from "./propose.js";
export { reviewProposal, guardedUpdates, docReader } from "./review.js";
export { BRANCH_PREFIX, applicableFiles, readReviewArtifact } from "./apply.js";
export {
  snapshotFor,
  snapshotMarkdown,
  snapshotFile,
  snapshotPath,
  SNAPSHOT_DIR,
  type SnapshotInput,
} from "./snapshot.js";
export { actionsArtifactRef, fetchActionsArtifact } from "./remote.js";
export { LANE_SPRITES, LANE_SPRITE_INPUTS, MODEL_LANE_SPRITES, runLaneSprite, runLaneStep } from "./run.js";
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
