import { z } from "zod";
import type {
  FunctionTool,
  ResponseCreateParamsNonStreaming,
  ResponseInputItem,
} from "openai/resources/responses/responses";
import { ModelRequestSchema, type ModelRequest } from "../config/index.js";
import { renderLedgerBlock, type KnownLedger } from "./ledger.js";
import { resolveOutputSchema, type OutputSchema, type OutputSchemaSelection } from "./output-schema.js";
import { DEFAULT_REVIEW_LEVEL, type ReviewLevel, type AgentRole } from "./roles.js";
import { renderTemplate, type PromptTemplates } from "./templates.js";

/** A conversation message of earlier turns. */
export const HistoryMessageSchema = z
  .object({
    role: z.enum(["user", "assistant", "system", "developer"]),
    content: z.string(),
  })
  .strict();
export type HistoryMessage = z.output<typeof HistoryMessageSchema>;

/** Context blocks in the spec's injection order, each with the role that carries it. */
export const CONTEXT_BLOCKS = [
  { tag: "developer_instructions", role: "developer" },
  // The turn context comes from the harness, not the user, so it sits in the developer zone.
  { tag: "turn_context", role: "developer" },
  { tag: "user_instructions", role: "user" },
  { tag: "environment_context", role: "user" },
] as const;
export type ContextTag = (typeof CONTEXT_BLOCKS)[number]["tag"];

export interface BuildRequestOptions extends OutputSchemaSelection {
  role: AgentRole;
  model: string;
  templates: PromptTemplates;
  /** What is known of the ledger; the block is sent in any case, with `(none)` for what is not known. */
  ledger?: Partial<KnownLedger>;
  /** Reviewer only: the level its template states. */
  reviewLevel?: ReviewLevel;
  turnContext?: string;
  userInstructions?: string;
  environmentContext?: string;
  history?: HistoryMessage[];
  /** The current user input, sent last. */
  input?: string;
  /**
   * Function tools offered to the model: `roleTools(role)` for the role's own (the orchestrator's
   * apply_patch and update_plan). None by default: only a caller that carries the calls out
   * (the role agent) may offer them.
   */
  tools?: FunctionTool[];
  /** The origin's request settings (config `model.request`); on by default. */
  request?: ModelRequest;
}

/** The payload; `stream` says how the client sends it (it may still be overridden per call). */
export type ResponsesPayload = Omit<ResponseCreateParamsNonStreaming, "stream"> & {
  input: ResponseInputItem[];
  stream?: boolean;
};

/** `model.request` when the config says nothing: every setting on. */
export const DEFAULT_MODEL_REQUEST: ModelRequest = ModelRequestSchema.parse({});

/** The `prompt_cache_key` of a role in a lane: stable across the role's requests, so its fixed prefix is cached. */
export function promptCacheKey(role: AgentRole, ledger: Partial<KnownLedger> | undefined): string {
  return `pmagent:${ledger?.lane ?? "no-lane"}:${ledger?.role ?? role}:${role}`;
}

/**
 * The origin's settings on every request: stream, store, reasoning (effort, summary), include
 * (the encrypted reasoning when the response is not stored), verbosity and prompt_cache_key.
 */
function requestSettings(
  options: BuildRequestOptions,
): Partial<ResponsesPayload> & { verbosity?: ModelRequest["verbosity"] } {
  const r = options.request ?? DEFAULT_MODEL_REQUEST;
  if (!r.enabled) return {};
  const reasons = r.reasoning === "on" || (r.reasoning === "auto" && takesReasoning(options.model));
  return {
    stream: r.stream,
    store: r.store,
    ...(r.prompt_cache_key ? { prompt_cache_key: promptCacheKey(options.role, options.ledger) } : {}),
    ...(reasons
      ? {
          reasoning: { effort: r.reasoning_effort, summary: r.reasoning_summary },
          ...(r.store ? {} : { include: ["reasoning.encrypted_content"] }),
          verbosity: r.verbosity,
        }
      : {}),
  };
}

/** Models that take `reasoning` and `text.verbosity` (the API refuses a request with them for others). */
export function takesReasoning(model: string): boolean {
  return /^(gpt-5|o\d)([-.]|$)/i.test(model);
}

/** The role's developer instructions: its template (reviewer: with its level) and the ledger block (always). */
export function developerInstructions(
  options: Pick<BuildRequestOptions, "role" | "templates" | "ledger" | "reviewLevel">,
): string {
  const template = options.templates.developer[options.role];
  const body =
    options.role === "reviewer"
      ? renderTemplate(template, { review_level: options.reviewLevel ?? DEFAULT_REVIEW_LEVEL }, ["review_level"])
      : renderTemplate(template, {});
  return `${body}\n\n${renderLedgerBlock({ ...options.ledger, role: options.ledger?.role ?? options.role })}`;
}

export function wrapBlock(tag: ContextTag, text: string): string {
  return `<${tag}>\n${text}\n</${tag}>`;
}

/** The tag a history message opens with, when it is one of the context blocks. */
function blockTagOf(content: string): ContextTag | undefined {
  const head = content.trimStart();
  return CONTEXT_BLOCKS.find((b) => head.startsWith(`<${b.tag}>`))?.tag;
}

/** The text inside a block as `wrapBlock` wrote it, trimmed (what a new block's text is compared with). */
function blockText(tag: ContextTag, content: string): string {
  let inner = content.trim().slice(`<${tag}>`.length);
  if (inner.endsWith(`</${tag}>`)) inner = inner.slice(0, -`</${tag}>`.length);
  return inner.trim();
}

/**
 * Blocks that describe the present moment: when history holds one whose text differs, the new one
 * is sent again after history (the latest wins); the instructions blocks are sent once.
 */
const UPDATABLE: ReadonlySet<ContextTag> = new Set(["turn_context", "environment_context"]);

/** `text.format` for an output schema. */
export function textFormat(output: OutputSchema): {
  type: "json_schema";
  strict: boolean;
  name: string;
  schema: Record<string, unknown>;
} {
  return { type: "json_schema", strict: output.strict !== false, name: output.name, schema: output.jsonSchema };
}

/**
 * The Responses API payload: the base prompt as `instructions` (identical for every role), then
 * `input[]` = history, the context blocks history does not already hold (a changed turn or
 * environment context is sent again), and the current input.
 */
export function buildResponsesRequest(options: BuildRequestOptions): ResponsesPayload {
  const history = options.history ?? [];
  // The latest text history holds for each block.
  const present = new Map<ContextTag, string>();
  for (const m of history) {
    const tag = blockTagOf(m.content);
    if (tag !== undefined) present.set(tag, blockText(tag, m.content));
  }
  const texts: Record<ContextTag, string | undefined> = {
    developer_instructions: developerInstructions(options),
    turn_context: options.turnContext,
    user_instructions: options.userInstructions,
    environment_context: options.environmentContext,
  };
  const input: ResponseInputItem[] = history.map((m) => ({
    type: "message",
    // The Responses input has no system zone besides `instructions`: system history goes as user.
    role: m.role === "system" ? "user" : m.role,
    content: m.content,
  }));
  for (const block of CONTEXT_BLOCKS) {
    const text = texts[block.tag];
    if (text === undefined || text.trim() === "") continue;
    const held = present.get(block.tag);
    if (held !== undefined && (!UPDATABLE.has(block.tag) || held === text.trim())) continue;
    input.push({ type: "message", role: block.role, content: wrapBlock(block.tag, text) });
  }
  if (options.input !== undefined) input.push({ type: "message", role: "user", content: options.input });
  const output = resolveOutputSchema(options);
  const tools = options.tools ?? [];
  const { verbosity, ...settings } = requestSettings(options);
  const text = { ...(output ? { format: textFormat(output) } : {}), ...(verbosity ? { verbosity } : {}) };
  return {
    model: options.model,
    instructions: options.templates.base.text,
    input,
    ...(tools.length > 0 ? { tools } : {}),
    ...(Object.keys(text).length > 0 ? { text } : {}),
    ...settings,
  };
}
