import { OA_MODE_TABLE } from "../kernel.js";
import {
  SafeOPSDecisionInputSchema,
  SafeOPSDecisionOutputSchema,
  type SafeOPSDecisionInput,
  type SafeOPSDecisionOutput,
} from "./io.js";
import { checkConstraints, classifyAction } from "./classify.js";
import { PROGRAM_TOOL_IDS } from "../tool-ids.js";
import type { ProgramDefinition } from "./types.js";

/** SafeOPSDecision: may this action run now, given the kernel mode and the OA constraints? */
export function decideSafeOps(input: SafeOPSDecisionInput): SafeOPSDecisionOutput {
  const { mode, reasons, reality_green } = input.kernel_state;
  const row = OA_MODE_TABLE[mode];
  const category = classifyAction(input.proposed_action);
  const { violated, unchecked } = checkConstraints(input.proposed_action, input.oa_context.constraints);
  const warnings = unchecked.map((c) => `constraint "${c}" is not a no_* constraint; the rules did not check it`);
  if (mode !== "NORMAL") warnings.push(`kernel is ${mode}: ${reasons.join("; ") || "see pmagent oa guard"}`);
  if (reality_green === false && mode === "NORMAL") warnings.push("reality is not green");
  const as = category ?? "unclassified work";

  if (violated.length > 0) {
    return {
      decision: "DENY",
      reasoning: `Action breaks the OA constraint${violated.length > 1 ? "s" : ""} ${violated.join(", ")}.`,
      conditions: [],
      warnings,
    };
  }
  if (category !== null && row.forbidden.includes(category)) {
    return {
      decision: "DENY",
      reasoning: `Kernel is ${mode}; ${category} is forbidden in ${mode} (allowed: ${row.allowed.join(", ")}).`,
      conditions: [],
      warnings,
    };
  }
  if (mode === "BLOCKED") {
    // Fail-closed: only diagnosis runs while the kernel is BLOCKED.
    return category === "diagnostic"
      ? {
          decision: "ALLOW",
          reasoning: "Kernel is BLOCKED; diagnosis is the one thing allowed.",
          conditions: [],
          warnings,
        }
      : {
          decision: "DENY",
          reasoning: `Kernel is BLOCKED; only diagnostic actions run (this is ${as}).`,
          conditions: [],
          warnings,
        };
  }
  if (mode === "NORMAL") {
    if (category === null) warnings.push("the action matched no known category; NORMAL allows all work");
    return {
      decision: "ALLOW",
      reasoning: `Kernel is NORMAL and ${as} is allowed; no constraint conflicts.`,
      conditions: [],
      warnings,
    };
  }
  if (category !== null && row.allowed.includes(category)) {
    return {
      decision: "ALLOW",
      reasoning: `Kernel is DEGRADED and ${category} is allowed in DEGRADED.`,
      conditions: [],
      warnings,
    };
  }
  return {
    decision: "CONDITIONAL",
    reasoning: `Kernel is DEGRADED; ${as} is neither allowed nor forbidden in DEGRADED, so it may run only as remediation.`,
    conditions: [
      "limit the work to remediation or diagnosis of the DEGRADED kernel (no feature work, migrations or phase transitions)",
      "run `pmagent oa guard --mode STRICT` before and after, and report its output",
    ],
    warnings,
  };
}

export const safeOpsDecision: ProgramDefinition<SafeOPSDecisionInput, SafeOPSDecisionOutput> = {
  id: "SafeOPSDecision",
  tools: PROGRAM_TOOL_IDS.SafeOPSDecision,
  inputSchema: SafeOPSDecisionInputSchema,
  outputSchema: SafeOPSDecisionOutputSchema,
  async gather(ctx) {
    const reality = (await ctx.tryTool("oa.reality_summary")) as { reality_green: boolean } | undefined;
    const context = ctx.envelope.oa_context;
    return {
      proposed_action: ctx.envelope.goal,
      kernel_state: { ...ctx.kernel, reality_green: reality?.reality_green ?? ctx.kernel.reality_green },
      oa_context: { active_goal: context.active_goal, constraints: [...context.constraints] },
    };
  },
  rules: decideSafeOps,
  decision: (o) => o.decision,
  rationale: (o) => o.reasoning,
  floor(_input, model, rules) {
    if (rules.decision === "DENY" && model.decision !== "DENY") {
      return {
        output: {
          ...rules,
          warnings: [...rules.warnings, `the model answered ${model.decision}; the rules deny (${rules.reasoning})`],
        },
        overridden: `model decision ${model.decision} overridden by the rules: DENY`,
      };
    }
    return { output: model, overridden: null };
  },
};
