/** The spec's "I/O Schemas for DSPy Programs", one input and one output schema per program. */
import { z } from "zod";
import { KernelModeSchema } from "../schemas.js";

export const PROGRAM_IDS = [
  "SafeOPSDecision",
  "OPSBlockGenerator",
  "GuardFailureInterpreter",
  "PhaseTransitionValidator",
] as const;
export const ProgramIdSchema = z.enum(PROGRAM_IDS);
export type ProgramId = z.output<typeof ProgramIdSchema>;

export const KernelStateSchema = z.object({
  mode: KernelModeSchema,
  phase: z.string().nullable(),
  branch: z.string().nullable(),
  reality_green: z.boolean().nullable(),
  /** Why the mode is not NORMAL (empty when NORMAL). */
  reasons: z.array(z.string()),
});
export type KernelState = z.output<typeof KernelStateSchema>;

export const SafeOPSDecisionInputSchema = z.object({
  proposed_action: z.string().min(1),
  kernel_state: KernelStateSchema,
  oa_context: z.object({ active_goal: z.string().nullable(), constraints: z.array(z.string()) }),
});
export const SafeOPSDecisionOutputSchema = z.object({
  decision: z.enum(["ALLOW", "DENY", "CONDITIONAL"]),
  reasoning: z.string().min(1),
  conditions: z.array(z.string()),
  warnings: z.array(z.string()),
});
export type SafeOPSDecisionInput = z.output<typeof SafeOPSDecisionInputSchema>;
export type SafeOPSDecisionOutput = z.output<typeof SafeOPSDecisionOutputSchema>;

export const OpsHintSchema = z.object({ flow_id: z.string().min(1), hint: z.string().min(1) });
export const OPSBlockGeneratorInputSchema = z.object({
  goal: z.string().min(1),
  kernel_state: KernelStateSchema,
  ssot_references: z.array(z.string().min(1)),
  hints: z.array(OpsHintSchema),
});
export const OPSBlockGeneratorOutputSchema = z.object({
  ops_block: z.string().min(1),
  commands: z.array(z.string().min(1)),
  evidence_required: z.array(z.string().min(1)),
});
export type OPSBlockGeneratorInput = z.output<typeof OPSBlockGeneratorInputSchema>;
export type OPSBlockGeneratorOutput = z.output<typeof OPSBlockGeneratorOutputSchema>;

export const GuardRerunSchema = z.object({ exit_code: z.number().int(), ok: z.boolean() });
export const GuardFailureInterpreterInputSchema = z.object({
  /** A registered guard's name, when known: the interpreter re-runs it to tell transient failures. */
  guard_name: z.string().nullable(),
  guard_output: z.unknown(),
  kernel_state: KernelStateSchema,
  rerun: GuardRerunSchema.nullable(),
});
export const GuardFailureInterpreterOutputSchema = z.object({
  root_cause: z.string().min(1),
  remediation_plan: z.array(z.string().min(1)),
  is_transient: z.boolean(),
});
export type GuardFailureInterpreterInput = z.output<typeof GuardFailureInterpreterInputSchema>;
export type GuardFailureInterpreterOutput = z.output<typeof GuardFailureInterpreterOutputSchema>;

export const PhaseTransitionValidatorInputSchema = z.object({
  target_phase: z.string().min(1),
  kernel_state: KernelStateSchema,
  last_completed_phase: z.string().nullable(),
  failed_checks: z.array(z.string()),
  pending_ops_blocks: z.number().int().min(0),
});
export const PhaseTransitionValidatorOutputSchema = z.object({
  transition_status: z.enum(["READY", "NOT_READY"]),
  missing_criteria: z.array(z.string()),
});
export type PhaseTransitionValidatorInput = z.output<typeof PhaseTransitionValidatorInputSchema>;
export type PhaseTransitionValidatorOutput = z.output<typeof PhaseTransitionValidatorOutputSchema>;

/** What each program's envelope carries besides the goal (validated by buildEnvelope). */
export const ProgramInputsSchemas = {
  SafeOPSDecision: z.object({}).strict(),
  OPSBlockGenerator: z
    .object({ ssot_references: z.array(z.string().min(1)).optional(), hints: z.array(OpsHintSchema).default([]) })
    .strict(),
  GuardFailureInterpreter: z
    .object({
      guard_output: z.custom<unknown>((v) => v !== undefined, { message: "expected the guard's JSON output" }),
      guard_name: z.string().min(1).nullable().default(null),
    })
    .strict(),
  PhaseTransitionValidator: z.object({ target_phase: z.string().min(1) }).strict(),
} as const;
