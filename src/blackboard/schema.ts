import { z } from "zod";
import { isIsoWithZone, MAX_JSON_DEPTH, tooDeepMessage, valueTooDeep } from "../core/index.js";
import { STATUSES, type SPEC_FIELDS } from "./entry.js";

export {
  STATUSES,
  SPEC_FIELDS,
  entryContent,
  extraFields,
  type Status,
  type StoredEntry,
  type HistoryRecord,
} from "./entry.js";

export const StatusSchema = z.enum(STATUSES);

const Timestamp = z.string().refine(isIsoWithZone, {
  // A date-time that is fine but for its zone gets told so: the spec asks for one (§2).
  error: (issue) =>
    typeof issue.input === "string" && /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/.test(issue.input)
      ? `"${issue.input}" has no time zone: add one (Z or ±hh:mm), e.g. 2025-11-30T02:30:00+09:00`
      : "expected an ISO 8601 date-time with a time zone, naming a real date and time, e.g. 2025-11-30T02:30:00+09:00",
});
/** Text kept in its own column: PostgreSQL text cannot hold U+0000, so neither store takes it. */
const Text = z.string().refine((s) => !s.includes("\0"), "must not contain U+0000 (NUL)");
const Name = Text.min(1);
const Ref = z.union([z.number(), Text]);

export const TargetDocObjectSchema = z.object({ path: Name, section: Text.optional() }).strict();

/** Either form of the spec, not a mix: an array of paths, or an array of {path, section}. */
export const TargetDocsSchema = z.union([z.array(Name), z.array(TargetDocObjectSchema)], {
  error: "expected an array of paths or an array of {path, section} objects",
});

/** The entry is one level, so its payload may nest one level less than MAX_JSON_DEPTH. */
const Payload = z
  .record(z.string(), z.unknown())
  .refine((p) => !valueTooDeep(p, MAX_JSON_DEPTH - 1), `the payload ${tooDeepMessage(MAX_JSON_DEPTH - 1)}`);

const entryFields = {
  id: Name,
  from: Name,
  to: Name,
  project_id: Name,
  kind: Name,
  status: StatusSchema,
  payload: Payload,
  target_docs: TargetDocsSchema,
  created_at: Timestamp,
  updated_at: Timestamp,
  source_issue: Ref.optional(),
  source_comment_id: Ref.optional(),
  source_run_id: Ref.optional(),
  note: Text.optional(),
} satisfies Record<(typeof SPEC_FIELDS)[number], z.ZodType>;

/**
 * A blackboard entry: the spec's fields (§2) validated strictly, and every other top-level field
 * kept as it came. The origin's workflows write more than the spec lists (Aya's `payload_ref`,
 * core spec §6.1) and an entry must round-trip through store, export, comment and sync intact.
 */
export const EntrySchema = z.object(entryFields).catchall(z.unknown());
export type Entry = z.infer<typeof EntrySchema>;

/**
 * What `bb post` accepts: the spec's form, with `id`, `from`, `project_id`, `status`, `target_docs`,
 * `payload` and the timestamps filled in when absent.
 */
export const EntryInputSchema = z
  .object({
    ...entryFields,
    id: entryFields.id.optional(),
    from: entryFields.from.optional(),
    project_id: entryFields.project_id.optional(),
    status: entryFields.status.optional(),
    payload: entryFields.payload.optional(),
    target_docs: entryFields.target_docs.optional(),
    created_at: entryFields.created_at.optional(),
    updated_at: entryFields.updated_at.optional(),
  })
  .catchall(z.unknown());
export type EntryInput = z.infer<typeof EntryInputSchema>;
