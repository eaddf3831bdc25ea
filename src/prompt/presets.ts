import { z } from "zod";
import { UsageError } from "../core/index.js";
import { REVIEW_LEVELS, AGENT_ROLES, type AgentRole } from "./roles.js";

/*
 * Output schema presets, one per role. OpenAI strict mode wants every property required and no
 * additional properties, so nothing here is optional: a field that may not apply is nullable.
 * Objects are strict so that validation refuses extra keys just as the JSON Schema does.
 * `test/prompt/presets.test.ts` checks the generated JSON Schemas against those rules.
 */

const text = z.string();

export const OrchestratorOutputSchema = z.strictObject({
  summary: text.describe("what you decided and why, in a few sentences"),
  plan: z
    .array(
      z.strictObject({
        step: text.describe("one action with a visible result"),
        owner: text.describe("the role that takes this step"),
        status: z.enum(["pending", "in_progress", "completed"]),
      }),
    )
    .describe("the lane's plan as it stands after this turn (update_plan)"),
  doc_edits: z
    .array(
      z.strictObject({
        path: text.describe("document path relative to the repository root"),
        patch: text.describe("the edit in apply_patch format"),
        reason: text,
      }),
    )
    .describe(
      "plan and document edits of this turn in apply_patch format (those made with the apply_patch tool, for the record); empty when none",
    ),
  open_questions: z.array(text).describe("what a human must decide; empty when nothing"),
});

export const ReviewerOutputSchema = z.strictObject({
  level: z.enum(REVIEW_LEVELS).describe("the review level stated in your instructions"),
  decision: z
    .enum(["approve", "revise", "block"])
    .describe("approve: go on; revise: needs changes; block: must not go on"),
  summary: text.describe("why, in a few sentences"),
  claims: z
    .array(
      z.strictObject({
        claim: text.describe("what the executor claims"),
        evidence: text.nullable().describe("the evidence found for it, or null when there is none"),
        verdict: z.enum(["supported", "unsupported", "contradicted"]),
      }),
    )
    .describe("claim-evidence audit of executor output; empty for other output"),
  planning_feedback: z
    .array(z.strictObject({ issue: text, suggestion: text }))
    .describe("practical feedback on orchestrator plans and document edits; empty for other output"),
});

export const ExecutorOutputSchema = z.strictObject({
  status: z.enum(["completed", "partial", "failed"]),
  summary: text,
  claims: z
    .array(
      z.strictObject({
        claim: text,
        evidence: z.array(text).describe("diffs, file excerpts, command output backing the claim"),
      }),
    )
    .describe("every claim with its evidence, for the reviewer's audit"),
  changed_files: z.array(text),
  commands: z.array(
    z.strictObject({ command: text, exit_code: z.number().int().nullable().describe("null when it did not finish") }),
  ),
  remaining: z.array(text).describe("what is left to do; empty when nothing"),
});

export const SearcherOutputSchema = z.strictObject({
  answer: text.describe("the answer to the question, grounded in the findings"),
  findings: z.array(
    z.strictObject({
      source: text.describe("path:line, entry id or URL"),
      excerpt: text,
      relevance: text.describe("how this answers the question"),
    }),
  ),
  gaps: z.array(text).describe("what was searched and not found; empty when nothing"),
});

export type OrchestratorOutput = z.output<typeof OrchestratorOutputSchema>;
export type ReviewerOutput = z.output<typeof ReviewerOutputSchema>;
export type ExecutorOutput = z.output<typeof ExecutorOutputSchema>;
export type SearcherOutput = z.output<typeof SearcherOutputSchema>;

export const OUTPUT_PRESETS = {
  orchestrator: OrchestratorOutputSchema,
  reviewer: ReviewerOutputSchema,
  executor: ExecutorOutputSchema,
  searcher: SearcherOutputSchema,
} as const satisfies Record<AgentRole, z.ZodType>;

/** A preset name, or `none` to turn structured output off. */
export type PresetName = AgentRole | "none";
export const PRESET_NAMES: readonly PresetName[] = [...AGENT_ROLES, "none"];

export function parsePresetName(value: string): PresetName {
  if (!(PRESET_NAMES as readonly string[]).includes(value)) {
    throw new UsageError(
      "unknown_preset",
      `unknown output schema preset "${value}": expected one of ${PRESET_NAMES.join(", ")}`,
    );
  }
  return value as PresetName;
}

/** `text.format.name` of a preset (OpenAI allows letters, digits, `_` and `-`, up to 64). */
export function presetFormatName(role: AgentRole): string {
  return `pmagent_${role}_output`;
}
