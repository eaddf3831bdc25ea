import type { z } from "zod";
import {
  GuardFailureInterpreterInputSchema,
  GuardFailureInterpreterOutputSchema,
  OPSBlockGeneratorInputSchema,
  OPSBlockGeneratorOutputSchema,
  PhaseTransitionValidatorInputSchema,
  PhaseTransitionValidatorOutputSchema,
  SafeOPSDecisionInputSchema,
  SafeOPSDecisionOutputSchema,
} from "./programs/io.js";
import { ReasoningEnvelopeSchema, ReasoningResultSchema } from "./reasoning.js";
import {
  BootEnvelopeSchema,
  OAContextFileSchema,
  OAGuardOutputSchema,
  OAStateSchema,
  SnapshotResultSchema,
} from "./schemas.js";

/** The OA wire formats published as JSON Schemas in schemas/ (by scripts/schemas.ts). */
export const OA_PUBLISHED_SCHEMAS: Array<{ name: string; schema: z.ZodType; io: "input" | "output" }> = [
  { name: "oa-state", schema: OAStateSchema, io: "output" },
  { name: "oa-snapshot-result", schema: SnapshotResultSchema, io: "output" },
  { name: "oa-context", schema: OAContextFileSchema, io: "input" },
  { name: "oa-boot-envelope", schema: BootEnvelopeSchema, io: "output" },
  { name: "oa-guard-output", schema: OAGuardOutputSchema, io: "output" },
  { name: "oa-reasoning-envelope", schema: ReasoningEnvelopeSchema, io: "output" },
  { name: "oa-reasoning-result", schema: ReasoningResultSchema, io: "output" },
  { name: "oa-safe-ops-decision-input", schema: SafeOPSDecisionInputSchema, io: "output" },
  { name: "oa-safe-ops-decision-output", schema: SafeOPSDecisionOutputSchema, io: "output" },
  { name: "oa-ops-block-generator-input", schema: OPSBlockGeneratorInputSchema, io: "output" },
  { name: "oa-ops-block-generator-output", schema: OPSBlockGeneratorOutputSchema, io: "output" },
  { name: "oa-guard-failure-interpreter-input", schema: GuardFailureInterpreterInputSchema, io: "output" },
  { name: "oa-guard-failure-interpreter-output", schema: GuardFailureInterpreterOutputSchema, io: "output" },
  { name: "oa-phase-transition-validator-input", schema: PhaseTransitionValidatorInputSchema, io: "output" },
  { name: "oa-phase-transition-validator-output", schema: PhaseTransitionValidatorOutputSchema, io: "output" },
];
