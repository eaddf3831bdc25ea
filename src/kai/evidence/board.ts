import type { Blackboard, Entry, EntryOutline, HistoryRecord } from "../../blackboard/index.js";
import { finalKinds, type LaneConfig } from "../../config/light/index.js";
import type { BoardEntryEvidence } from "./types.js";

function issueNumber(ref: number | string | undefined): number | null {
  if (typeof ref === "number") return Number.isInteger(ref) ? ref : null;
  const m = typeof ref === "string" ? /^#?(\d+)$/.exec(ref.trim()) : null;
  return m ? Number(m[1]) : null;
}

const refString = (ref: number | string | undefined): string | null =>
  ref === undefined || ref === "" ? null : String(ref);

function toEvidence(entry: Entry, status: string, updated_at: string): BoardEntryEvidence {
  const payload = entry.payload;
  const refs =
    payload.refs !== null && typeof payload.refs === "object" && !Array.isArray(payload.refs)
      ? (payload.refs as Record<string, unknown>)
      : {};
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
    ...(payload.details !== null && typeof payload.details === "object" && !Array.isArray(payload.details)
      ? { details: payload.details as Record<string, unknown> }
      : {}),
    ...(entry.payload_ref !== undefined ? { payload_ref: entry.payload_ref } : {}),
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

/** A whole entry with the status and last change its outline found at the cutoff. */
function fullEvidence(entry: Entry, at: EntryOutline): BoardEntryEvidence {
  if (at.basis === "stored") return toEvidence(entry, entry.status, entry.updated_at);
  if (at.basis === "posted") return toEvidence(entry, "open", entry.created_at);
  return toEvidence(entry, at.status, new Date(at.updated_ms).toISOString());
}

/**
 * The part of the blackboard a lane's answers need, as it stood at the window's end: the whole
 * entries of the cycles an answer can show (the latest, the last completed, and those changed
 * inside the window), each root carrying its cycle's number. Read without loading the board:
 *
 * - the newest root (a human's request to one of the lane's roles, of a kind that role picks) and
 *   the number of roots before the ones read come from an index (`outline`, `outlineCount`), so
 *   cycles are numbered without reading every root;
 * - the outlines of the entries changed since the window's start (only with `windowed`, what
 *   what_changed needs) or the newest root, extended back to the root of each cycle changed inside
 *   the window and to the last completed cycle, so each of those cycles is whole (a follow-up is
 *   written after its root, so everything changed since the root holds it; an entry's stored last
 *   change is never before its creation, so every root created since is among them);
 * - the last completed cycle found from the newest entries to the lane's final roles (an index,
 *   `kai_bb_entries_addressed`), in doubling steps: a board with no completed cycle is not walked;
 * - the roots of the entries read that are not among them, by id (an entry belongs to the cycle of
 *   the longest root id it extends with `-suffix` parts, as in `laneCycles`);
 * - whole entries (payload, refs, issue and comment ids) only for the cycles shown.
 *
 * Cycles built from this are the same, with the same numbers, as from the whole board
 * (`collectBoard`) for everything lane_status and what_changed report; other cycles are left out.
 */
export async function collectLaneBoard(
  board: Blackboard,
  lane: LaneConfig,
  humans: readonly string[],
  window: { since: Date; until: Date },
  options: { windowed?: boolean } = {},
): Promise<BoardEntryEvidence[]> {
  const cut = window.until.getTime();
  // lane_status shows no cycle for being changed in the window: without `windowed` the window adds nothing to read.
  const windowed = options.windowed ?? true;
  const since = windowed ? window.since.getTime() : Number.POSITIVE_INFINITY;
  const roleKinds = new Map(lane.roles.map((r) => [r.name, new Set(r.allowed_kinds)]));
  const rootFilter = {
    at: cut,
    from: humans,
    addressed: lane.roles.map((r) => ({ to: r.name, kinds: r.allowed_kinds })),
  };
  const [newest] = await board.outline({ ...rootFilter, newestFirst: true, limit: 1 });
  if (newest === undefined) return [];
  const isRoot = (e: EntryOutline) => humans.includes(e.from) && roleKinds.get(e.to)?.has(e.kind) === true;
  /** Ids looked at so far: a root's outline, or null for an id that is no root at the cutoff. */
  const roots = new Map<string, EntryOutline | null>();
  /** The id cut at each "-" from the right: the cycle is the first of these that is a root. */
  const prefixes = (id: string): string[] => {
    const out: string[] = [];
    for (let i = id.lastIndexOf("-"); i > 0; i = id.lastIndexOf("-", i - 1)) out.push(id.slice(0, i));
    return out;
  };
  const rootOf = (id: string): EntryOutline | undefined => {
    for (const candidate of [id, ...prefixes(id)]) {
      const root = roots.get(candidate);
      if (root) return root;
    }
    return undefined;
  };
  // Outlines of entries changed in [fetchedFrom, ∞), extended backwards one range at a time.
  const changed = new Map<string, EntryOutline>();
  /** The follow-ups read of each cycle, by root id. */
  const byRoot = new Map<string, EntryOutline[]>();
  let fetchedFrom = Number.POSITIVE_INFINITY;
  const fetchFrom = async (from: number) => {
    if (from >= fetchedFrom) return;
    const rows = await board.outline({
      at: cut,
      updatedSince: from,
      ...(Number.isFinite(fetchedFrom) ? { updatedBefore: fetchedFrom } : {}),
    });
    for (const e of rows) {
      changed.set(e.id, e);
      roots.set(e.id, isRoot(e) ? e : null);
    }
    fetchedFrom = from;
    const unknown = [...new Set(rows.flatMap((e) => prefixes(e.id)))].filter((id) => !roots.has(id));
    for (const id of unknown) roots.set(id, null);
    // By id alone (the primary key): with the root filter SQLite would walk the outline index instead.
    if (unknown.length > 0)
      for (const e of await board.outline({ at: cut, ids: unknown })) if (isRoot(e)) roots.set(e.id, e);
    // Every prefix of these rows is known now, so each row's cycle is settled: group the follow-ups.
    for (const e of rows) {
      const root = rootOf(e.id);
      if (!root || root.id === e.id) continue;
      const list = byRoot.get(root.id);
      if (list) list.push(e);
      else byRoot.set(root.id, [e]);
    }
  };
  await fetchFrom(Math.min(since, newest.created_ms));
  // Cycles changed inside the window (as of the cutoff) are shown: read each back to its root.
  const touched = new Set<EntryOutline>();
  for (const e of changed.values()) {
    const root = e.updated_ms > since && e.updated_ms <= cut ? rootOf(e.id) : undefined;
    if (root) touched.add(root);
  }
  await fetchFrom(Math.min(...[...touched].map((r) => r.created_ms)));
  // The last completed cycle (the lane's end reached, done): found from the entries to the lane's
  // final roles, newest first in doubling steps, so a board with no completed cycle costs a look
  // at an index, not a walk back through every cycle. The newest done one found belongs to a
  // completed cycle; one begun later may have completed before it, so everything since that
  // cycle's root is read and the newest completed root among them is the one.
  const finalRoles = lane.roles
    .map((r) => ({ to: r.name, kinds: finalKinds(r, humans) }))
    .filter((r) => r.kinds.length > 0);
  const finalOf = new Map(finalRoles.map((r) => [r.to, new Set(r.kinds)]));
  const isDone = (e: EntryOutline) => finalOf.get(e.to)?.has(e.kind) === true && e.status === "done";
  const finalFilter = { at: cut, addressed: finalRoles };
  let doneRoot: EntryOutline | undefined;
  for (let before: { created_ms: number; id: string } | undefined, reach = 4; !doneRoot; reach *= 2) {
    const batch = await board.outline({
      ...finalFilter,
      ...(before ? { before } : {}),
      newestFirst: true,
      limit: reach,
    });
    const done = batch.filter(isDone);
    const unknown = [...new Set(done.flatMap((e) => [e.id, ...prefixes(e.id)]))].filter((id) => !roots.has(id));
    for (const id of unknown) roots.set(id, null);
    if (unknown.length > 0)
      for (const e of await board.outline({ at: cut, ids: unknown })) if (isRoot(e)) roots.set(e.id, e);
    doneRoot = done.map((e) => rootOf(e.id)).find((r) => r !== undefined);
    if (batch.length < reach) break;
    before = { created_ms: batch.at(-1)!.created_ms, id: batch.at(-1)!.id };
  }
  let lastCompleted: EntryOutline | undefined;
  if (doneRoot) {
    await fetchFrom(doneRoot.created_ms);
    const since = [...changed.values()].filter((e) => e.created_ms >= doneRoot.created_ms && isRoot(e));
    lastCompleted = since
      .filter((root) => isDone(root) || (byRoot.get(root.id) ?? []).some(isDone))
      .sort((a, b) => a.created_ms - b.created_ms || a.id.localeCompare(b.id))
      .at(-1);
  }
  // Every root created since fetchedFrom was read (see above): number them after those before.
  const before = await board.outlineCount({ ...rootFilter, before: { created_ms: fetchedFrom, id: "" } });
  const byCreated = (a: EntryOutline, b: EntryOutline) => a.created_ms - b.created_ms || a.id.localeCompare(b.id);
  const recent = [...changed.values()].filter((e) => e.created_ms >= fetchedFrom && isRoot(e)).sort(byCreated);
  const number = new Map(recent.map((r, i) => [r.id, before + i + 1]));
  // Whole entries for the cycles an answer shows.
  const shownIds = new Set([newest.id, ...[...touched].map((r) => r.id), ...(lastCompleted ? [lastCompleted.id] : [])]);
  const shown = recent.filter((r) => shownIds.has(r.id)).flatMap((r) => [r, ...(byRoot.get(r.id) ?? [])]);
  const entries = new Map((await board.list({ ids: shown.map((e) => e.id) })).map((s) => [s.entry.id, s.entry]));
  return shown.flatMap((e) => {
    const entry = entries.get(e.id);
    const cycle = number.get(e.id);
    // Entries are never deleted: each outline read has its entry.
    if (!entry) return [];
    return cycle === undefined ? [fullEvidence(entry, e)] : [{ ...fullEvidence(entry, e), cycle }];
  });
}
