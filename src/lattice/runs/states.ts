/** The states a run moves through, and the groups of them the supervisor and Kai ask about. */
export const RUN_STATES = ["starting", "running", "waiting", "succeeded", "failed", "canceled"] as const;
export type RunState = (typeof RUN_STATES)[number];
export const TERMINAL_RUN_STATES: readonly RunState[] = ["succeeded", "failed", "canceled"];
export const UNFINISHED_RUN_STATES: readonly RunState[] = ["starting", "running"];
/** Runs a window reads as live: not finished, or waiting to be resumed. */
export const UNFINISHED_OR_WAITING: readonly RunState[] = ["starting", "running", "waiting"];

export function isTerminalRunState(state: RunState): boolean {
  return TERMINAL_RUN_STATES.includes(state);
}
