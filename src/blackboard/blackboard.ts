import type { Page, PageRequest, Store } from "../store/index.js";
import type { ChangeOptions, EntryPatch } from "./change.js";
import { claim, claimNext, heartbeat } from "./claims.js";
import type { BoardContext, Stamp } from "./context.js";
import { pageHistory, readHistory } from "./history.js";
import type { PutOutcome } from "./import.js";
import { outline, outlineCount, type EntryOutline, type OutlineFilter } from "./outline.js";
import { newId } from "./entry.js";
import { findEntry, getEntry, listEntries, pageEntries, type EntryPageFilter, type ListFilter } from "./queries.js";
import type { HistoryRecord, Status, StoredEntry } from "./entry.js";
import type { EntryInput } from "./schema.js";
import { waitForOpen } from "./wake.js";

// The Blackboard's parts, one concern each: rows.ts (the stored row and its version check),
// post.ts, import.ts, change.ts (lifecycle and permissions), claims.ts (claims, leases, takeover),
// finish-and-claim.ts, history.ts, queries.ts and outline.ts (reads), wake.ts (open wake-ups).
// The writers that validate with the entry's zod schema (post, import, change, finish-and-claim)
// are loaded on their first call, so reading a board (`bb list`) loads neither them nor zod.

export interface BlackboardOptions {
  projectId: string;
  /** Actors who may change any entry (config `humans`). */
  humans: readonly string[];
  /** Milliseconds; injectable for tests of lease expiry. */
  clock?: () => number;
  /** Default lease length for claims. */
  leaseMs?: number;
}

export const DEFAULT_LEASE_MS = 30_000;

/** The projects with entries in this store (one board issue may hold several projects' entries). */
export async function storedProjects(store: Store): Promise<string[]> {
  const rows = await store.all<{ project_id: string }>(
    "SELECT DISTINCT project_id FROM bb_entries ORDER BY project_id",
  );
  return rows.map((r) => r.project_id);
}

/**
 * The blackboard of one project: entries, their lifecycle and permissions, claims with leases,
 * and the append-only history. Every write is a transaction with an optimistic version check.
 */
export class Blackboard {
  readonly projectId: string;
  readonly humans: readonly string[];
  readonly leaseMs: number;
  private readonly clock: () => number;
  /** What the parts are given: this board's store, project, humans, lease and clock. */
  private readonly ctx: BoardContext;

  constructor(
    readonly store: Store,
    options: BlackboardOptions,
  ) {
    this.projectId = options.projectId;
    this.humans = options.humans;
    this.clock = options.clock ?? Date.now;
    this.leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    this.ctx = { store, projectId: this.projectId, humans: this.humans, leaseMs: this.leaseMs, now: () => this.now() };
  }

  private now(): Stamp {
    const ms = this.clock();
    return { ms, iso: new Date(ms).toISOString() };
  }

  /** A fresh id: project, time and randomness (the spec asks ids never to collide). */
  newId(kind?: string): string {
    return newId(this.ctx, kind);
  }

  /**
   * Post an entry as `actor`. Missing id/from/status/timestamps are filled in. Re-posting an id with
   * the same content is a no-op (`created: false`); with different content it is refused.
   */
  async post(
    actor: string,
    input: EntryInput | unknown,
    source = "entry",
  ): Promise<{ stored: StoredEntry; created: boolean }> {
    return (await import("./post.js")).post(this.ctx, actor, input, source);
  }

  async get(id: string): Promise<StoredEntry> {
    return getEntry(this.ctx, id);
  }

  async find(id: string): Promise<StoredEntry | undefined> {
    return findEntry(this.ctx, id);
  }

  async list(filter: ListFilter = {}): Promise<StoredEntry[]> {
    return listEntries(this.ctx, filter);
  }

  /** One page of entries in creation order (oldest first by default), by cursor (see Keyset in store). */
  async page(filter: EntryPageFilter = {}, request: PageRequest = {}): Promise<Page<StoredEntry>> {
    return pageEntries(this.ctx, filter, request);
  }

  /** Entries as they stood at `filter.at`, without their content (see outline.ts). */
  async outline(filter: OutlineFilter = {}): Promise<EntryOutline[]> {
    return outline(this.ctx, filter);
  }

  /** How many entries `outline(filter)` would give, counted in SQL (see outline.ts). */
  async outlineCount(filter: Omit<OutlineFilter, "ids" | "limit" | "newestFirst"> = {}): Promise<number> {
    return outlineCount(this.ctx, filter);
  }

  /** Change an entry's status as `actor` (lifecycle and permission rules apply). */
  async transition(actor: string, id: string, to: Status, options: ChangeOptions = {}): Promise<StoredEntry> {
    return (await import("./change.js")).transition(this.ctx, actor, id, to, options);
  }

  /** Change fields and/or the status of an entry as `actor`. */
  async change(actor: string, id: string, patch: EntryPatch, options: ChangeOptions = {}): Promise<StoredEntry> {
    return (await import("./change.js")).change(this.ctx, actor, id, patch, options);
  }

  /**
   * Claim the oldest open entry addressed to `role` with a kind in `kinds` (the pick rule), or take
   * over an in_progress one whose lease has expired. Atomic: no two claimers get the same entry.
   */
  async claim(
    worker: string,
    role: string,
    kinds: readonly string[],
    leaseMs = this.leaseMs,
    options: { entryId?: string } = {},
  ): Promise<StoredEntry | undefined> {
    return claim(this.ctx, { worker, role, kinds, leaseMs, ...options });
  }

  /** Claim as `claim` does, waiting for a wake-up while nothing is there (see claims.ts). */
  async claimNext(
    worker: string,
    role: string,
    kinds: readonly string[],
    options: { leaseMs?: number; waitMs?: number; signal?: AbortSignal } = {},
  ): Promise<StoredEntry | undefined> {
    return claimNext(this.ctx, worker, role, kinds, options);
  }

  /** A worker finishing its claim and claiming its next entry in one go (see finish-and-claim.ts). */
  async finishAndClaim(
    actor: string,
    id: string,
    to: Status,
    next: { worker: string; kinds: readonly string[]; role?: string; leaseMs?: number; note?: string },
  ): Promise<{ finished: StoredEntry; next: StoredEntry | undefined }> {
    return (await import("./finish-and-claim.js")).finishAndClaim(this.ctx, actor, id, to, next);
  }

  /** Extend a claim's lease; refused when the claim was lost (taken over or finished). */
  async heartbeat(worker: string, id: string, leaseMs = this.leaseMs): Promise<StoredEntry> {
    return heartbeat(this.ctx, worker, id, leaseMs);
  }

  /**
   * Import an entry as it was (status and timestamps kept), under the rules `post` applies: only
   * a human imports an entry written by someone else, and no entry arrives in_progress.
   */
  async import(
    actor: string,
    input: unknown,
    options: { source?: string } = {},
  ): Promise<{ stored: StoredEntry; outcome: PutOutcome }> {
    return (await import("./import.js")).importEntry(this.ctx, actor, input, options);
  }

  /**
   * Store an entry exactly as given (status and timestamps kept): for imports and board syncs.
   * Same id and content: a no-op; same id, other content: refused unless `replace`.
   */
  async put(
    actor: string,
    input: unknown,
    options: { source?: string; replace?: boolean; expectedVersion?: number } = {},
  ): Promise<{ stored: StoredEntry; outcome: PutOutcome }> {
    return (await import("./import.js")).putEntry(this.ctx, actor, input, options);
  }

  /** The append-only history, oldest first: of one entry, or of the whole project. */
  async history(
    id?: string,
    options: { sinceMs?: number; untilMs?: number; limit?: number } = {},
  ): Promise<HistoryRecord[]> {
    return readHistory(this.ctx, id, options);
  }

  /** One page of the history (of one entry, or of the whole project), oldest first by default. */
  async historyPage(id: string | undefined, request: PageRequest = {}): Promise<Page<HistoryRecord>> {
    return pageHistory(this.ctx, id, request);
  }

  /** Resolve when an open entry may be waiting for `role` (notification or `pollMs`, whichever first). */
  async waitForOpen(role: string, pollMs: number, signal?: AbortSignal): Promise<void> {
    return waitForOpen(this.store, role, pollMs, signal);
  }
}
