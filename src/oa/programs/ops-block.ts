import { OA_MODE_TABLE } from "../kernel.js";
import { recordOpsBlock } from "../context.js";
import {
  OPSBlockGeneratorInputSchema,
  OPSBlockGeneratorOutputSchema,
  ProgramInputsSchemas,
  type OPSBlockGeneratorInput,
  type OPSBlockGeneratorOutput,
} from "./io.js";
import { classifyAction } from "./classify.js";
import { pathsIn, planGoal, type OpsStep } from "./ops-plan.js";
import { PROGRAM_TOOL_IDS } from "../tool-ids.js";
import type { ProgramDefinition } from "./types.js";

const VERIFY = "pmagent oa guard --mode STRICT --format json";

/** File paths named in the goal (e.g. docs/SSOT/oa/OA_DATA_MODEL.md), in order, once each. */
export const pathsInGoal = pathsIn;

/** While the kernel is BLOCKED: find out why, nothing else. */
const DIAGNOSE: OpsStep = {
  title: "diagnose the BLOCKED kernel",
  commands: ["pmagent oa tool oa.kernel_status", "pmagent oa guard --format json | pmagent oa interpret -"],
  evidence: [
    "Output of `pmagent oa tool oa.kernel_status` (the reasons the kernel is BLOCKED)",
    "Output of `pmagent oa interpret` (root cause and remediation plan)",
  ],
};

/** While the kernel is DEGRADED and the goal is work it forbids: bring the kernel back first. */
const REMEDIATE: OpsStep = {
  title: "remediate the DEGRADED kernel",
  commands: ["pmagent oa tool oa.reality_check", "pmagent oa guard --format json | pmagent oa interpret -"],
  evidence: [
    "Output of `pmagent oa tool oa.reality_check` (failed checks to remediate)",
    "Output of `pmagent oa interpret` (root cause and remediation plan)",
  ],
};

/**
 * OPSBlockGenerator: an OPS block in the runtime's template (Goal, Preflight, Commands, Evidence
 * to Return, Next Gate) whose commands do the goal, derived from the goal, the SSOT references and
 * the hints; a kernel that forbids the goal gets a diagnosis or remediation block instead.
 */
export function generateOpsBlock(input: OPSBlockGeneratorInput): OPSBlockGeneratorOutput {
  const { goal, kernel_state: k, ssot_references: refs, hints } = input;
  const category = classifyAction(goal);
  const row = OA_MODE_TABLE[k.mode];
  const goalAllowed = k.mode === "NORMAL" || (category !== null && row.allowed.includes(category));

  const fallback = k.mode === "BLOCKED" ? DIAGNOSE : REMEDIATE;
  let steps: OpsStep[] = goalAllowed ? planGoal(goal, refs, hints) : [];
  let note: string | null = null;
  if (!goalAllowed) {
    steps = [fallback];
    note =
      k.mode === "BLOCKED"
        ? `Kernel is BLOCKED (${k.reasons.join("; ")}): only diagnosis runs, so this block diagnoses instead.`
        : `Kernel is ${k.mode}: ${category ?? "this work"} is not allowed now, so this block only remediates (${k.reasons.join("; ")}).`;
  } else if (!steps.some((s) => s.commands.length > 0)) {
    if (k.mode === "NORMAL")
      note =
        "The rules could not derive commands from this goal: name the files it touches (e.g. docs/x.md) or the command in backticks, or configure a model for OA.";
    else steps = [fallback, ...steps];
  }
  const commands = steps.flatMap((s) => s.commands);
  const evidence = steps.flatMap((s) => s.evidence);
  if (refs.length > 0 && goalAllowed)
    evidence.push(`Confirmation that ${refs.join(", ")} ${refs.length > 1 ? "were" : "was"} read and followed`);
  evidence.push(`Output of \`${VERIFY}\` after the work (the kernel surfaces still agree)`);

  const title = goal.length > 72 ? `${goal.slice(0, 69)}...` : goal;
  const lines = [`## 🟦 OPS MODE — ${title}`, "", "## Goal", "", goal, "", "## Preflight", ""];
  if (refs.length > 0) lines.push(`Source: ${refs.join(", ")}`, "");
  lines.push(
    "### Kernel Status",
    "",
    `- Phase: ${k.phase ?? "unknown"}`,
    `- Branch: ${k.branch ?? "unknown"}`,
    `- Mode: ${k.mode}`,
    ...k.reasons.map((r) => `- Because: ${r}`),
    "",
  );
  if (note) lines.push(`> ${note}`, "");
  if (goalAllowed && hints.length > 0)
    lines.push("### Hints", "", ...hints.map((h) => `- (${h.flow_id}) ${h.hint}`), "");
  lines.push("## Commands", "", "```bash");
  for (const s of steps) lines.push(`# ${s.title}`, ...s.commands);
  lines.push(
    VERIFY,
    "```",
    "",
    "## Evidence to Return",
    "",
    ...evidence.map((e, i) => `${i + 1}. ${e}`),
    "",
    "## Next Gate",
    "",
  );
  lines.push(
    k.mode === "NORMAL"
      ? "- If success: `pmagent oa guard --mode STRICT` passes (exit 0); mark the block done with `pmagent oa ops-done <id>`.\n- If failure: `pmagent oa guard --format json | pmagent oa interpret -` and escalate to the PM with its plan."
      : `- The kernel returns to NORMAL (\`pmagent boot oa\` shows mode NORMAL) before any ${row.forbidden.join(", ")}.`,
  );
  return { ops_block: `${lines.join("\n")}\n`, commands: [...commands, VERIFY], evidence_required: evidence };
}

export const opsBlockGenerator: ProgramDefinition<OPSBlockGeneratorInput, OPSBlockGeneratorOutput> = {
  id: "OPSBlockGenerator",
  tools: PROGRAM_TOOL_IDS.OPSBlockGenerator,
  inputSchema: OPSBlockGeneratorInputSchema,
  outputSchema: OPSBlockGeneratorOutputSchema,
  async gather(ctx) {
    const kernel = ctx.kernel;
    const ssot = ((await ctx.tryTool("oa.ssot_surface")) ?? {}) as { references?: unknown };
    await ctx.tryTool("oa.bootstrap_state");
    const inputs = ProgramInputsSchemas.OPSBlockGenerator.parse(ctx.envelope.inputs);
    // Without explicit references, the SSOT surface's own `references` list (when it has one).
    const fromSsot = Array.isArray(ssot.references)
      ? ssot.references.filter((r): r is string => typeof r === "string" && r.length > 0)
      : [];
    return {
      goal: ctx.envelope.goal,
      kernel_state: kernel,
      ssot_references: inputs.ssot_references ?? fromSsot,
      hints: inputs.hints,
    };
  },
  rules: generateOpsBlock,
  decision: () => "GENERATED",
  rationale: (o) => `OPS block with ${o.commands.length} commands and ${o.evidence_required.length} evidence items`,
  commit(ctx, output) {
    // A BLOCKED kernel gets a diagnosis-only block: nothing to record as pending work.
    if (ctx.kernel.mode === "BLOCKED") return;
    recordOpsBlock(
      ctx.workspace,
      {
        id: ctx.envelope.envelope_id,
        goal: ctx.envelope.goal,
        created_at: ctx.envelope.timestamp,
        commands: output.commands,
      },
      ctx.kernel.mode,
    );
  },
};
