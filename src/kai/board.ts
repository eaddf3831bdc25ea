import type { Blackboard, Entry, HistoryRecord } from "../blackboard/index.js";
import type { LaneConfig } from "../config/index.js";
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

/** An entry's status and last change at `cut`, from one history query (for an entry changed later). */
async function atCutoff(board: Blackboard, e: Entry, cut: number): Promise<BoardEntryEvidence> {
  if (Date.parse(e.updated_at) <= cut) return toEvidence(e, e.status, e.updated_at);
  const record = (await board.history(e.id, { untilMs: cut })).at(-1);
  return record ? toEvidence(e, record.to_status, record.at) : toEvidence(e, "open", e.created_at);
}

/**
 * The part of the blackboard a lane's answers need, without reading every entry: the lane's root
 * entries (for cycle numbering), every entry changed since the window's start or still open or in
 * progress, and all entries of the latest cycles back to the last completed one. Apart from the
 * roots, every query is an indexed range (recently updated, or open for an addressee). Cycles built from
 * this are the same as from the whole board for everything lane_status and what_changed report.
 */
export async function collectLaneBoard(board: Blackboard, lane: LaneConfig, humans: readonly string[], window: { since: Date; until: Date }): Promise<BoardEntryEvidence[]> {
  const cut = window.until.getTime();
  const found = new Map<string, Entry>();
  const add = (list: Array<{ entry: Entry }>) => list.forEach((s) => Date.parse(s.entry.created_at) <= cut && found.set(s.entry.id, s.entry));
  const roleKinds = new Map(lane.roles.map((r) => [r.name, new Set(r.allowed_kinds)]));
  const roots: Entry[] = [];
  for (const human of humans) {
    for (const { entry } of await board.list({ from: human })) if (roleKinds.get(entry.to)?.has(entry.kind)) roots.push(entry);
  }
  add(roots.map((entry) => ({ entry })));
  add(await board.list({ updatedSince: window.since.getTime() }));
  // Open and in-progress entries, per addressee: these queries follow the pick index.
  for (const to of new Set([...lane.roles.map((r) => r.name), ...humans])) add(await board.list({ to, status: ["open", "in_progress"] }));
  const finalRoles = new Set(lane.roles.filter((r) => r.next === undefined).map((r) => r.name));
  const created = new Map(roots.map((r) => [r.id, Date.parse(r.created_at)]));
  const newestFirst = roots.filter((r) => created.get(r.id)! <= cut).sort((a, b) => created.get(b.id)! - created.get(a.id)! || b.id.localeCompare(a.id));
  const out = new Map<string, BoardEntryEvidence>();
  for (const root of newestFirst) {
    // A cycle's follow-ups are all written after its root: everything updated since holds them.
    add(await board.list({ updatedSince: created.get(root.id)! }));
    const members = [...found.values()].filter((e) => e.id === root.id || e.id.startsWith(`${root.id}-`));
    const evidence = await Promise.all(members.map((e) => atCutoff(board, e, cut)));
    evidence.forEach((e) => out.set(e.id, e));
    if (evidence.some((e) => finalRoles.has(e.to) && e.status === "done")) break;
  }
  for (const e of found.values()) {
    if (out.has(e.id)) continue;
    out.set(e.id, Date.parse(e.updated_at) <= cut ? toEvidence(e, e.status, e.updated_at) : await atCutoff(board, e, cut));
  }
  return [...out.values()];
}
