/**
 * Sho (review): reads the proposal (the origin's doc_update_proposal_v1, or pmagent's earlier
 * format), accepts or rejects each update with the guard (truncation, mid-sentence ending, allowed
 * paths) against the document as it is in the workspace, and writes the origin's
 * doc_update_review_v1 — with `target_files[].final_content`, the whole new text of each file — at
 * the contract's path. A review that accepts nothing fails the run.
 */
import {
  PROPOSAL_VERSION,
  REVIEW_VERSION,
  type DocUpdate,
  type DocUpdateProposal,
  type DocUpdateReview,
} from "./schema.js";
import { guardUpdate, pathRefusal } from "./guard.js";
import { buildReview, proposalUpdates, readProposal, type ReviewDecisionInput } from "./formats.js";
import {
  REVIEW_DIR,
  artifactPath,
  readArtifactJson,
  readDoc,
  saveRepoArtifact,
  type LaneRunContext,
} from "./context.js";

/** A document as the review reads it: null when it does not exist, never read outside the allowed paths. */
export function docReader(workspace: string, allowedPaths: readonly string[]): (path: string) => string | null {
  return (path) => (pathRefusal(path, allowedPaths) === null ? readDoc(workspace, path) : null);
}

/** The proposal's updates, each with the guard's verdict on the document as `read` gives it. */
export function guardedUpdates(
  proposal: DocUpdateProposal,
  read: (path: string) => string | null,
  allowedPaths: readonly string[],
): ReviewDecisionInput[] {
  // Each document read once; one outside the allowed paths never (the guard refuses it unread).
  const texts = new Map<string, string | null>();
  const before = (path: string): string | null => {
    if (pathRefusal(path, allowedPaths) !== null) return null;
    if (!texts.has(path)) texts.set(path, read(path));
    return texts.get(path)!;
  };
  const exists = (path: string) => pathRefusal(path, allowedPaths) !== null || before(path) !== null;
  return proposalUpdates(proposal, exists).map((u: DocUpdate) => {
    const g = guardUpdate(u, before(u.path), allowedPaths);
    return {
      update: u,
      decision: g.reasons.length === 0 ? "accept" : "reject",
      reasons: g.reasons,
      linesBefore: g.linesBefore,
      linesAfter: g.linesAfter,
      after: g.after,
    };
  });
}

export interface ReviewProposalOptions {
  proposal: DocUpdateProposal;
  proposalRef: string;
  read: (path: string) => string | null;
  allowedPaths: readonly string[];
  cycleId: string;
  now?: Date;
}

export function reviewProposal(o: ReviewProposalOptions): DocUpdateReview {
  return buildReview({
    proposal: o.proposal,
    proposalRef: o.proposalRef,
    decisions: guardedUpdates(o.proposal, o.read, o.allowedPaths),
    now: o.now ?? new Date(),
    cycleId: o.cycleId,
  });
}

/** Read the proposal the entry references (fetched, pmagent's reference, or the origin's path). */
export function readProposalArtifact(ctx: LaneRunContext): { proposal: DocUpdateProposal; path: string } {
  const { value, path } = readArtifactJson(ctx, PROPOSAL_VERSION);
  return { proposal: readProposal(value, path, ctx.project.config.project_id), path };
}

export function runSho(ctx: LaneRunContext, now = new Date()): void {
  const { sprite } = ctx;
  sprite.phaseStarted("review");
  const { proposal, path } = readProposalArtifact(ctx);
  const review = reviewProposal({
    proposal,
    proposalRef: path,
    read: docReader(ctx.workspace, ctx.lane.allowed_paths),
    allowedPaths: ctx.lane.allowed_paths,
    cycleId: ctx.cycleId,
    now,
  });
  for (const d of review.update_judgements) {
    sprite.info(
      `${d.decision === "accept" ? "accepted" : "rejected"} ${d.update_id} (${d.target_path})${d.decision === "reject" ? `: ${d.reason}` : ""}`,
      { kind: "review_decision" },
    );
  }
  const accepted = review.update_judgements.filter((d) => d.decision === "accept").length;
  const rejected = review.update_judgements.length - accepted;
  saveRepoArtifact(ctx, REVIEW_VERSION, artifactPath(REVIEW_DIR, ctx.cycleId, now, REVIEW_VERSION), review, {
    accepted,
    rejected,
    risk_level: review.overall_assessment.risk_level,
  });
  const ok = accepted > 0;
  sprite.phaseFinished("review", ok);
  sprite.completed(
    ok ? "success" : "failure",
    ok
      ? `review of ${ctx.cycleId}: ${accepted} accepted, ${rejected} rejected`
      : `review of ${ctx.cycleId}: every update was rejected (${review.update_judgements.map((d) => d.reason).join(" | ") || "the proposal has no updates"})`,
  );
}
