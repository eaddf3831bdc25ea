/**
 * Wire formats of the doc_update lane: the proposal Aya writes and the review Sho writes. Both are
 * artifacts (JSON files referenced by ARTIFACT events) that the next role reads.
 */
import { z } from "zod";

export const PROPOSAL_VERSION = "doc_update_proposal_v1";
export const REVIEW_VERSION = "doc_update_review_v1";

/** append: add the Markdown at the end; replace: the Markdown is the whole new document; create: a new file. */
export const CHANGE_TYPES = ["append", "replace", "create"] as const;
export type ChangeType = (typeof CHANGE_TYPES)[number];

const text = z.string().trim().min(1, "must not be empty");

export const DocUpdateSchema = z.strictObject({
  id: text,
  /** Repository-relative path of the document. */
  path: text,
  reason: text,
  change_type: z.enum(CHANGE_TYPES),
  suggested_markdown: text,
});
export type DocUpdate = z.infer<typeof DocUpdateSchema>;

/** What a Human request may carry in `payload.details` (updates without ids get u1, u2, …). */
export const DocUpdateRequestDetailsSchema = z.looseObject({
  request: z.string().optional(),
  updates: z.array(DocUpdateSchema.extend({ id: text.optional() })).min(1, "must list at least one update").optional(),
});

export const DocUpdateProposalSchema = z.strictObject({
  version: z.literal(PROPOSAL_VERSION),
  /** Id of the cycle's root request entry. */
  cycle_id: text,
  /** The entry this proposal answers. */
  request_entry_id: text,
  summary: text,
  created_at: z.iso.datetime(),
  updates: z.array(DocUpdateSchema).min(1),
});
export type DocUpdateProposal = z.infer<typeof DocUpdateProposalSchema>;

export const ReviewDecisionSchema = z.strictObject({
  update_id: text,
  path: text,
  decision: z.enum(["accept", "reject"]),
  /** Why an update was refused (empty when accepted). */
  reasons: z.array(z.string()),
  /** Line counts of the document before and after the update (before is null for a new file). */
  lines_before: z.number().int().nonnegative().nullable(),
  lines_after: z.number().int().nonnegative().nullable(),
});
export type ReviewDecision = z.infer<typeof ReviewDecisionSchema>;

export const DocUpdateReviewSchema = z.strictObject({
  version: z.literal(REVIEW_VERSION),
  cycle_id: text,
  proposal_summary: text,
  created_at: z.iso.datetime(),
  decisions: z.array(ReviewDecisionSchema).min(1),
  /** The accepted updates, whole, so that Tsugu needs only the review. */
  accepted: z.array(DocUpdateSchema),
});
export type DocUpdateReview = z.infer<typeof DocUpdateReviewSchema>;

/** JSON Schemas published under schemas/ (scripts/schemas.ts). */
export const LANE_PUBLISHED_SCHEMAS = [
  { name: "doc-update-proposal-v1", schema: DocUpdateProposalSchema, io: "output" as const },
  { name: "doc-update-review-v1", schema: DocUpdateReviewSchema, io: "output" as const },
];
