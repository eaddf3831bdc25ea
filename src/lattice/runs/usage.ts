/**
 * Token usage as runs report it: an INFO event of kind `token_usage` (the coding agents' turns,
 * any sprite) or `usage` (pmagent's own role agent), whose metadata holds the counts:
 *
 *   { "model": "gpt-5", "input_tokens": 1200, "cached_input_tokens": 200, "output_tokens": 80,
 *     "reasoning_tokens": 40, "total_tokens": 1280 }
 *
 * `input_tokens` counts every input token, cached ones included; `output_tokens` every output
 * token, reasoning included; `cached_input_tokens` and `reasoning_tokens` say how many of those
 * were (0 when not reported); `total_tokens` defaults to input + output. The Lattice protocol has
 * no usage field of its own, so this INFO payload is the shape (README: "Token usage and cost").
 */

/** INFO kinds whose metadata is a usage report. */
export const USAGE_KINDS: readonly string[] = ["token_usage", "usage"];

export interface TokenCounts {
  input_tokens: number;
  cached_input_tokens: number;
  output_tokens: number;
  reasoning_tokens: number;
  total_tokens: number;
}

/** One model's tokens in a run (model "" when the report named none), and how many reports they add up. */
export interface ModelUsage extends TokenCounts {
  model: string;
  reports: number;
}

export const noTokens = (): TokenCounts => ({
  input_tokens: 0,
  cached_input_tokens: 0,
  output_tokens: 0,
  reasoning_tokens: 0,
  total_tokens: 0,
});

/** A count as reported: a finite non-negative number, else 0 (a sprite's report is not trusted to be well formed). */
function count(v: unknown): number {
  return typeof v === "number" && Number.isFinite(v) && v > 0 ? Math.round(v) : 0;
}

/** The usage an event reports, or null when it is not a usage report (type INFO, kind token_usage or usage). */
export function usageOfEvent(eventType: string, payload: unknown): { model: string; tokens: TokenCounts } | null {
  if (eventType !== "INFO" || payload === null || typeof payload !== "object") return null;
  const p = payload as { kind?: unknown; metadata?: unknown };
  if (typeof p.kind !== "string" || !USAGE_KINDS.includes(p.kind)) return null;
  if (p.metadata === null || typeof p.metadata !== "object") return null;
  const m = p.metadata as Record<string, unknown>;
  const input = count(m.input_tokens);
  const output = count(m.output_tokens);
  const tokens: TokenCounts = {
    input_tokens: input,
    cached_input_tokens: Math.min(count(m.cached_input_tokens), input),
    output_tokens: output,
    reasoning_tokens: count(m.reasoning_tokens ?? m.reasoning_output_tokens),
    total_tokens: count(m.total_tokens) || input + output,
  };
  if (tokens.total_tokens === 0) return null;
  return { model: typeof m.model === "string" ? m.model.slice(0, 200) : "", tokens };
}

export function addTokens(to: TokenCounts, t: TokenCounts): TokenCounts {
  to.input_tokens += t.input_tokens;
  to.cached_input_tokens += t.cached_input_tokens;
  to.output_tokens += t.output_tokens;
  to.reasoning_tokens += t.reasoning_tokens;
  to.total_tokens += t.total_tokens;
  return to;
}

/** The sum of several models' (or runs') tokens. */
export function sumTokens(items: Iterable<TokenCounts>): TokenCounts {
  const total = noTokens();
  for (const t of items) addTokens(total, t);
  return total;
}
