import type { Store } from "../store/index.js";

/** A moment as the board stores it: milliseconds and the ISO string of the same instant. */
export interface Stamp {
  ms: number;
  iso: string;
}

/** What every part of a Blackboard works with: its store, project, humans, lease and clock. */
export interface BoardContext {
  readonly store: Store;
  readonly projectId: string;
  /** Actors who may change any entry (config `humans`). */
  readonly humans: readonly string[];
  /** Default lease length for claims. */
  readonly leaseMs: number;
  now(): Stamp;
}
