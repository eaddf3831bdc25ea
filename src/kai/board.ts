import type { Blackboard, Entry, EntryOutline, HistoryRecord } from "../blackboard/index.js";
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

/** An entry outside the cycles an answer shows: where it stood, without its content. */
function outlineEvidence(e: EntryOutline): BoardEntryEvidence {
  const iso = (ms: number) => new Date(ms).toISOString();
  return { id: e.id, from: e.from, to: e.to, kind: e.kind, status: e.status, created_at: iso(e.created_ms), updated_at: iso(e.updated_ms), source_issue: null, source_comment_id: null, source_run_id: null, summary: "", refs: {}, target_docs: [], outline: true };
}

/** A whole entry with the status and last change its outline found at the cutoff. */
function fullEvidence(entry: Entry, at: EntryOutline): BoardEntryEvidence {
  if (at.basis === "stored") return toEvidence(entry, entry.status, entry.updated_at);
  if (at.basis === "posted") return toEvidence(entry, "open", entry.created_at);
  return toEvidence(entry, at.status, new Date(at.updated_ms).toISOString());
}

/**
 * The part of the blackboard a lane's answers need, as it stood at the window's end, read without
 * loading every entry:
 *
 * - every root entry of the lane (a human's request to one of its roles), for cycle numbering,
 *   as an outline from an index (no payload);
 * - the outlines of the entries changed since the window's start, since the newest root, and back
 *   to the last completed cycle, so each of those cycles is whole (a follow-up is written after its
 *   root, so everything changed since the root holds it); a cycle with a change inside the window
 *   is read back to its root too;
 * - whole entries (payload, refs, issue and comment ids) only for the cycles an answer can show:
 *   the latest, the last completed, and those changed inside the window.
 *
 * Cycles built from this are the same as from the whole board (`collectBoard`) for everything
 * lane_status and what_changed report; the other cycles appear as their root's outline only.
 */
export async function collectLaneBoard(board: Blackboard, lane: LaneConfig, humans: readonly string[], window: { since: Date; until: Date }): Promise<BoardEntryEvidence[]> {
  const cut = window.until.getTime();
  const since = window.since.getTime();
  const roleKinds = new Map(lane.roles.map((r) => [r.name, new Set(r.allowed_kinds)]));
  const roots = (await board.outline({ at: cut, from: humans })).filter((e) => roleKinds.get(e.to)?.has(e.kind) === true);
  if (roots.length === 0) return [];
  const rootById = new Map(roots.map((r) => [r.id, r]));
  /** The cycle an entry belongs to: the longest root id it extends with `-suffix` parts (as `laneCycles`). */
  const rootOf = (id: string): EntryOutline | undefined => {
    const self = rootById.get(id);
    if (self) return self;
    for (let i = id.lastIndexOf("-"); i > 0; i = id.lastIndexOf("-", i - 1)) {
      const root = rootById.get(id.slice(0, i));
      if (root) return root;
    }
    return undefined;
  };
  // Outlines of entries changed in [fetchedFrom, ∞), extended backwards one range at a time.
  const changed = new Map<string, EntryOutline>();
  let fetchedFrom = Number.POSITIVE_INFINITY;
  const fetchFrom = async (from: number) => {
    if (from >= fetchedFrom) return;
    const rows = await board.outline({ at: cut, updatedSince: from, ...(Number.isFinite(fetchedFrom) ? { updatedBefore: fetchedFrom } : {}) });
    rows.forEach((e) => changed.set(e.id, e));
    fetchedFrom = from;
  };
  const newest = roots.at(-1)!;
  await fetchFrom(Math.min(since, newest.created_ms));
  // Cycles changed inside the window (as of the cutoff) are shown: read each back to its root.
  const touched = new Set<EntryOutline>();
  for (const e of changed.values()) {
    const root = e.updated_ms > since && e.updated_ms <= cut ? rootOf(e.id) : undefined;
    if (root) touched.add(root);
  }
  for (const root of touched) await fetchFrom(root.created_ms);
  // Back from the newest cycle to the last completed one (the lane's end reached, done), reading
  // further back in doubling steps.
  const finalRoles = new Set(lane.roles.filter((r) => r.next === undefined || humans.includes(r.next.to)).map((r) => r.name));
  const members = () => {
    const byRoot = new Map<EntryOutline, EntryOutline[]>();
    for (const e of changed.values()) {
      const root = rootOf(e.id);
      if (root && root.id !== e.id) byRoot.set(root, [...(byRoot.get(root) ?? []), e]);
    }
    return byRoot;
  };
  const isDone = (e: EntryOutline) => finalRoles.has(e.to) && e.status === "done";
  let lastCompleted: EntryOutline | undefined;
  for (let i = roots.length - 1, reach = 1; i >= 0 && !lastCompleted; reach *= 2) {
    const lo = Math.max(0, i - reach + 1);
    await fetchFrom(roots[lo]!.created_ms);
    const byRoot = members();
    for (let j = i; j >= lo && !lastCompleted; j--) {
      const root = roots[j]!;
      if (isDone(root) || (byRoot.get(root) ?? []).some(isDone)) lastCompleted = root;
    }
    i = lo - 1;
  }
  // Whole entries for the cycles an answer shows; outlines for the rest of the cycles read whole.
  const shown = new Set<EntryOutline>([newest, ...touched, ...(lastCompleted ? [lastCompleted] : [])]);
  const byRoot = members();
  const out: EntryOutline[] = [];
  const full: EntryOutline[] = [];
  for (const root of roots) {
    const whole = root.created_ms >= fetchedFrom;
    const list = [root, ...(whole ? (byRoot.get(root) ?? []) : [])];
    (shown.has(root) ? full : out).push(...list);
  }
  const entries = new Map((await board.list({ ids: full.map((e) => e.id) })).map((s) => [s.entry.id, s.entry]));
  return [
    ...out.map(outlineEvidence),
    ...full.map((e) => {
      const entry = entries.get(e.id);
      return entry ? fullEvidence(entry, e) : outlineEvidence(e);
    }),
  ];
}
