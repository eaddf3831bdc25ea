import { z } from "zod";
import { EntrySchema, StatusSchema, STATUSES } from "../blackboard/index.js";
import { ACTION_STATES, PROPOSAL_STATUSES, RUN_STATES } from "../lattice/index.js";
import { MAX_PAGE_LIMIT, PAGE_ORDERS } from "../store/index.js";

/** Request and response shapes of the HTTP API and MCP tools (one definition for both). */
export const IdParams = z.object({ id: z.string().min(1, "expected a non-empty id") }).strict();

/**
 * Every list pages by cursor: `limit` (default 50, at most 500), `order` (newest or oldest; each
 * list documents its default) and `cursor` (the `next` of the previous page, unchanged).
 */
export const PageQuery = {
  limit: z.coerce
    .number({ error: "limit must be a whole number" })
    .int("limit must be a whole number")
    .min(1, "limit must be at least 1")
    .max(MAX_PAGE_LIMIT, `limit must be at most ${MAX_PAGE_LIMIT}`)
    .optional(),
  order: z.enum(PAGE_ORDERS, { error: `order must be one of ${PAGE_ORDERS.join(", ")}` }).optional(),
  cursor: z.string().min(1, "cursor must be the next of a previous page (leave it out for the first page)").optional(),
};

/** A page of a list: its items and the cursor of the next page (null on the last). */
export const pageOf = <T extends z.ZodType>(item: T) =>
  z.object({
    items: z.array(item),
    next: z.string().nullable().describe("pass as cursor for the next page; null on the last page"),
  });

/** The paging part of a validated list query, as the stores take it. */
export function pageRequest(q: { limit?: number; order?: (typeof PAGE_ORDERS)[number]; cursor?: string }): {
  limit?: number;
  order?: (typeof PAGE_ORDERS)[number];
  cursor?: string;
} {
  return { limit: q.limit, order: q.order, cursor: q.cursor };
}

/** `status` may list several statuses, comma-separated (`open,in_progress`). */
const statusList = z
  .string()
  .transform((s) => s.split(",").map((x) => x.trim()))
  .pipe(z.array(StatusSchema, { error: `expected statuses among ${STATUSES.join(", ")}` }));

export const EntryListQuery = z
  .object({
    status: statusList.optional(),
    to: z.string().min(1).optional(),
    from: z.string().min(1).optional(),
    kind: z.string().min(1).optional(),
    ...PageQuery,
  })
  .strict();

export const StoredEntrySchema = z.object({
  entry: EntrySchema,
  version: z.number().int(),
  claimed_by: z.string().nullable(),
  lease_expires_at: z.string().nullable(),
});

export const StatusChangeBody = z
  .object({
    status: StatusSchema,
    /** Optimistic concurrency: refused with 409 unless the entry is still at this version. */
    expected_version: z.number().int().min(1).optional(),
    note: z.string().max(2000).optional(),
  })
  .strict();

export const RunListQuery = z
  .object({
    state: z.enum(RUN_STATES).optional(),
    role: z.string().min(1).optional(),
    entry: z.string().min(1).optional(),
    ...PageQuery,
  })
  .strict();

/** A run's events in the order they were stored (seq). */
export const RunEventsQuery = z.object({ type: z.string().min(1).optional(), ...PageQuery }).strict();

export const HistoryQuery = z.object(PageQuery).strict();

export const RunLogsQuery = z.object({ stream: z.enum(["stdout", "stderr", "supervisor"]).optional() }).strict();

export const CancelBody = z
  .object({ reason: z.string().min(1).max(500).optional() })
  .strict()
  .default({});

export const ResumeBody = z
  .object({
    /** Checked against the WAITING event's expected_inputs. */
    inputs: z.record(z.string(), z.unknown()),
    context: z.record(z.string(), z.unknown()).optional(),
    /** A follow-up message to the agent, beside the inputs: resumed into the same agent session (in the resume's context.message). */
    message: z.string().optional(),
    /** Leave the resume to any worker of the run's role (any machine) instead of relaunching the sprite under this server. */
    queue: z.boolean().optional(),
  })
  .strict();

export const ActionListQuery = z
  .object({ run: z.string().min(1).optional(), state: z.enum(ACTION_STATES).optional(), ...PageQuery })
  .strict();

export const PullCommentBody = z
  .object({
    body: z.string().min(1),
    path: z.string().min(1).nullable().optional(),
    line: z.number().int().min(1).nullable().optional(),
  })
  .strict();
export const PrListQuery = z.object({ state: z.enum(["open", "closed", "merged"]).optional(), ...PageQuery }).strict();

export const ProposalListQuery = z
  .object({ status: z.enum(PROPOSAL_STATUSES).optional(), role: z.string().min(1).optional(), ...PageQuery })
  .strict();

export const GuardQuery = z.object({ mode: z.enum(["STRICT", "HINT"]).default("HINT") }).strict();

export const EmptyQuery = z.object({}).strict();
