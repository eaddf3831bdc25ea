import { Blackboard, type EntryInput } from "../../src/blackboard/index.js";
import type { Store } from "../../src/store/index.js";

export const PROJECT = "vpm-mini";

/** A blackboard with a controllable clock (ms). */
export function testBoard(
  store: Store,
  start = Date.parse("2026-01-15T10:00:00Z"),
): { board: Blackboard; clock: { now: number; advance(ms: number): void } } {
  const clock = {
    now: start,
    advance(ms: number) {
      this.now += ms;
    },
  };
  const board = new Blackboard(store, {
    projectId: PROJECT,
    humans: ["Human"],
    clock: () => clock.now,
    leaseMs: 5_000,
  });
  return { board, clock };
}

export function request(id: string, extra: Partial<EntryInput> = {}): EntryInput {
  return {
    id,
    to: "Aya",
    kind: "doc_update_proposal_request",
    payload: { summary: `request ${id}`, details: {}, refs: {} },
    target_docs: ["STATE/current_state.md"],
    ...extra,
  };
}
