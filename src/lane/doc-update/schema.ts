/**
 * Wire formats of the doc_update lane, as the origin's documents define them: the proposal Aya
 * writes (doc_update_proposal_v1: `schema_version`, `updates[].target.path`, a Markdown suggestion),
 * the review Sho writes (doc_update_review_v1: `overall_assessment.risk_level`, `update_judgements`,
 * and `target_files[].final_content`, the whole new text of each file Tsugu replaces), and the PM
 * snapshot Gen writes (pm_snapshot_v1). Each keeps fields it does not know (the origin's writers add
 * some); pmagent adds a few of its own (`cycle_id`, an update's `id` and `apply_as`), which readers
 * of the origin's spec ignore. pmagent's earlier formats (`version`, `accepted`) are still read.
 */
import { z } from "zod";
import { isIsoWithZone } from "../../core/index.js";

export const PROPOSAL_VERSION = "doc_update_proposal_v1";
export const REVIEW_VERSION = "doc_update_review_v1";
export const SNAPSHOT_VERSION = "pm_snapshot_v1";

/**
 * How pmagent places a suggestion: append it at the end, replace the whole document, create a new
 * file, or replace the section whose heading the update's `section_hint` names.
 */
export const CHANGE_TYPES = ["append", "replace", "create", "section"] as const;
export type ChangeType = (typeof CHANGE_TYPES)[number];

/** The review's only change type (review spec §3.4): Tsugu replaces the whole file. */
export const REPLACE_WHOLE_FILE = "replace_whole_file";
/** The review mode Tsugu applies (apply spec §2, §4), and what pmagent's Sho writes. */
export const AUTO_ACCEPT_MODE = "auto_accept_v1";
export const RISK_LEVELS = ["low", "medium", "high"] as const;
export type RiskLevel = (typeof RISK_LEVELS)[number];

const text = z.string().trim().min(1, "must not be empty");
const zoned = z
  .string()
  .refine(isIsoWithZone, "must be an ISO 8601 date-time with a time zone, e.g. 2025-11-24T16:30:00+09:00");

/** One update as pmagent works on it (and as a Human request may list it in `payload.details.updates`). */
export const DocUpdateSchema = z.strictObject({
  id: text,
  /** Repository-relative path of the document. */
  path: text,
  reason: text,
  change_type: z.enum(CHANGE_TYPES),
  suggested_markdown: text,
  /** The heading the update is about (required by change_type "section"). */
  section_hint: text.optional(),
});
export type DocUpdate = z.infer<typeof DocUpdateSchema>;

/** What a Human request may carry in `payload.details` (updates without ids get u1, u2, …). */
export const DocUpdateRequestDetailsSchema = z.looseObject({
  request: z.string().optional(),
  updates: z
    .array(DocUpdateSchema.extend({ id: text.optional() }))
    .min(1, "must list at least one update")
    .optional(),
});

// ---- doc_update_proposal_v1 ----------------------------------------------------------------

export const ProposalUpdateSchema = z.looseObject({
  /** pmagent's name for the update (u1, u2, …); the origin's updates have none. */
  id: text.optional(),
  target: z.looseObject({ path: text, doc_type: z.string().optional(), section_hint: z.string().optional() }),
  reason: z.string().optional(),
  /** The origin's vocabulary (add, edit_paragraph, append_list_item, other). */
  change_type: text,
  suggestion_markdown: z.string(),
  confidence: z.string().optional(),
  /** pmagent's exact placement, when it wrote the proposal (else derived from change_type). */
  apply_as: z.enum(CHANGE_TYPES).optional(),
});
export type ProposalUpdate = z.infer<typeof ProposalUpdateSchema>;

export const DocUpdateProposalSchema = z.looseObject({
  schema_version: z.literal(PROPOSAL_VERSION),
  project_id: text,
  generated_at: zoned,
  summary: z.string().optional(),
  updates: z.array(ProposalUpdateSchema),
  no_change: z.array(z.looseObject({ path: text, reason: z.string().optional() })).optional(),
  notes: z.array(z.string()).optional(),
  /** pmagent: the cycle's root request and the entry this proposal answers. */
  cycle_id: text.optional(),
  request_entry_id: text.optional(),
});
export type DocUpdateProposal = z.infer<typeof DocUpdateProposalSchema>;

/** pmagent's proposal before it wrote the origin's (read, never written). */
export const LegacyProposalSchema = z.strictObject({
  version: z.literal(PROPOSAL_VERSION),
  cycle_id: text,
  request_entry_id: text,
  summary: text,
  created_at: z.iso.datetime(),
  updates: z.array(DocUpdateSchema).min(1),
});

// ---- doc_update_review_v1 ------------------------------------------------------------------

export const UpdateJudgementSchema = z.looseObject({
  target_path: text,
  section_hint: z.string().optional(),
  decision: z.enum(["accept", "reject"]),
  reason: z.string(),
  suggestion_override: z.string().nullable().optional(),
  /** pmagent: the update judged, and the document's line counts before and after it. */
  update_id: text.optional(),
  lines_before: z.number().int().nonnegative().nullable().optional(),
  lines_after: z.number().int().nonnegative().nullable().optional(),
});
export type UpdateJudgement = z.infer<typeof UpdateJudgementSchema>;

export const TargetFileSchema = z.looseObject({
  target: z.looseObject({ path: text }),
  change_type: z.literal(REPLACE_WHOLE_FILE),
  final_content: z.string(),
  risk: text,
  reviewer_comment: z.string().optional(),
});
export type TargetFile = z.infer<typeof TargetFileSchema>;

export const DocUpdateReviewSchema = z.looseObject({
  schema_version: z.literal(REVIEW_VERSION),
  project_id: text,
  proposal_ref: text,
  generated_at: zoned,
  review_mode: z.string().optional(),
  overall_assessment: z.looseObject({ summary: z.string(), risk_level: z.enum(RISK_LEVELS) }),
  update_judgements: z.array(UpdateJudgementSchema),
  target_files: z.array(TargetFileSchema).optional(),
  notes: z.array(z.string()).optional(),
  cycle_id: text.optional(),
});
export type DocUpdateReview = z.infer<typeof DocUpdateReviewSchema>;

/** pmagent's review before it wrote the origin's (read, never written): the accepted updates, not their result. */
export const LegacyReviewSchema = z.strictObject({
  version: z.literal(REVIEW_VERSION),
  cycle_id: text,
  proposal_summary: text,
  created_at: z.iso.datetime(),
  decisions: z.array(
    z.strictObject({
      update_id: text,
      path: text,
      decision: z.enum(["accept", "reject"]),
      reasons: z.array(z.string()),
      lines_before: z.number().int().nonnegative().nullable(),
      lines_after: z.number().int().nonnegative().nullable(),
    }),
  ),
  accepted: z.array(DocUpdateSchema),
});
export type LegacyReview = z.infer<typeof LegacyReviewSchema>;

// ---- pm_snapshot_v1 ------------------------------------------------------------------------

const level = z.enum(["high", "medium", "low"]);
export const PmSnapshotSchema = z.looseObject({
  schema_version: z.literal(SNAPSHOT_VERSION),
  project_id: text,
  generated_at: zoned,
  current: z.looseObject({ summary: z.string(), bullets: z.array(z.string()) }),
  goals: z.looseObject({ short_term: z.array(z.string()), mid_term: z.array(z.string()) }),
  gaps: z.array(z.string()),
  next_actions: z.array(
    z.looseObject({
      id: text,
      title: text,
      details: z.string(),
      evidence_refs: z.array(z.string()),
      links: z.array(z.string()),
      impact: level,
      effort: level,
      status: z.enum(["todo", "in_progress", "done"]),
    }),
  ),
  evidence: z.array(z.looseObject({ kind: text, path: text, summary: z.string() })),
  notes: z.array(z.string()),
});
export type PmSnapshot = z.infer<typeof PmSnapshotSchema>;

/** JSON Schemas published under schemas/ (scripts/schemas.ts). */
export const LANE_PUBLISHED_SCHEMAS = [
  { name: "doc-update-proposal-v1", schema: DocUpdateProposalSchema, io: "output" as const },
  { name: "doc-update-review-v1", schema: DocUpdateReviewSchema, io: "output" as const },
  { name: "pm-snapshot-v1", schema: PmSnapshotSchema, io: "output" as const },
];
