/**
 * Between the origin's lane files and pmagent's working model: a proposal's updates as DocUpdates
 * (what the guard checks), DocUpdates back as the origin's proposal updates, the review Sho writes
 * from his decisions, and pmagent's earlier proposal and review formats read as the origin's.
 */
import { UsageError, parseWith } from "../../core/index.js";
import {
  AUTO_ACCEPT_MODE,
  DocUpdateProposalSchema,
  DocUpdateReviewSchema,
  LegacyProposalSchema,
  LegacyReviewSchema,
  PROPOSAL_VERSION,
  REPLACE_WHOLE_FILE,
  REVIEW_VERSION,
  type ChangeType,
  type DocUpdate,
  type DocUpdateProposal,
  type DocUpdateReview,
  type ProposalUpdate,
  type RiskLevel,
  type UpdateJudgement,
} from "./schema.js";
import { guardUpdate } from "./guard.js";

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);

/** A DocUpdate as an update of the origin's proposal: its vocabulary, and pmagent's exact placement beside it. */
export function toProposalUpdate(u: DocUpdate): ProposalUpdate {
  const change: Record<ChangeType, string> = {
    append: "add",
    create: "add",
    replace: "other",
    section: "edit_paragraph",
  };
  return {
    id: u.id,
    target: { path: u.path, ...(u.section_hint !== undefined ? { section_hint: u.section_hint } : {}) },
    reason: u.reason,
    change_type: change[u.change_type],
    suggestion_markdown: u.suggested_markdown,
    apply_as: u.change_type,
  };
}

/**
 * The proposal's updates as pmagent places them. Without pmagent's `apply_as`, the origin's change
 * types: `add` and `append_list_item` append (or create a file that does not exist yet),
 * `edit_paragraph` and `other` replace the section `section_hint` names.
 */
export function proposalUpdates(p: DocUpdateProposal, exists: (path: string) => boolean = () => true): DocUpdate[] {
  return p.updates.map((u, i) => {
    const hint = u.target.section_hint?.trim() || undefined;
    let change: ChangeType =
      u.apply_as ?? (u.change_type === "add" || u.change_type === "append_list_item" ? "append" : "section");
    if (u.apply_as === undefined && !exists(u.target.path)) change = "create";
    return {
      id: u.id ?? `u${i + 1}`,
      path: u.target.path,
      reason: u.reason?.trim() || `proposed in ${PROPOSAL_VERSION}`,
      change_type: change,
      suggested_markdown: u.suggestion_markdown,
      ...(hint !== undefined ? { section_hint: hint } : {}),
    };
  });
}

/** Read a proposal: the origin's format, or pmagent's earlier one (as the origin's). */
export function readProposal(value: unknown, source: string, projectId: string): DocUpdateProposal {
  if (isObject(value) && value.schema_version === undefined && value.version === PROPOSAL_VERSION) {
    const old = parseWith(LegacyProposalSchema, value, source, "invalid_artifact");
    return {
      schema_version: PROPOSAL_VERSION,
      project_id: projectId,
      generated_at: old.created_at,
      summary: old.summary,
      updates: old.updates.map(toProposalUpdate),
      cycle_id: old.cycle_id,
      request_entry_id: old.request_entry_id,
    };
  }
  if (isObject(value) && value.schema_version === undefined) {
    throw new UsageError(
      "invalid_artifact",
      `${source} is not a ${PROPOSAL_VERSION}: it has no schema_version (expected "${PROPOSAL_VERSION}")`,
    );
  }
  return parseWith(DocUpdateProposalSchema, value, source, "invalid_artifact");
}

/**
 * Read a review: the origin's format, or pmagent's earlier one — whose accepted updates become
 * `target_files` with the final content computed from the documents as they are now (`read`).
 */
export function readReview(
  value: unknown,
  source: string,
  projectId: string,
  read: (path: string) => string | null,
  allowedPaths: readonly string[],
): DocUpdateReview {
  if (isObject(value) && value.schema_version === undefined && value.version === REVIEW_VERSION) {
    const old = parseWith(LegacyReviewSchema, value, source, "invalid_artifact");
    const rejected = old.decisions.filter((d) => d.decision === "reject");
    return {
      schema_version: REVIEW_VERSION,
      project_id: projectId,
      // The earlier format named no proposal path: the cycle stands in for it.
      proposal_ref: `cycle ${old.cycle_id}`,
      generated_at: old.created_at,
      review_mode: AUTO_ACCEPT_MODE,
      overall_assessment: { summary: old.proposal_summary, risk_level: riskOf(old.accepted.length, rejected.length) },
      update_judgements: old.decisions.map((d) => ({
        target_path: d.path,
        decision: d.decision,
        reason: d.reasons.join("; ") || "passes the guard",
        update_id: d.update_id,
        lines_before: d.lines_before,
        lines_after: d.lines_after,
      })),
      target_files: old.accepted.map((u) => {
        const g = guardUpdate(u, read(u.path), allowedPaths);
        return {
          target: { path: u.path },
          change_type: REPLACE_WHOLE_FILE,
          final_content: g.after ?? "",
          risk: g.reasons.length === 0 && g.after !== undefined ? "low" : "high",
          reviewer_comment: g.reasons.join("; ") || u.reason,
        };
      }),
      cycle_id: old.cycle_id,
    };
  }
  if (isObject(value) && value.schema_version === undefined) {
    throw new UsageError(
      "invalid_artifact",
      `${source} is not a ${REVIEW_VERSION}: it has no schema_version (expected "${REVIEW_VERSION}")`,
    );
  }
  return parseWith(DocUpdateReviewSchema, value, source, "invalid_artifact");
}

/** The whole proposal's risk: low when every update passed, high when none did, medium between. */
export function riskOf(accepted: number, rejected: number): RiskLevel {
  if (accepted === 0) return "high";
  return rejected === 0 ? "low" : "medium";
}

export interface ReviewDecisionInput {
  update: DocUpdate;
  decision: "accept" | "reject";
  reasons: readonly string[];
  linesBefore: number | null;
  linesAfter: number | null;
  /** The document's text after the update (an accepted update has one). */
  after: string | undefined;
}

export interface BuildReviewOptions {
  proposal: DocUpdateProposal;
  /** Where the proposal is (its repository-relative path, or the artifact it came in). */
  proposalRef: string;
  decisions: readonly ReviewDecisionInput[];
  now: Date;
  /** Extra notes (the model's summary, say). */
  notes?: string[];
  cycleId: string;
}

/**
 * Sho's doc_update_review_v1: one judgement per update, and one `target_files` entry with the whole
 * new text for each file an accepted update changes (several accepted updates of one file are
 * applied in order into one final content, so that the file has one entry, as the spec asks).
 */
export function buildReview(o: BuildReviewOptions): DocUpdateReview {
  const accepted = o.decisions.filter((d) => d.decision === "accept" && d.after !== undefined);
  const rejected = o.decisions.length - accepted.length;
  const files = new Map<string, { final: string; reasons: string[] }>();
  for (const d of accepted) {
    const file = files.get(d.update.path);
    // A second update of the same file applies to the text the first one left.
    const after = file ? (guardUpdate(d.update, file.final, [d.update.path]).after ?? file.final) : d.after!;
    files.set(d.update.path, {
      final: after,
      reasons: [...(file?.reasons ?? []), `${d.update.id}: ${d.update.reason}`],
    });
  }
  const judgements: UpdateJudgement[] = o.decisions.map((d) => ({
    target_path: d.update.path,
    ...(d.update.section_hint !== undefined ? { section_hint: d.update.section_hint } : {}),
    decision: d.decision === "accept" && d.after !== undefined ? "accept" : "reject",
    reason:
      d.reasons.length > 0
        ? d.reasons.join("; ")
        : `passes the guard (${d.linesBefore ?? "new file"} → ${d.linesAfter ?? "?"} lines)`,
    suggestion_override: null,
    update_id: d.update.id,
    lines_before: d.linesBefore,
    lines_after: d.linesAfter,
  }));
  const risk = riskOf(accepted.length, rejected);
  const summary = o.proposal.summary?.trim() || `${PROPOSAL_VERSION} of ${o.cycleId}`;
  return {
    schema_version: REVIEW_VERSION,
    project_id: o.proposal.project_id,
    proposal_ref: o.proposalRef,
    generated_at: o.now.toISOString(),
    review_mode: AUTO_ACCEPT_MODE,
    overall_assessment: {
      summary: `${summary}: ${accepted.length} update(s) accepted, ${rejected} rejected`,
      risk_level: risk,
    },
    update_judgements: judgements,
    target_files: [...files].map(([path, f]) => ({
      target: { path },
      change_type: REPLACE_WHOLE_FILE,
      final_content: f.final,
      risk: "low",
      reviewer_comment: f.reasons.join("; "),
    })),
    notes: [
      `Reviewed by pmagent's guard: an update may not shrink its document below 70% of its lines, end it mid-sentence, or touch a path outside the lane's allowed paths.`,
      ...(o.notes ?? []),
    ],
    cycle_id: o.cycleId,
  };
}

export interface BuildProposalOptions {
  projectId: string;
  cycleId: string;
  /** The entry the proposal answers. */
  requestEntryId: string;
  summary: string;
  updates: readonly DocUpdate[];
  now: Date;
  notes?: string[];
}

/** Aya's doc_update_proposal_v1, validated. */
export function buildProposal(o: BuildProposalOptions): DocUpdateProposal {
  return parseWith(
    DocUpdateProposalSchema,
    {
      schema_version: PROPOSAL_VERSION,
      project_id: o.projectId,
      generated_at: o.now.toISOString(),
      summary: o.summary,
      updates: o.updates.map(toProposalUpdate),
      no_change: [],
      notes: o.notes ?? [],
      cycle_id: o.cycleId,
      request_entry_id: o.requestEntryId,
    },
    "the proposal",
    "invalid_proposal",
  );
}
