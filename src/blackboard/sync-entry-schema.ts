import { z } from "zod";
import { isIsoWithZone } from "../core/index.js";

// Stand-in for the blackboard core's EntrySchema until it lands on main (replaced at merge).
const isoWithZone = z.string().refine(isIsoWithZone, "expected an ISO 8601 date-time with a time zone");
const id = z.union([z.number(), z.string()]);

export const EntrySchema = z.object({
  id: z.string().min(1),
  from: z.string().min(1),
  to: z.string().min(1),
  project_id: z.string().min(1),
  kind: z.string().min(1),
  status: z.enum(["open", "in_progress", "done", "error", "canceled"]),
  payload: z.record(z.string(), z.unknown()),
  target_docs: z.union([z.array(z.string()), z.array(z.object({ path: z.string().min(1), section: z.string().optional() }))]),
  created_at: isoWithZone,
  updated_at: isoWithZone,
  source_issue: id.optional(),
  source_comment_id: id.optional(),
  source_run_id: id.optional(),
  note: z.string().optional(),
});

export type Entry = z.output<typeof EntrySchema>;
