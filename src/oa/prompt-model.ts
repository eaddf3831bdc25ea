/**
 * OA's reasoning programs answered by a language model through the prompt contract: the request
 * is built by the prompt module (orchestrator role, the program's zod output schema as the
 * explicit structured-output schema) and sent with its `ModelClient`.
 */
import type { z } from "zod";
import type { Config } from "../config/index.js";
import { hasCode } from "../core/index.js";
import {
  ModelClient,
  buildResponsesRequest,
  loadTemplates,
  outputSchemaFromZod,
  type PromptTemplates,
} from "../prompt/index.js";
import type { ReasoningModel } from "./model.js";
import type { ProgramId } from "./programs/io.js";

/** What each program asks, in the spec's words; sent as the turn context. */
const PROGRAM_BRIEFS: Record<ProgramId, string> = {
  SafeOPSDecision:
    "OA reasoning program SafeOPSDecision: decide whether the proposed action may run now, given the kernel state (mode, phase, branch, reality) and the OA context (active goal, constraints). ALLOW, DENY or CONDITIONAL (with the conditions); never ALLOW feature work, migrations or phase transitions unless the kernel is NORMAL.",
  OPSBlockGenerator:
    "OA reasoning program OPSBlockGenerator: write an OPS block for the goal (Goal, Preflight, Commands, Evidence to Return, Next Gate). The commands must do the goal itself (create, edit or run what it names, following the SSOT references and turning each flow hint into the command that follows it), not generic housekeeping; the evidence is what shows the goal done. If the kernel is not NORMAL and the goal is not remediation or diagnosis, write a remediation block instead.",
  GuardFailureInterpreter:
    "OA reasoning program GuardFailureInterpreter: read the guard's output and the kernel state, name the root cause, give a remediation plan in order, and say whether the failure is transient (a re-run would pass).",
  PhaseTransitionValidator:
    "OA reasoning program PhaseTransitionValidator: say whether the project is READY to move to the target phase, listing every missing criterion (failed checks, pending OPS blocks, a kernel that is not NORMAL, phases skipped).",
};

export interface PromptReasoningModelOptions {
  templates?: PromptTemplates;
  /** For the project's template overrides under `.pmagent/prompts/`. */
  projectRoot?: string;
  stream?: boolean;
}

export class PromptReasoningModel implements ReasoningModel {
  private templates: PromptTemplates | undefined;

  constructor(
    readonly client: ModelClient,
    private readonly options: PromptReasoningModelOptions = {},
  ) {
    this.templates = options.templates;
  }

  async complete(programId: ProgramId, input: unknown, outputSchema: z.ZodType): Promise<unknown> {
    const output = outputSchemaFromZod(`oa_${programId}`, outputSchema);
    this.templates ??= loadTemplates({ projectRoot: this.options.projectRoot });
    const request = buildResponsesRequest({
      role: "orchestrator",
      model: this.client.model,
      templates: this.templates,
      turnContext: PROGRAM_BRIEFS[programId],
      input: `${programId} input:\n\n\`\`\`json\n${JSON.stringify(input, null, 2)}\n\`\`\``,
      responsesOutputSchema: output,
      request: this.client.settings.request,
    });
    const answer = await this.client.respond(request, { output, stream: this.options.stream });
    return answer.answer;
  }
}

export interface ReasoningEngine {
  engine: "model" | "rules";
  /** Why this engine: the model's name, or what is missing for one. */
  reason: string;
  model?: PromptReasoningModel;
}

/**
 * Model-backed when `model` is configured and its key is present; rule-based otherwise. Other
 * model setting errors (a bad base URL) are raised: they are mistakes to fix, not a choice.
 */
export function reasoningEngine(config: Config, root: string, env: NodeJS.ProcessEnv = process.env): ReasoningEngine {
  if (config.model === undefined) return { engine: "rules", reason: "rules (no model section in pmagent.config.json)" };
  let client: ModelClient;
  try {
    client = ModelClient.fromConfig(config.model, env);
  } catch (err) {
    if (hasCode(err, "no_model_api_key"))
      return { engine: "rules", reason: `rules (model configured, but ${config.model.api_key_env} is not set)` };
    throw err;
  }
  return {
    engine: "model",
    reason: `model ${client.model}`,
    model: new PromptReasoningModel(client, { projectRoot: root }),
  };
}
