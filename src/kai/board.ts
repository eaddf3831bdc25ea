import type { Blackboard, Entry, HistoryRecord } from "../blackboard/index.js";
import type { BoardEntryEvidence } from "./evidence.js";

function issueNumber(ref: number | string | undefined): number | null {
  if (typeof ref === "number") return Number.isInteger(ref) ? ref : null;
  const m = typeof ref === "string" ? /^#?(\d+)$/.exec(ref.trim()) : null;
  return m ? Number(m[1]) : null;
}

const refString = (ref: number | string | undefined): string | null => (ref === undefined || ref === "" ? null : String(ref));

function toEvidence(entry: Entry, status: string, updated_at: string): BoardEntryEvidence {
  const payload = entry.payload;
  const refs = payload.refs !== null && typeof payload.refs === "object" && !Array.isArray(payload.refs) ? (payload.refs as Record<string, unknown>) : {};
  return {
    id: entry.id,
    from: entry.from,
    to: entry.to,
    kind: entry.kind,
    status,
    created_at: entry.created_at,
    updated_at,
    source_issue: issueNumber(entry.source_issue),
    source_comment_id: refString(entry.source_comment_id),
    source_run_id: refString(entry.source_run_id),
    summary: typeof payload.summary === "string" ? payload.summary : "",
    refs,
    target_docs: entry.target_docs.map((d) => (typeof d === "string" ? d : d.path)),
  };
}

/**
 * The blackboard as it stood at `cutoff`: entries created by then, each with the status it had
 * then. An entry not changed since (updated_at ≤ cutoff) is taken as stored; for one changed
 * later, its last history record at or before the cutoff gives the status. An entry imported
 * after the cutoff with an older created_at has no such record: it was then as first posted, open.
 */
export async function collectBoard(board: Blackboard, cutoff: Date): Promise<BoardEntryEvidence[]> {
  const cut = cutoff.getTime();
  const entries = (await board.list()).map((s) => s.entry).filter((e) => Date.parse(e.created_at) <= cut);
  const changedLater = entries.filter((e) => Date.parse(e.updated_at) > cut);
  const lastBefore = new Map<string, HistoryRecord>();
  if (changedLater.length > 0) {
    const ids = new Set(changedLater.map((e) => e.id));
    for (const record of await board.history(undefined, { untilMs: cut })) {
      if (ids.has(record.entry_id)) lastBefore.set(record.entry_id, record);
    }
  }
  return entries.map((e) => {
    if (Date.parse(e.updated_at) <= cut) return toEvidence(e, e.status, e.updated_at);
    const record = lastBefore.get(e.id);
    return record ? toEvidence(e, record.to_status, record.at) : toEvidence(e, "open", e.created_at);
  });
}
