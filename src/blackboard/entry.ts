// The board's entry without its zod schema: the statuses, the spec's field names and the entry's
// content. The board's reads (`bb list`, a project's board) use these and never load zod.
import { randomHex } from "../core/index.js";
import type { BoardContext } from "./context.js";
import type { Entry, EntryInput } from "./schema.js";

export const STATUSES = ["open", "in_progress", "done", "error", "canceled"] as const;
export type Status = (typeof STATUSES)[number];

/** The fields Blackboard Core Spec v1 §2 defines, in its order (schema.ts checks it names each of its fields). */
export const SPEC_FIELDS = [
  "id",
  "from",
  "to",
  "project_id",
  "kind",
  "status",
  "payload",
  "target_docs",
  "created_at",
  "updated_at",
  "source_issue",
  "source_comment_id",
  "source_run_id",
  "note",
] as const;

/** The blackboard type in the marker of newly posted GitHub comments. */
export const DEFAULT_BLACKBOARD_TYPE = "doc_update_v1";

/** A fresh id: project, time and randomness (the spec asks ids never to collide). */
export function newId(ctx: BoardContext, kind?: string): string {
  const stamp = new Date(ctx.now().ms)
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d+Z$/, "Z");
  return `${ctx.projectId}${kind ? `-${kind}` : ""}-${stamp}-${randomHex(3)}`;
}

/** The fields that make an entry what it is; a re-post with the same content is a no-op. */
export function entryContent(e: Entry | EntryInput): Record<string, unknown> {
  return {
    ...extraFields(e),
    from: e.from,
    to: e.to,
    project_id: e.project_id,
    kind: e.kind,
    payload: e.payload ?? {},
    target_docs: e.target_docs ?? [],
    source_issue: e.source_issue,
    source_comment_id: e.source_comment_id,
    source_run_id: e.source_run_id,
    note: e.note,
  };
}

/** An entry as stored: the entry plus the store's bookkeeping (never part of the entry JSON). */
export interface StoredEntry {
  entry: Entry;
  /** Optimistic-concurrency version, +1 on every write. */
  version: number;
  /** Worker holding the claim, while the entry is in_progress under a lease. */
  claimed_by: string | null;
  lease_expires_at: string | null;
}

export interface HistoryRecord {
  seq: number;
  entry_id: string;
  version: number;
  at: string;
  actor: string;
  action: string;
  from_status: Status | null;
  to_status: Status;
  /** What changed: field → {from, to}; for a post or import, the whole entry. */
  changes: Record<string, unknown>;
}

/** The top-level fields beyond the spec's (kept as they came), e.g. `payload_ref`. */
export function extraFields(e: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(e))
    if (!(SPEC_FIELDS as readonly string[]).includes(k) && v !== undefined) out[k] = v;
  return out;
}
