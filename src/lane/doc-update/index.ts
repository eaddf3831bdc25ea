/**
 * The doc_update lane's built-in sprites, one file per role named by what it does: propose (Aya),
 * review (Sho), apply (Tsugu), snapshot (Gen), route (Hana); their artifacts' schemas, the
 * review's guard, and Aya and Sho through the model.
 */
export * from "./schema.js";
export { guardUpdate, guardFinalContent, pathRefusal, endsMidSentence, countLines, type GuardResult } from "./guard.js";
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
  type ReviewDecisionInput,
} from "./formats.js";
export { proposalFor } from "./propose.js";
export { reviewProposal, guardedUpdates, docReader } from "./review.js";
export { BRANCH_PREFIX, readReviewArtifact } from "./apply.js";
export { snapshotFor, snapshotMarkdown, type SnapshotInput } from "./snapshot.js";
export { fetchActionsArtifact } from "./remote.js";
export { LANE_SPRITES, runLaneSprite, runLaneStep } from "./run.js";
export {
  runLaneAgent,
  shoTask,
  decideUpdate,
  documentsContext,
  reviewAnswerSchema,
  parseLaneArtifact,
  laneAgentRole,
  LANE_AGENT_ARTIFACTS,
  MAX_DOC_CONTEXT_CHARS,
  type LaneAgentArtifact,
  type LaneAgentOptions,
} from "./model.js";
