import OpenAI from "openai";
import type {
  Response,
  ResponseFunctionToolCall,
  ResponseInputItem,
  ResponseOutputItem,
} from "openai/resources/responses/responses";
import { ModelSchema, type ModelRequest } from "../config/index.js";
import type { z } from "zod";
import {
  PmagentError,
  Redactor,
  RefusedError,
  UnavailableError,
  UsageError,
  parseWith,
  redactUrl,
} from "../core/index.js";
import { checkAnswer, type OutputSchema } from "./output-schema.js";
import type { ResponsesPayload } from "./request.js";
import type { ToolCall, ToolHandler } from "./tools.js";

export type ModelSectionInput = z.input<typeof ModelSchema>;

export interface ModelSettings {
  model: string;
  apiKey: string;
  /** Responses-compatible server; the SDK's default (api.openai.com) when absent. */
  baseURL?: string;
  timeoutMs: number;
  /** Retries on connection errors, 408/409/429 and 5xx, with the SDK's exponential backoff (honours Retry-After). */
  maxRetries: number;
  /** Where the key came from, for messages that must not show the key itself. */
  apiKeyEnv: string;
  /** `model.request`: the settings every request built for this model carries (on by default). */
  request?: ModelRequest;
}

export const DEFAULT_BASE_URL = "https://api.openai.com/v1";

/**
 * Model settings from the config's `model` section and the environment: the key from the variable
 * `model.api_key_env` names (OPENAI_API_KEY by default), the base URL from `model.base_url` or
 * OPENAI_BASE_URL.
 */
export function modelSettings(
  model: ModelSectionInput | undefined,
  env: NodeJS.ProcessEnv = process.env,
): ModelSettings {
  const m = parseWith(ModelSchema, model ?? {}, "model settings", "config_invalid");
  const apiKey = env[m.api_key_env];
  if (apiKey === undefined || apiKey.trim() === "") {
    const hint =
      m.api_key_env === "OPENAI_API_KEY"
        ? "set OPENAI_API_KEY or model.api_key_env in pmagent.config.json"
        : `set ${m.api_key_env} (named by model.api_key_env in pmagent.config.json)`;
    throw new UsageError("no_model_api_key", `no model API key: ${hint}`);
  }
  const baseURL = m.base_url ?? (env.OPENAI_BASE_URL?.trim() || undefined);
  if (baseURL !== undefined && !/^https?:$/.test(URL.canParse(baseURL) ? new URL(baseURL).protocol : "")) {
    throw new UsageError(
      "invalid_base_url",
      `${m.base_url !== undefined ? "model.base_url" : "OPENAI_BASE_URL"} is not an http(s) URL: set it to the API's base, e.g. https://api.openai.com/v1`,
    );
  }
  return {
    model: m.model,
    apiKey,
    baseURL,
    timeoutMs: m.timeout_ms,
    maxRetries: m.max_retries,
    apiKeyEnv: m.api_key_env,
    request: m.request,
  };
}

export interface TokenUsage {
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
}

export interface ModelAnswer {
  /** The answer's text as the model wrote it (the last attempt's). */
  text: string;
  /** The validated value when an output schema was given, else undefined. */
  answer: unknown;
  /** Tokens of all attempts together. */
  usage: TokenUsage;
  /** One per model call: a validation retry adds one, and so does each round of tool calls. */
  attempts: Array<{ response_id: string; usage: TokenUsage }>;
  /** The function calls the model made before it answered, in order (absent when none). */
  tool_calls?: Array<{ name: string; call_id: string }>;
  /** Present when the first answer did not match the output schema and the retry's did. */
  schema_retry?: true;
}

export interface RespondOptions {
  /** Validate the answer with this schema (normally the one the payload's `text.format` came from). */
  output?: OutputSchema;
  /** Use server-sent events (`stream: true`); default: the payload's `stream`. */
  stream?: boolean;
  /**
   * Carries out the model's calls of the function tools the payload offers; each output goes back
   * to the model (`function_call_output`) in the next request, until it answers.
   */
  tools?: ToolHandler;
  /** Rounds of tool calls allowed before the answer (default MAX_TOOL_ROUNDS). */
  maxToolRounds?: number;
}

/** A model that keeps calling tools without answering is stopped here. */
export const MAX_TOOL_ROUNDS = 16;

/** Calls the Responses API through the official SDK; validates structured answers. */
export class ModelClient {
  readonly settings: ModelSettings;
  private readonly client: OpenAI;
  private readonly redactor: Redactor;

  constructor(settings: ModelSettings) {
    this.settings = settings;
    this.client = new OpenAI({
      apiKey: settings.apiKey,
      baseURL: settings.baseURL,
      timeout: settings.timeoutMs,
      maxRetries: settings.maxRetries,
    });
    this.redactor = new Redactor([settings.apiKey]);
  }

  static fromConfig(model: ModelSectionInput | undefined, env: NodeJS.ProcessEnv = process.env): ModelClient {
    return new ModelClient(modelSettings(model, env));
  }

  get model(): string {
    return this.settings.model;
  }

  /**
   * Send the payload and return the answer. With an output schema, an answer that does not
   * validate is sent back once with the validation errors; a second invalid answer fails.
   */
  async respond(payload: ResponsesPayload, options: RespondOptions = {}): Promise<ModelAnswer> {
    const attempts: ModelAnswer["attempts"] = [];
    const toolCalls: NonNullable<ModelAnswer["tool_calls"]> = [];
    let input: ResponseInputItem[] = payload.input;
    let retried = false;
    const maxRounds = options.maxToolRounds ?? MAX_TOOL_ROUNDS;
    for (let rounds = 0; ;) {
      const response = await this.call({ ...payload, input }, options.stream ?? payload.stream === true);
      const text = answerText(response.response, response.streamedText);
      attempts.push({ response_id: response.response.id, usage: usageOf(response.response) });
      const usage = sumUsage(attempts.map((a) => a.usage));
      const items = response.response.output.length > 0 ? response.response.output : response.streamedItems;
      const calls = items.filter((i): i is ResponseFunctionToolCall => i.type === "function_call");
      if (calls.length > 0) {
        const names = [...new Set(calls.map((c) => c.name))].join(", ");
        if (!options.tools)
          throw new UnavailableError(
            "model_tool_call_unexpected",
            `the model called ${names}, but no tool can be carried out here: offer tools only with a handler for them`,
          );
        if (++rounds > maxRounds) {
          throw new UnavailableError(
            "model_tool_rounds_exceeded",
            `the model kept calling tools (${names}) for ${maxRounds} rounds without answering: stopped (its calls are in the run's events); narrow the work item or the instructions`,
            { details: { usage } },
          );
        }
        const outputs: ResponseInputItem[] = [];
        for (const call of calls) {
          const toolCall: ToolCall = { name: call.name, call_id: call.call_id, arguments: call.arguments };
          toolCalls.push({ name: call.name, call_id: call.call_id });
          outputs.push({ type: "function_call_output", call_id: call.call_id, output: await options.tools(toolCall) });
        }
        // The response's items go back as they came (reasoning items with their calls), then the outputs.
        input = [...input, ...(items as ResponseInputItem[]), ...outputs];
        continue;
      }
      const done = {
        text,
        usage,
        attempts,
        ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
        ...(retried ? { schema_retry: true as const } : {}),
      };
      if (!options.output) return { ...done, answer: undefined };
      const check = checkAnswer(options.output, text);
      if (check.ok) return { ...done, answer: check.value };
      if (retried) {
        throw new UnavailableError(
          "model_answer_invalid",
          `the model's answer does not match output schema ${options.output.name}, also after a retry with the validation errors:\n  ${check.issues.join("\n  ")}`,
          { details: { issues: check.issues, usage } },
        );
      }
      retried = true;
      input = [
        ...input,
        { type: "message", role: "assistant", content: text },
        {
          type: "message",
          role: "user",
          content: `Your answer does not match the output schema "${options.output.name}":\n${check.issues.map((i) => `- ${i}`).join("\n")}\nAnswer again with one JSON object that matches the schema exactly.`,
        },
      ];
    }
  }

  private async call(
    payload: ResponsesPayload,
    stream: boolean,
  ): Promise<{ response: Response; streamedText: string; streamedItems: ResponseOutputItem[] }> {
    try {
      if (!stream)
        return {
          response: await this.client.responses.create({ ...payload, stream: false }),
          streamedText: "",
          streamedItems: [],
        };
      const events = await this.client.responses.create({ ...payload, stream: true });
      let streamedText = "";
      const streamedItems: ResponseOutputItem[] = [];
      let final: Response | undefined;
      // The SDK's timeout ends when the headers arrive; a stream that goes quiet is timed here.
      let stalled = false;
      const onIdle = () => {
        stalled = true;
        events.controller.abort();
      };
      let idle = setTimeout(onIdle, this.settings.timeoutMs);
      try {
        for await (const event of events) {
          clearTimeout(idle);
          idle = setTimeout(onIdle, this.settings.timeoutMs);
          if (event.type === "response.output_text.delta") streamedText += event.delta;
          else if (event.type === "response.output_item.done") streamedItems.push(event.item);
          else if (
            event.type === "response.completed" ||
            event.type === "response.incomplete" ||
            event.type === "response.failed"
          )
            final = event.response;
          else if (event.type === "error")
            throw new UnavailableError(
              "model_stream_error",
              this.clean(`the model API at ${this.where()} reported an error mid-stream: ${event.message}`),
            );
        }
      } finally {
        clearTimeout(idle);
      }
      if (stalled) {
        throw new UnavailableError(
          "model_timeout",
          `the model API at ${this.where()} sent nothing for ${this.settings.timeoutMs} ms mid-stream: raise model.timeout_ms in pmagent.config.json or check the server`,
        );
      }
      if (!final)
        throw new UnavailableError(
          "model_stream_truncated",
          `the model API at ${this.where()} ended the stream before response.completed`,
        );
      return { response: final, streamedText, streamedItems };
    } catch (err) {
      throw this.translate(err);
    }
  }

  private where(): string {
    return redactUrl(this.settings.baseURL ?? DEFAULT_BASE_URL);
  }

  private clean(message: string): string {
    return this.redactor.redact(message);
  }

  /** SDK errors → typed errors that say what to fix, with the key redacted. */
  private translate(err: unknown): unknown {
    if (err instanceof PmagentError) return err;
    const s = this.settings;
    if (err instanceof OpenAI.APIConnectionTimeoutError) {
      return new UnavailableError(
        "model_timeout",
        `the model API at ${this.where()} did not answer within ${s.timeoutMs} ms (${s.maxRetries} retries): raise model.timeout_ms in pmagent.config.json or check the server`,
      );
    }
    if (err instanceof OpenAI.APIUserAbortError)
      return new UnavailableError("model_aborted", "the model request was aborted");
    if (err instanceof OpenAI.APIConnectionError) {
      return new UnavailableError(
        "model_unreachable",
        this.clean(
          `cannot reach the model API at ${this.where()} (${s.maxRetries} retries): ${causeMessage(err)}; check model.base_url or OPENAI_BASE_URL`,
        ),
      );
    }
    if (err instanceof OpenAI.APIError) {
      const detail = this.clean(errorMessage(err));
      const status = err.status;
      if (status === 401 || status === 403) {
        return new RefusedError(
          "model_auth_failed",
          `the model API at ${this.where()} refused the API key from ${s.apiKeyEnv} (${status}): ${detail}`,
        );
      }
      if (status === 429) {
        return new UnavailableError(
          "model_rate_limited",
          `the model API at ${this.where()} is still rate limiting after ${s.maxRetries} retries (429): ${detail}; wait and try again, or raise model.max_retries`,
        );
      }
      if (status !== undefined && status >= 500) {
        return new UnavailableError(
          "model_server_error",
          `the model API at ${this.where()} failed with ${status} after ${s.maxRetries} retries: ${detail}`,
        );
      }
      if (status !== undefined)
        return new UsageError(
          "model_request_rejected",
          `the model API at ${this.where()} rejected the request (${status}): ${detail}`,
        );
      return new UnavailableError(
        "model_stream_error",
        `the model API at ${this.where()} reported an error mid-stream: ${detail}`,
      );
    }
    return err;
  }
}

function errorMessage(err: InstanceType<typeof OpenAI.APIError>): string {
  const body = err.error as { message?: unknown } | undefined;
  return typeof body?.message === "string" ? body.message : err.message;
}

/** The root cause's code (e.g. ECONNREFUSED): fetch wraps it in "fetch failed". */
function causeMessage(err: Error): string {
  let cause: unknown = err;
  for (let depth = 0; depth < 5 && cause instanceof Error; depth++) {
    const code = (cause as NodeJS.ErrnoException).code;
    if (typeof code === "string") return code;
    if (!(cause.cause instanceof Error)) return cause.message;
    cause = cause.cause;
  }
  return err.message;
}

/** The answer text of a finished response; refusals and cut-off answers are errors. */
function answerText(response: Response, streamedText: string): string {
  if (response.status === "failed") {
    throw new UnavailableError(
      "model_failed",
      `the model failed to answer: ${response.error?.message ?? "no reason given"}`,
    );
  }
  if (response.status === "incomplete") {
    throw new UnavailableError(
      "model_incomplete",
      `the model stopped before finishing its answer (${response.incomplete_details?.reason ?? "no reason given"}): raise the output token limit or shorten the input`,
    );
  }
  const texts: string[] = [];
  for (const item of response.output) {
    if (item.type !== "message") continue;
    for (const part of item.content) {
      if (part.type === "refusal")
        throw new RefusedError("model_refused", `the model refused to answer: ${part.refusal}`);
      texts.push(part.text);
    }
  }
  // Some compatible servers leave `output` empty in response.completed; the deltas hold the text.
  return texts.length > 0 ? texts.join("") : streamedText;
}

function usageOf(response: Response): TokenUsage {
  const u = response.usage;
  return {
    input_tokens: u?.input_tokens ?? 0,
    output_tokens: u?.output_tokens ?? 0,
    total_tokens: u?.total_tokens ?? 0,
  };
}

function sumUsage(all: TokenUsage[]): TokenUsage {
  return all.reduce(
    (a, b) => ({
      input_tokens: a.input_tokens + b.input_tokens,
      output_tokens: a.output_tokens + b.output_tokens,
      total_tokens: a.total_tokens + b.total_tokens,
    }),
    {
      input_tokens: 0,
      output_tokens: 0,
      total_tokens: 0,
    },
  );
}
