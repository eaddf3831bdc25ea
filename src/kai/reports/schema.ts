import { z } from "zod";
import { isIsoWithZone } from "../../core/index.js";
import { MAX_HIGHLIGHTS, REQUEST_TYPES, TIME_WINDOW_DAYS } from "./contract.js";

/**
 * Wire formats of the Kai-0 I/O spec v1 (`kai_request_v1`, `kai_response_v1`, and the payloads
 * `lane_status_v1` and `what_changed_v1`). Field names are the spec's own.
 */

const got = (input: unknown): string => (input === undefined ? "nothing" : JSON.stringify(input));

function wholeNumber(field: string, range: { min: number; max: number }) {
  const message = (iss: { input?: unknown }) =>
    `${field} must be a whole number from ${range.min} to ${range.max}, got ${got(iss.input)}`;
  return z
    .number({ error: message })
    .int({ error: message })
    .min(range.min, { error: message })
    .max(range.max, { error: message });
}

const isoDateTime = z
  .string({ error: (iss) => `expected an ISO 8601 date-time with a zone, got ${got(iss.input)}` })
  .refine(isIsoWithZone, {
    error: (iss) => `expected an ISO 8601 date-time with a zone (e.g. 2026-01-15T10:30:00Z), got ${got(iss.input)}`,
  });

export const ActorTypeSchema = z.enum(["chatgpt", "human", "workflow"], {
  error: (iss) => `expected "chatgpt", "human" or "workflow", got ${got(iss.input)}`,
});

export const LaneRefSchema = z
  .object({
    layer: z.string({ error: (iss) => `expected the lane's layer as a string, got ${got(iss.input)}` }).min(1),
    name: z.string({ error: (iss) => `expected the lane's name as a string, got ${got(iss.input)}` }).min(1),
  })
  .strict();

export const KaiParamsSchema = z
  .object({
    time_window_days: wholeNumber("time_window_days", TIME_WINDOW_DAYS).default(TIME_WINDOW_DAYS.default),
    max_highlights: wholeNumber("max_highlights", MAX_HIGHLIGHTS).default(MAX_HIGHLIGHTS.default),
    /** Extension of v1: answer as of this time instead of now; evidence after it is ignored. */
    as_of: isoDateTime.optional(),
  })
  .strict();

export const KaiRequestSchema = z
  .object({
    version: z.literal("kai_request_v1", { error: (iss) => `expected "kai_request_v1", got ${got(iss.input)}` }),
    request_id: z
      .string({ error: (iss) => `expected a string (a timestamp or UUID), got ${got(iss.input)}` })
      .min(1, { error: "must not be empty" }),
    from: z
      .object({
        actor_type: ActorTypeSchema,
        actor_id: z.string().optional(),
      })
      .strict(),
    project_id: z.string({ error: (iss) => `expected the project id as a string, got ${got(iss.input)}` }).min(1),
    type: z.enum(REQUEST_TYPES, {
      error: (iss) => `unknown type ${got(iss.input)}: expected "lane_status" or "what_changed"`,
    }),
    lane: LaneRefSchema,
    params: KaiParamsSchema.default({
      time_window_days: TIME_WINDOW_DAYS.default,
      max_highlights: MAX_HIGHLIGHTS.default,
    }),
  })
  .strict();

export type KaiRequest = z.output<typeof KaiRequestSchema>;
export type KaiRequestInput = z.input<typeof KaiRequestSchema>;
export type KaiParams = z.output<typeof KaiParamsSchema>;
export type LaneRef = z.output<typeof LaneRefSchema>;

const ts = z.string();
const nullableTs = ts.nullable();

/** A pointer to the evidence behind a statement: an issue, PR, commit, file, entry, run, workflow run. */
export const EvidenceSchema = z
  .object({
    type: z.enum(["issue", "pr", "commit", "file", "entry", "run", "workflow_run", "environment_proposal"]),
    id: z.string(),
    title: z.string().optional(),
    path: z.string().optional(),
    url: z.string().optional(),
    at: z.string().optional(),
  })
  .strict();
export type Evidence = z.output<typeof EvidenceSchema>;

export const StepStatusSchema = z.enum([
  "completed",
  "in_progress",
  "pending",
  "waiting",
  "skipped",
  "error",
  "not_started",
]);
export type StepStatus = z.output<typeof StepStatusSchema>;

export const LatestEntrySchema = z
  .object({
    entry_id: z.string(),
    kind: z.string(),
    entry_status: z.string(),
    blackboard_issue: z.number().int().nullable(),
    blackboard_comment_id: z.string().nullable(),
    actions_workflow: z.string().nullable(),
    actions_run_id: z.string().nullable(),
    artifact_path: z.string().nullable(),
    updated_at: ts,
    summary: z.string(),
  })
  .strict();

export const StepRunSchema = z
  .object({
    run_id: z.string(),
    state: z.string(),
    started_at: ts,
    finished_at: nullableTs,
    waiting_for: z.array(z.string()),
    /** Events the run's sprite emitted (its log, deduplicated). */
    events: z.number().int().min(0),
    artifacts: z.array(z.string()),
    pull_requests: z.array(z.number().int()),
  })
  .strict();

export const StepSchema = z
  .object({
    role: z.string(),
    status: StepStatusSchema,
    latest_entry: LatestEntrySchema.nullable(),
    run: StepRunSchema.nullable(),
  })
  .strict();
export type Step = z.output<typeof StepSchema>;

export const SuggestedActionSchema = z
  .object({
    id: z.string(),
    title: z.string(),
    owner: z.string(),
    priority: z.enum(["high", "medium", "low"]),
    reason: z.string(),
    evidence: z.array(EvidenceSchema),
  })
  .strict();
export type SuggestedAction = z.output<typeof SuggestedActionSchema>;

const tokenCount = z.number().int().min(0);

/** Reported tokens of a set of runs and their cost by the config's prices (null: no prices, or a model without one, named in `unpriced`). */
export const UsageTotalsSchema = z
  .object({
    runs: z.number().int().min(0),
    input_tokens: tokenCount,
    cached_input_tokens: tokenCount,
    output_tokens: tokenCount,
    reasoning_tokens: tokenCount,
    total_tokens: tokenCount,
    cost: z.number().min(0).nullable(),
    unpriced: z.array(z.string()),
  })
  .strict();

export const LaneUsageGroupSchema = UsageTotalsSchema.extend({ key: z.string() }).strict();
export type LaneUsageGroup = z.output<typeof LaneUsageGroupSchema>;

/** The lane's runs' usage in total and per role, cycle (root entry id) and day (in the answer's zone). */
export const LaneUsageSchema = z
  .object({
    total: UsageTotalsSchema,
    by_role: z.array(LaneUsageGroupSchema),
    by_cycle: z.array(LaneUsageGroupSchema),
    by_day: z.array(LaneUsageGroupSchema),
  })
  .strict();
export type LaneUsage = z.output<typeof LaneUsageSchema>;

export const LaneStatusSchema = z
  .object({
    kind: z.literal("lane_status_v1"),
    project_id: z.string(),
    lane: LaneRefSchema,
    as_of: ts,
    /**
     * The spec puts `steps` at the top level of the payload, beside `cycle`, keyed by role
     * (`aya`, `sho`, `tsugu`, …: the lane's role names in lower case) so a reader writes
     * `steps.sho.status`; keys follow the lane's order.
     */
    steps: z.record(z.string(), StepSchema),
    cycle: z
      .object({
        latest_cycle_id: z.string().nullable(),
        root_entry_id: z.string().nullable(),
        /** The spec's enum; null with `latest_cycle_id: null` when the lane has no cycle yet (a note says so). */
        status: z.enum(["completed", "in_progress", "blocked"]).nullable(),
        started_at: nullableTs,
        completed_at: nullableTs,
        /** Where the cycle was found: the blackboard, else git (a merged apply to STATE), else the STATE document's lane section. */
        found_in: z.enum(["blackboard", "git", "state_doc"]).nullable(),
        /** The cycle's root entry, or the PR, commit and STATE file that record it. */
        evidence: z.array(EvidenceSchema),
        /** The cycle's branch (pmagent's extension), when its runs worked on one. */
        branch: z.string().nullable().optional(),
        /** The cycle's latest commit: the base's merge commit once merged, else the branch's head its last run handed on. */
        commit: z.string().nullable().optional(),
        /** True once the cycle's pull request was merged. */
        merged: z.boolean().optional(),
      })
      .strict(),
    state_view: z
      .object({
        state_file: z.string(),
        section_anchor: z.string().nullable(),
        digest: z.string(),
        known_gaps: z.array(z.string()),
        updated_at: nullableTs,
      })
      .strict(),
    next_suggested_actions: z.array(SuggestedActionSchema),
    /** What the lane's runs (those Kai read) spent: tokens they reported, and cost. Absent when runs were not read. */
    usage: LaneUsageSchema.optional(),
  })
  .strict();
export type LaneStatus = z.output<typeof LaneStatusSchema>;

export const HighlightSchema = z
  .object({
    rank: z.number().int().min(1),
    category: z.string(),
    title: z.string(),
    summary: z.string(),
    evidence: z.array(EvidenceSchema).min(1),
  })
  .strict();
export type Highlight = z.output<typeof HighlightSchema>;

export const WorkflowSummarySchema = z
  .object({
    name: z.string(),
    source: z.enum(["github_actions", "pmagent"]),
    runs: z.number().int().min(0),
    failed_runs: z.number().int().min(0),
    latest_status: z.string(),
    latest_run_id: z.string(),
    latest_at: ts,
  })
  .strict();

export const PrSummarySchema = z
  .object({
    number: z.number().int(),
    title: z.string(),
    status: z.enum(["open", "closed", "merged"]),
    impact: z.enum(["high", "medium", "low"]),
    url: z.string().nullable(),
    paths: z.array(z.string()),
  })
  .strict();

export const StateDocChangeSchema = z
  .object({
    path: z.string(),
    change: z.enum(["added", "modified", "deleted", "renamed"]),
    old_path: z.string().nullable(),
    commits: z.number().int().min(1),
    last_commit: z.string(),
    last_changed_at: ts,
  })
  .strict();

export const RiskSchema = z
  .object({
    id: z.string(),
    severity: z.enum(["high", "medium", "low"]),
    summary: z.string(),
    evidence: z.array(EvidenceSchema),
  })
  .strict();
export type Risk = z.output<typeof RiskSchema>;

export const WhatChangedSchema = z
  .object({
    kind: z.literal("what_changed_v1"),
    project_id: z.string(),
    time_window: z.object({ from: z.string(), to: z.string() }).strict(),
    highlights: z.array(HighlightSchema),
    by_category: z
      .object({
        workflows: z.array(WorkflowSummarySchema),
        prs: z.array(PrSummarySchema),
        state_docs: z.array(StateDocChangeSchema),
      })
      .strict(),
    risks: z.array(RiskSchema),
    open_questions: z.array(z.string()),
  })
  .strict();
export type WhatChanged = z.output<typeof WhatChangedSchema>;

const meta = z.object({ generated_at: ts, kai_version: z.string() }).strict();

export const KaiResponseSchema = z.discriminatedUnion("status", [
  z
    .object({
      version: z.literal("kai_response_v1"),
      request_id: z.string(),
      status: z.literal("ok"),
      meta,
      payload: z.discriminatedUnion("kind", [
        z.object({ kind: z.literal("lane_status_v1"), data: LaneStatusSchema }).strict(),
        z.object({ kind: z.literal("what_changed_v1"), data: WhatChangedSchema }).strict(),
      ]),
      summary_md: z.string(),
      notes: z.array(z.string()),
    })
    .strict(),
  z
    .object({
      version: z.literal("kai_response_v1"),
      /** Echoed when the request had one; null when it could not be read. */
      request_id: z.string().nullable(),
      status: z.literal("error"),
      meta,
      payload: z.null(),
      summary_md: z.string(),
      notes: z.array(z.string()).min(1),
    })
    .strict(),
]);
export type KaiResponse = z.output<typeof KaiResponseSchema>;

/** The JSON Schemas published in `schemas/` (requests on the input side: defaults may be left out). */
export const KAI_PUBLISHED_SCHEMAS: Array<{ name: string; schema: z.ZodType; io: "input" | "output" }> = [
  { name: "kai_request_v1", schema: KaiRequestSchema, io: "input" },
  { name: "kai_response_v1", schema: KaiResponseSchema, io: "output" },
  { name: "lane_status_v1", schema: LaneStatusSchema, io: "output" },
  { name: "what_changed_v1", schema: WhatChangedSchema, io: "output" },
];
