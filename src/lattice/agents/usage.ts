/**
 * Each agent CLI's own usage report as the documented `token_usage` INFO (see runs/usage.ts):
 * input tokens with cached ones included, output with reasoning included, per model. The report
 * as the CLI gave it stays in `metadata.reported`.
 *
 * - Codex (`turn.completed.usage`): input_tokens (cached included), cached_input_tokens,
 *   output_tokens (reasoning_output_tokens where reported); no model in the stream, so the
 *   configured one.
 * - Claude Code (`result`): `modelUsage` per model (inputTokens, outputTokens,
 *   cacheReadInputTokens, cacheCreationInputTokens), else `usage` for the session's model; its
 *   input_tokens leave out cache reads and writes, which are added.
 * - Gemini CLI (`result.stats.models` per model): input_tokens (prompt, cached included),
 *   cached, output_tokens (candidates, thoughts not included) and total_tokens; the difference is
 *   reasoning (thoughts, tool-use prompts), counted as output.
 */
import type { AgentName, MappedEvent, StreamState } from "./types.js";

interface Tokens {
  input_tokens: number;
  cached_input_tokens: number;
  output_tokens: number;
  reasoning_tokens: number;
  total_tokens: number;
}

const n = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) && v > 0 ? v : 0);
const obj = (v: unknown): Record<string, unknown> =>
  v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : {};

function event(
  agent: AgentName,
  model: string | null,
  t: Tokens,
  reported: Record<string, unknown>,
): MappedEvent<"INFO"> {
  return {
    type: "INFO",
    payload: {
      message: `tokens: ${t.input_tokens} in, ${t.output_tokens} out${model ? ` (${model})` : ""}`,
      kind: "token_usage",
      metadata: { agent, model, ...t, reported },
    },
  };
}

export function codexUsage(usage: Record<string, unknown>, state: StreamState): MappedEvent<"INFO"> {
  const input = n(usage.input_tokens);
  const output = n(usage.output_tokens);
  return event(
    "codex",
    state.model,
    {
      input_tokens: input,
      cached_input_tokens: n(usage.cached_input_tokens),
      output_tokens: output,
      reasoning_tokens: n(usage.reasoning_output_tokens),
      total_tokens: input + output,
    },
    usage,
  );
}

export function claudeUsage(line: Record<string, unknown>, state: StreamState): MappedEvent<"INFO">[] {
  const perModel = Object.entries(obj(line.modelUsage));
  if (perModel.length > 0) {
    return perModel.map(([model, raw]) => {
      const u = obj(raw);
      const cached = n(u.cacheReadInputTokens);
      const input = n(u.inputTokens) + cached + n(u.cacheCreationInputTokens);
      const output = n(u.outputTokens);
      return event(
        "claude",
        model,
        {
          input_tokens: input,
          cached_input_tokens: cached,
          output_tokens: output,
          reasoning_tokens: 0,
          total_tokens: input + output,
        },
        u,
      );
    });
  }
  const u = obj(line.usage);
  const cached = n(u.cache_read_input_tokens);
  const input = n(u.input_tokens) + cached + n(u.cache_creation_input_tokens);
  const output = n(u.output_tokens);
  return [
    event(
      "claude",
      state.model,
      {
        input_tokens: input,
        cached_input_tokens: cached,
        output_tokens: output,
        reasoning_tokens: 0,
        total_tokens: input + output,
      },
      u,
    ),
  ];
}

export function geminiUsage(stats: Record<string, unknown>, state: StreamState): MappedEvent<"INFO">[] {
  const tokens = (u: Record<string, unknown>): Tokens => {
    const input = n(u.input_tokens);
    const visible = n(u.output_tokens);
    const total = Math.max(n(u.total_tokens), input + visible);
    const reasoning = total - input - visible;
    return {
      input_tokens: input,
      cached_input_tokens: n(u.cached),
      output_tokens: visible + reasoning,
      reasoning_tokens: reasoning,
      total_tokens: total,
    };
  };
  const perModel = Object.entries(obj(stats.models));
  if (perModel.length > 0) return perModel.map(([model, raw]) => event("gemini", model, tokens(obj(raw)), obj(raw)));
  const { models: _models, ...totals } = stats;
  return [event("gemini", state.model, tokens(totals), totals)];
}
