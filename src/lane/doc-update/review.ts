/**
 * Sho (review): accepts or rejects each proposed update with the guard (truncation, mid-sentence
 * ending, allowed paths) against the document as it is in the workspace, and writes a
 * doc_update_review_v1 artifact. A review that accepts nothing fails the run.
 */
import { DocUpdateProposalSchema, PROPOSAL_VERSION, REVIEW_VERSION, type DocUpdateProposal, type DocUpdateReview } from "./schema.js";
import { guardUpdate, pathRefusal } from "./guard.js";
import { REVIEW_DIR, artifactPath, readArtifact, readDoc, saveRepoArtifact, type LaneRunContext } from "./context.js";

export function reviewProposal(proposal: DocUpdateProposal, read: (path: string) => string | null, allowedPaths: readonly string[], now = new Date()): DocUpdateReview {
  const decisions = proposal.updates.map((u) => {
    // A path outside the allowed ones is never read.
    const before = pathRefusal(u.path, allowedPaths) === null ? read(u.path) : null;
    const g = guardUpdate(u, before, allowedPaths);
    return { update_id: u.id, path: u.path, decision: g.reasons.length === 0 ? ("accept" as const) : ("reject" as const), reasons: g.reasons, lines_before: g.linesBefore, lines_after: g.linesAfter };
  });
  const accepted = proposal.updates.filter((_, i) => decisions[i]!.decision === "accept");
  return { version: REVIEW_VERSION, cycle_id: proposal.cycle_id, proposal_summary: proposal.summary, created_at: now.toISOString(), decisions, accepted };
}

export function runSho(ctx: LaneRunContext, now = new Date()): void {
  const { sprite } = ctx;
  sprite.phaseStarted("review");
  const { data: proposal } = readArtifact(ctx, PROPOSAL_VERSION, DocUpdateProposalSchema);
  const review = reviewProposal(proposal, (p) => readDoc(ctx.workspace, p), ctx.lane.allowed_paths, now);
  for (const d of review.decisions) {
    sprite.info(`${d.decision === "accept" ? "accepted" : "rejected"} ${d.update_id} (${d.path})${d.reasons.length ? `: ${d.reasons.join("; ")}` : ""}`, { kind: "review_decision" });
  }
  saveRepoArtifact(ctx, REVIEW_VERSION, artifactPath(REVIEW_DIR, ctx.cycleId, now), review, { accepted: review.accepted.length, rejected: review.decisions.length - review.accepted.length });
  const ok = review.accepted.length > 0;
  sprite.phaseFinished("review", ok);
  const rejected = review.decisions.length - review.accepted.length;
  sprite.completed(ok ? "success" : "failure", ok ? `review of ${ctx.cycleId}: ${review.accepted.length} accepted, ${rejected} rejected` : `review of ${ctx.cycleId}: every update was rejected (${review.decisions.map((d) => d.reasons.join("; ")).join(" | ")})`);
}
