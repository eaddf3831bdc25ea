import {
  PhaseTransitionValidatorInputSchema,
  PhaseTransitionValidatorOutputSchema,
  ProgramInputsSchemas,
  type PhaseTransitionValidatorInput,
  type PhaseTransitionValidatorOutput,
} from "./io.js";
import { PROGRAM_TOOL_IDS } from "../tool-ids.js";
import type { ProgramDefinition } from "./types.js";

/** Order of phases written as "27", "27.E", "28": numeric parts compare as numbers. */
export function comparePhases(a: string, b: string): number {
  return a.localeCompare(b, "en", { numeric: true, sensitivity: "base" });
}

const WHOLE = /^\d+$/;

/** PhaseTransitionValidator: is the project ready to move to `target_phase`? */
export function validatePhaseTransition(input: PhaseTransitionValidatorInput): PhaseTransitionValidatorOutput {
  const { target_phase: target, kernel_state: k, last_completed_phase: done } = input;
  const missing: string[] = [];
  if (k.mode !== "NORMAL") missing.push(`kernel mode is ${k.mode}, must be NORMAL (${k.reasons.join("; ")})`);
  if (k.reality_green !== true)
    missing.push("reality is not green (REALITY_GREEN_SUMMARY.json reality_green must be true)");
  for (const name of input.failed_checks) missing.push(`check "${name}" is failing`);
  const current = k.phase;
  if (current === null) missing.push("the current phase is unknown (SSOT_SURFACE_V17.json current_phase)");
  else {
    if (comparePhases(target, current) <= 0)
      missing.push(`target phase ${target} is not after the current phase ${current}`);
    else if (WHOLE.test(target) && WHOLE.test(current) && Number(target) > Number(current) + 1) {
      missing.push(
        `phase ${target} skips phase${Number(target) - Number(current) > 2 ? "s" : ""} ${Number(current) + 1}${Number(target) - Number(current) > 2 ? `–${Number(target) - 1}` : ""}`,
      );
    }
    if (done === null || comparePhases(done, current) < 0) {
      missing.push(`the current phase ${current} is not completed (last_completed_phase is ${done ?? "unset"})`);
    }
  }
  if (input.pending_ops_blocks > 0)
    missing.push(
      `${input.pending_ops_blocks} OPS block${input.pending_ops_blocks > 1 ? "s are" : " is"} still pending in share/oa/CONTEXT.json`,
    );
  return { transition_status: missing.length === 0 ? "READY" : "NOT_READY", missing_criteria: missing };
}

export const phaseTransitionValidator: ProgramDefinition<
  PhaseTransitionValidatorInput,
  PhaseTransitionValidatorOutput
> = {
  id: "PhaseTransitionValidator",
  tools: PROGRAM_TOOL_IDS.PhaseTransitionValidator,
  inputSchema: PhaseTransitionValidatorInputSchema,
  outputSchema: PhaseTransitionValidatorOutputSchema,
  async gather(ctx) {
    const kernel = ctx.kernel;
    const ssot = ((await ctx.tryTool("oa.ssot_surface")) ?? {}) as { last_completed_phase?: string | number | null };
    const reality = (await ctx.tryTool("oa.reality_check")) as
      { reality_green: boolean; failed_checks: string[] } | undefined;
    const { target_phase } = ProgramInputsSchemas.PhaseTransitionValidator.parse(ctx.envelope.inputs);
    return {
      target_phase,
      kernel_state: { ...kernel, reality_green: reality?.reality_green ?? null },
      last_completed_phase:
        ssot.last_completed_phase === undefined || ssot.last_completed_phase === null
          ? null
          : String(ssot.last_completed_phase),
      failed_checks: reality?.failed_checks ?? [],
      pending_ops_blocks: ctx.envelope.oa_context.pending_ops_blocks.length,
    };
  },
  rules: validatePhaseTransition,
  decision: (o) => o.transition_status,
  rationale: (o) =>
    o.missing_criteria.length === 0 ? "all transition criteria are met" : `missing: ${o.missing_criteria.join("; ")}`,
  floor(_input, model, rules) {
    if (rules.transition_status === "NOT_READY" && model.transition_status === "READY") {
      return { output: rules, overridden: "model answered READY; the rules find missing criteria: NOT_READY" };
    }
    return { output: model, overridden: null };
  },
};
