/**
 * The progress watchdog's verdict (config `runner.idle_timeout_s`; follow.ts watches): a sprite
 * that sent no output and no event for that long is stopped, and the run's reason names the last
 * thing it said, so a hung agent (an endpoint that never answers, a stalled stream) ends by itself.
 */
import type { RunRecord } from "../runs/index.js";
import type { SupervisorContext } from "./context.js";

/** Default of `runner.idle_timeout_s`: longer than an agent's slowest quiet step should be. */
export const DEFAULT_IDLE_TIMEOUT_S = 300;

/** Characters of the last message kept in the reason. */
const MESSAGE_CHARS = 500;

export async function idleReason(ctx: SupervisorContext, run: RunRecord, idleS: number): Promise<string> {
  const base = `no output and no event for ${idleS} s (runner.idle_timeout_s); the sprite was stopped`;
  const last = await ctx.runs.lastEventOfTypes(run.id, run.attempt, ["INFO"]);
  const message = last
    ? (JSON.parse(last.event_json) as { payload?: { message?: unknown } }).payload?.message
    : undefined;
  return typeof message === "string" && message
    ? `${base}; its last message: ${message.length <= MESSAGE_CHARS ? message : `${message.slice(0, MESSAGE_CHARS)}…`}`
    : `${base}; it sent no message`;
}
