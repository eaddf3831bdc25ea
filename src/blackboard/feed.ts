import type { Blackboard } from "./blackboard.js";
import { historyHead, historyMarksAfter, historyMarksAt, type HistoryMark } from "./history.js";
import { byCreation } from "./queries.js";
import type { StoredEntry } from "./schema.js";

export interface BoardWatcher {
  /** Entries that changed (each newer than what was sent before), and the history position now reached. */
  changed(entries: StoredEntry[], seq: number): void;
  /** The feed failed (the database went away) or closed: this watcher is dropped. */
  ended(err?: unknown): void;
}

export interface BoardWatch {
  /** The board as it stood when the watch began, in creation order (the same array until it changes). */
  entries: readonly StoredEntry[];
  /** The history position that board is at. */
  seq: number;
  stop(): void;
}

export interface BoardFeedOptions {
  /** How often the history is read for changes while anyone watches. */
  pollMs?: number;
  /** How long a gap in the history's seq is looked for again (see below). */
  gapWaitMs?: number;
}

/** History records read per query; a full page is followed at once by the next. */
const PAGE = 500;
/** Gaps in seq tracked at most (the oldest are given up first). */
const MAX_GAPS = 1000;

/**
 * The live board of one project for any number of watchers at the cost of one: while someone
 * watches, the feed holds the board and reads the history (one seek in its key per poll) for what
 * changed since the position it is at, then reads only the entries that moved, and hands them to
 * every watcher once. A poll with nothing new reads nothing, whatever the board's size or the
 * watchers' number. Every change of an entry's version writes a history record (post, import,
 * change, claim, finish), so the history is the board's change log; a heartbeat renews a lease
 * without a new version and is not a change.
 *
 * PostgreSQL hands out `seq` before a transaction commits, so a record can appear after one with a
 * higher seq: a gap below the position reached is looked for again on each poll for `gapWaitMs`
 * (a rolled-back write leaves one for good). SQLite writes one at a time and leaves none.
 */
export class BoardFeed {
  private readonly pollMs: number;
  private readonly gapWaitMs: number;
  private readonly watchers = new Set<BoardWatcher>();
  private entries = new Map<string, StoredEntry>();
  private snapshot: readonly StoredEntry[] | undefined;
  private seq = 0;
  /** Missing seqs below `seq` → when first missed. */
  private gaps = new Map<number, number>();
  private loading: Promise<void> | undefined;
  private loaded = false;
  private timer: NodeJS.Timeout | undefined;
  /** Bumped whenever the held board is dropped, so a poll under way does not apply to the next one. */
  private generation = 0;

  constructor(
    private readonly board: Blackboard,
    options: BoardFeedOptions = {},
  ) {
    this.pollMs = options.pollMs ?? 500;
    this.gapWaitMs = options.gapWaitMs ?? 60_000;
  }

  /** Start watching: the board as it stands now, then each change through `watcher`. */
  async watch(watcher: BoardWatcher): Promise<BoardWatch> {
    while (!this.loaded) {
      this.loading ??= this.load().finally(() => (this.loading = undefined));
      await this.loading;
    }
    // No await from here on: the board handed out and the watcher's first change follow each other.
    this.watchers.add(watcher);
    this.schedule();
    return { entries: this.current(), seq: this.seq, stop: () => this.leave(watcher) };
  }

  /** End every watch and stop polling. */
  close(): void {
    this.drop();
  }

  private current(): readonly StoredEntry[] {
    this.snapshot ??= [...this.entries.values()].sort(byCreation);
    return this.snapshot;
  }

  private leave(watcher: BoardWatcher): void {
    this.watchers.delete(watcher);
    // Nobody watches: hold nothing, read nothing.
    if (this.watchers.size === 0) this.drop();
  }

  /** Forget the board and end every watch (with `err` when the feed failed). */
  private drop(err?: unknown): void {
    this.generation++;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.loaded = false;
    this.entries = new Map();
    this.snapshot = undefined;
    this.gaps = new Map();
    const ended = [...this.watchers];
    this.watchers.clear();
    for (const w of ended) w.ended(err);
  }

  private async load(): Promise<void> {
    const generation = this.generation;
    const store = this.board.store;
    const head = await historyHead(store);
    // Gaps just below the head may be writes still committing (PostgreSQL): look for them later.
    const recent = await historyMarksAfter(store, Math.max(0, head - MAX_GAPS), MAX_GAPS);
    const list = await this.board.list();
    if (generation !== this.generation) return;
    this.entries = new Map(list.map((s) => [s.entry.id, s]));
    this.snapshot = undefined;
    this.seq = head;
    this.gaps = new Map();
    this.noteGaps(Math.max(0, head - MAX_GAPS), recent);
    this.loaded = true;
  }

  private schedule(): void {
    if (this.timer || this.watchers.size === 0) return;
    this.timer = setTimeout(() => void this.poll(), this.pollMs);
    this.timer.unref();
  }

  private async poll(): Promise<void> {
    const generation = this.generation;
    try {
      const changed = await this.read(() => generation !== this.generation);
      if (changed === undefined) return;
      this.timer = undefined;
      if (changed.length > 0) {
        this.snapshot = undefined;
        for (const w of this.watchers) w.changed(changed, this.seq);
      }
      this.schedule();
    } catch (err) {
      if (generation === this.generation) this.drop(err);
    }
  }

  /**
   * What changed since the last poll: read, applied to the held board and returned; undefined
   * when the board was dropped meanwhile (`stale`), and then nothing is applied.
   */
  private async read(stale: () => boolean): Promise<StoredEntry[] | undefined> {
    const store = this.board.store;
    const marks = await historyMarksAt(store, [...this.gaps.keys()]);
    if (stale()) return undefined;
    for (const m of marks) this.gaps.delete(m.seq);
    for (;;) {
      const page = await historyMarksAfter(store, this.seq, PAGE);
      if (stale()) return undefined;
      this.noteGaps(this.seq, page);
      if (page.length > 0) this.seq = page[page.length - 1]!.seq;
      marks.push(...page);
      if (page.length < PAGE) break;
    }
    const since = Date.now() - this.gapWaitMs;
    for (const [seq, at] of this.gaps) if (at < since) this.gaps.delete(seq);

    const newer = new Set<string>();
    for (const m of marks)
      if (m.project_id === this.board.projectId && m.version > (this.entries.get(m.entry_id)?.version ?? 0))
        newer.add(m.entry_id);
    if (newer.size === 0) return [];
    const list = await this.board.list({ ids: [...newer] });
    if (stale()) return undefined;
    const changed: StoredEntry[] = [];
    for (const s of list) {
      if (s.version <= (this.entries.get(s.entry.id)?.version ?? 0)) continue;
      this.entries.set(s.entry.id, s);
      changed.push(s);
    }
    return changed;
  }

  /** Remember the seqs missing between `after` and each of `marks` (in seq order). */
  private noteGaps(after: number, marks: readonly HistoryMark[]): void {
    const now = Date.now();
    let expected = after + 1;
    for (const m of marks) {
      for (let seq = Math.max(expected, m.seq - MAX_GAPS); seq < m.seq; seq++) this.gaps.set(seq, now);
      expected = m.seq + 1;
    }
    for (const seq of this.gaps.keys()) {
      if (this.gaps.size <= MAX_GAPS) break;
      this.gaps.delete(seq);
    }
  }
}
