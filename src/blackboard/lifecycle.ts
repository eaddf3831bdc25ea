import { RefusedError } from "../core/index.js";
import type { Entry, Status } from "./schema.js";

/** DESIGN.md §2: the allowed status transitions; done, error and canceled are terminal. */
export const TRANSITIONS: Readonly<Record<Status, readonly Status[]>> = {
  open: ["in_progress", "done", "error", "canceled"],
  in_progress: ["done", "error", "canceled"],
  done: [],
  error: [],
  canceled: [],
};

export function isTerminal(status: Status): boolean {
  return TRANSITIONS[status].length === 0;
}

export function canTransition(from: Status, to: Status): boolean {
  return TRANSITIONS[from].includes(to);
}

export function assertTransition(entry: Entry, to: Status, actor: string): void {
  if (canTransition(entry.status, to)) return;
  const why = isTerminal(entry.status)
    ? `${entry.status} is terminal`
    : `allowed from ${entry.status}: ${TRANSITIONS[entry.status].join(", ")}`;
  throw new RefusedError(
    "transition_refused",
    `entry ${entry.id}: ${actor} cannot move it ${entry.status} → ${to} (${why})`,
    {
      entry: entry.id,
      actor,
      from: entry.status,
      to,
    },
  );
}

/** Blackboard Core Spec §3.2: only the roles in `from` or `to`, or a human, change an entry. */
export function mayChange(entry: Entry, actor: string, humans: readonly string[]): boolean {
  return actor === entry.from || actor === entry.to || humans.includes(actor);
}

export function assertMayChange(entry: Entry, actor: string, humans: readonly string[], what: string): void {
  if (mayChange(entry, actor, humans)) return;
  throw new RefusedError(
    "permission_refused",
    `entry ${entry.id}: ${actor} may not ${what}: only its writer (${entry.from}), its addressee (${entry.to}) or a human (${humans.join(", ")}) may change it`,
    { entry: entry.id, actor, action: what },
  );
}
