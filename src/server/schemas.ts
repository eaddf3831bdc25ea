import { z } from "zod";
import { EntrySchema, StatusSchema, STATUSES } from "../blackboard/index.js";
import { ACTION_STATES, PROPOSAL_STATUSES, RUN_STATES } from "../lattice/index.js";

/** Request and response shapes of the HTTP API and MCP tools (one definition for both). */
export const IdParams = z.object({ id: z.string().min(1, "expected a non-empty id") }).strict();

const limit = z.coerce.number().int("limit must be a whole number").min(1, "limit must be at least 1").max(1000, "limit must be at most 1000");

/** `status` may list several statuses, comma-separated (`open,in_progress`). */
const statusList = z
  .string()
  .transform((s) => s.split(",").map((x) => x.trim()))
  .pipe(z.array(StatusSchema, { error: `expected statuses among ${STATUSES.join(", ")}` }));

export const EntryListQuery = z
  .object({ status: statusList.optional(), to: z.string().min(1).optional(), from: z.string().min(1).optional(), kind: z.string().min(1).optional(), limit: limit.optional() })
  .strict();

export const StoredEntrySchema = z.object({ entry: EntrySchema, version: z.number().int(), claimed_by: z.string().nullable(), lease_expires_at: z.string().nullable() });

export const StatusChangeBody = z
  .object({
    status: StatusSchema,
    /** Optimistic concurrency: refused with 409 unless the entry is still at this version. */
    expected_version: z.number().int().min(1).optional(),
    note: z.string().max(2000).optional(),
  })
  .strict();

export const RunListQuery = z.object({ state: z.enum(RUN_STATES).optional(), role: z.string().min(1).optional(), entry: z.string().min(1).optional(), limit: limit.optional() }).strict();

/** `order=seq` lists events as stored, so `after` (the last seq seen) and `limit` page through a long run. */
export const RunEventsQuery = z
  .object({ type: z.string().min(1).optional(), after: z.coerce.number().int().min(0).optional(), order: z.enum(["outbox", "seq"]).optional(), limit: limit.optional() })
  .strict();

export const RunLogsQuery = z.object({ stream: z.enum(["stdout", "stderr", "supervisor"]).optional() }).strict();

export const CancelBody = z.object({ reason: z.string().min(1).max(500).optional() }).strict().default({});

export const ResumeBody = z
  .object({
    /** Checked against the WAITING event's expected_inputs. */
    inputs: z.record(z.string(), z.unknown()),
    context: z.record(z.string(), z.unknown()).optional(),
  })
  .strict();

export const ActionListQuery = z.object({ run: z.string().min(1).optional(), state: z.enum(ACTION_STATES).optional() }).strict();

export const PrListQuery = z.object({ state: z.enum(["open", "closed", "merged"]).optional() }).strict();

export const ProposalListQuery = z.object({ status: z.enum(PROPOSAL_STATUSES).optional(), role: z.string().min(1).optional() }).strict();

export const GuardQuery = z.object({ mode: z.enum(["STRICT", "HINT"]).default("HINT") }).strict();

export const EmptyQuery = z.object({}).strict();
