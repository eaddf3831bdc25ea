import { z } from "zod";
import type { FunctionTool } from "openai/resources/responses/responses";
import { parseWith } from "../core/index.js";
import type { ModelClient, ModelAnswer } from "./client.js";
import type { Ledger } from "./ledger.js";
import { resolveOutputSchema, type OutputSchema } from "./output-schema.js";
import { buildResponsesRequest, type HistoryMessage, type ResponsesPayload } from "./request.js";
import { reviewOutcome, type ReviewOutcome } from "./review.js";
import { DEFAULT_REVIEW_LEVEL, type ReviewLevel, type AgentRole } from "./roles.js";
import { loadTemplates, type PromptTemplates } from "./templates.js";
import type { ToolHandler } from "./tools.js";

/** The fields of a blackboard entry the role step itself relies on; the rest is passed through. */
const EntrySchema = z.looseObject({
  id: z.string().min(1),
  to: z.string().min(1).optional(),
  kind: z.string().min(1).optional(),
});

export interface RoleStepOptions {
  /** The blackboard entry the step runs for, as JSON. */
  entry: unknown;
  role: AgentRole;
  /** `layer/name` of the lane. */
  lane: string;
  cycle: number;
  /** Earlier artifacts of this cycle. */
  refs?: string[];
  client: ModelClient;
  /** Loaded templates; else the package's, overridden by `projectRoot`'s `.pmagent/prompts/`. */
  templates?: PromptTemplates;
  projectRoot?: string;
  reviewLevel?: ReviewLevel;
  /** Explicit output schema; the role's preset otherwise (structured output is always on here). */
  outputSchema?: OutputSchema;
  turnContext?: string;
  userInstructions?: string;
  environmentContext?: string;
  history?: HistoryMessage[];
  stream?: boolean;
  /**
   * The role's tools and what carries out their calls (the role agent's edit tools for the
   * orchestrator). Without it no tool is offered: a call nobody carries out would be lost.
   */
  tools?: { definitions: FunctionTool[]; handler: ToolHandler };
}

export interface RoleStepResult extends ModelAnswer {
  role: AgentRole;
  ledger: Ledger;
  request: ResponsesPayload;
  /** Reviewer only: what the review means for the lane. */
  review?: ReviewOutcome;
}

/**
 * The LLM role agent's core step: build the request for the entry, call the model, validate the
 * answer with the role's schema and, for a reviewer, apply its level.
 */
export async function runRoleStep(options: RoleStepOptions): Promise<RoleStepResult> {
  const entry = parseWith(EntrySchema, options.entry, "blackboard entry", "invalid_entry");
  const ledger: Ledger = {
    entry_id: entry.id,
    lane: options.lane,
    role: entry.to ?? options.role,
    cycle: options.cycle,
    refs: options.refs ?? [],
  };
  const reviewLevel = options.reviewLevel ?? DEFAULT_REVIEW_LEVEL;
  const build = {
    role: options.role,
    model: options.client.model,
    templates: options.templates ?? loadTemplates({ projectRoot: options.projectRoot }),
    ledger,
    reviewLevel,
    turnContext: options.turnContext,
    userInstructions: options.userInstructions,
    environmentContext: options.environmentContext,
    history: options.history,
    input: entryInput(entry, options.entry),
    responsesOutputSchema: options.outputSchema,
    responsesStructuredOutput: true,
    tools: options.tools?.definitions,
    request: options.client.settings.request,
  };
  const request = buildResponsesRequest(build);
  const answer = await options.client.respond(request, {
    output: resolveOutputSchema(build),
    stream: options.stream,
    tools: options.tools?.handler,
  });
  const review = options.role === "reviewer" ? reviewOutcome(reviewLevel, answer.answer) : undefined;
  return { ...answer, role: options.role, ledger, request, ...(review ? { review } : {}) };
}

/** The entry as the current user input, in its own key order. */
function entryInput(entry: z.output<typeof EntrySchema>, raw: unknown): string {
  const what = entry.kind ? `${entry.id} (${entry.kind})` : entry.id;
  return `Blackboard entry ${what}:\n\n\`\`\`json\n${JSON.stringify(raw, null, 2)}\n\`\`\``;
}
