import type { RunRecord } from "../lattice/runs/index.js";
import { plural } from "../core/index.js";
import { paint, stateStyle } from "./output.js";

/** One line for a run; its state in colour when `stream` (where the line goes) takes colour; its tokens when known. */
export function runLine(r: RunRecord, stream?: NodeJS.WriteStream, tokens = 0): string {
  const entry = r.entry_id ? `, entry ${r.entry_id}` : "";
  const why = r.reason
    ? `: ${r.reason}`
    : r.state === "waiting" && r.waiting
      ? `: ${r.waiting.reason} (checkpoint ${r.waiting.checkpoint_id})`
      : "";
  const style = stateStyle(r.state);
  const state = stream && style ? paint(stream, style, r.state) : r.state;
  const spent = tokens > 0 ? `, ${tokens.toLocaleString("en-US")} tokens` : "";
  return `${r.id}  ${state}  ${r.role}${entry}  ${plural(r.event_count, "event")}${spent}${why}`;
}
