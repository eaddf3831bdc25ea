/**
 * Aya (proposal): turns the Human request into a doc_update_proposal_v1 artifact. Deterministic:
 * the updates the request lists (`payload.details.updates`), else one appended section per target
 * document with the request's text.
 */
import { parseWith } from "../core/index.js";
import { DocUpdateProposalSchema, DocUpdateRequestDetailsSchema, PROPOSAL_VERSION, type DocUpdate, type DocUpdateProposal } from "./schema.js";
import { PROPOSAL_DIR, artifactPath, saveRepoArtifact, type LaneRunContext } from "./context.js";

export function proposalFor(ctx: Pick<LaneRunContext, "entry" | "lane" | "cycleId">, now = new Date()): DocUpdateProposal {
  const { entry, lane } = ctx;
  const details = parseWith(DocUpdateRequestDetailsSchema, entry.payload.details ?? {}, `payload.details of entry ${entry.id}`, "invalid_request");
  const summary = typeof entry.payload.summary === "string" && entry.payload.summary.trim() !== "" ? entry.payload.summary.trim() : (details.request?.trim() || `Documentation update ${ctx.cycleId}`);
  const updates: DocUpdate[] = details.updates
    ? details.updates.map((u, i) => ({ ...u, id: u.id ?? `u${i + 1}` }))
    : (entry.target_docs.length > 0 ? entry.target_docs : [lane.state_file]).map((path, i) => ({
        id: `u${i + 1}`,
        path,
        reason: `requested in ${entry.id}`,
        change_type: "append" as const,
        suggested_markdown: `## Update ${ctx.cycleId} (${now.toISOString().slice(0, 10)})\n\n${(details.request ?? summary).trim().replace(/([^.!?])$/, "$1.")}`,
      }));
  return parseWith(
    DocUpdateProposalSchema,
    { version: PROPOSAL_VERSION, cycle_id: ctx.cycleId, request_entry_id: entry.id, summary, created_at: now.toISOString(), updates },
    "the proposal",
    "invalid_proposal",
  );
}

export function runAya(ctx: LaneRunContext, now = new Date()): void {
  const { sprite } = ctx;
  sprite.phaseStarted("proposal");
  const proposal = proposalFor(ctx, now);
  saveRepoArtifact(ctx, PROPOSAL_VERSION, artifactPath(PROPOSAL_DIR, ctx.cycleId, now), proposal, { updates: proposal.updates.length });
  sprite.phaseFinished("proposal", true);
  sprite.completed("success", `proposal for ${ctx.cycleId}: ${proposal.updates.length} update(s) to ${[...new Set(proposal.updates.map((u) => u.path))].join(", ")}`);
}
