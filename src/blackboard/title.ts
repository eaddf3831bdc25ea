import type { Entry } from "./schema.js";

/** Summaries longer than this are clipped where an entry is one line of a list. */
const SUMMARY_CHARS = 120;

/**
 * An entry's title in lists and digests: its `payload.summary`, first line, clipped; null when it
 * has none (lists then show its kind). The console has the same rule in its widgets (a browser
 * module of its own).
 */
export function entrySummary(entry: Pick<Entry, "payload">): string | null {
  const raw = entry.payload.summary;
  if (typeof raw !== "string" || raw.trim() === "") return null;
  const line = raw.trim().split("\n")[0]!;
  return line.length > SUMMARY_CHARS ? `${line.slice(0, SUMMARY_CHARS - 1)}…` : line;
}
