import { posix } from "node:path";
import { OA_MODE_TABLE } from "../kernel.js";
import { recordOpsBlock } from "../context.js";
import { OPSBlockGeneratorInputSchema, OPSBlockGeneratorOutputSchema, ProgramInputsSchemas, type OPSBlockGeneratorInput, type OPSBlockGeneratorOutput } from "./io.js";
import { classifyAction } from "./classify.js";
import { PROGRAM_TOOL_IDS } from "../tool-ids.js";
import type { ProgramDefinition } from "./types.js";

const GUARD = "pmagent oa guard --mode STRICT --format json";
const PATH_RE = /(?:[\w.-]+\/)+[\w.-]+|\b[\w-]+\.(?:md|json|ts|js|mjs|py|ya?ml|toml|txt|sh|sql)\b/g;
const CREATE_RE = /\b(create|add|write|new|introduce|draft)\b/i;

/** File paths named in the goal (e.g. docs/SSOT/oa/OA_DATA_MODEL.md), in order, once each. */
export function pathsInGoal(goal: string): string[] {
  return [...new Set(goal.match(PATH_RE) ?? [])].filter((p) => !p.startsWith("/") && !p.split("/").includes(".."));
}

/** OPSBlockGenerator: an OPS block (Goal, Commands, Evidence to return, Next gate) for a goal. */
export function generateOpsBlock(input: OPSBlockGeneratorInput): OPSBlockGeneratorOutput {
  const { goal, kernel_state: k, ssot_references: refs, hints } = input;
  const category = classifyAction(goal);
  const row = OA_MODE_TABLE[k.mode];
  // In DEGRADED a goal whose category is forbidden gets a remediation-only block.
  const goalAllowed = category === null ? k.mode === "NORMAL" : !row.forbidden.includes(category);
  const paths = pathsInGoal(goal);
  const creating = CREATE_RE.test(goal);

  const commands: string[] = [GUARD];
  const evidence: string[] = [`Output of \`${GUARD}\` before starting (must show "ok": true)`];
  if (k.mode !== "NORMAL") {
    commands.push("pmagent oa tool oa.reality_check", "pmagent oa guard --mode HINT --format json | pmagent oa interpret -");
    evidence.push("Output of `pmagent oa tool oa.reality_check` (failed checks to remediate)");
  }
  if (goalAllowed) {
    for (const p of paths) {
      const dir = posix.dirname(p);
      if (creating && dir !== ".") commands.push(`mkdir -p ${dir}`);
      commands.push(creating ? `head -n 50 ${p}` : `git diff --stat -- ${p}`);
      evidence.push(creating ? `First 50 lines of ${p}` : `\`git diff -- ${p}\` output`);
    }
  }
  for (const ref of refs) evidence.push(`Confirmation that ${ref} was read and followed`);
  for (const h of hints) evidence.push(`Confirmation of the ${h.flow_id} hint: ${h.hint}`);
  commands.push("pmagent oa snapshot --format json", GUARD);
  evidence.push(`Output of \`${GUARD}\` after the work (must show "ok": true)`);

  const title = goal.length > 72 ? `${goal.slice(0, 69)}...` : goal;
  const lines = [
    `## 🟦 OPS MODE — ${title}`,
    "",
    `Kernel: phase ${k.phase ?? "unknown"} · branch \`${k.branch ?? "unknown"}\` · mode **${k.mode}**`,
    "",
    "### Goal",
    "",
    goal,
  ];
  if (!goalAllowed) lines.push("", `> Kernel is ${k.mode}: ${category ?? "this work"} is not allowed now, so this block only remediates (${k.reasons.join("; ")}).`);
  if (refs.length > 0) lines.push("", "References:", ...refs.map((r) => `- ${r}`));
  if (hints.length > 0) lines.push("", "Hints:", ...hints.map((h) => `- (${h.flow_id}) ${h.hint}`));
  lines.push("", "### Commands", "", "```bash", ...commands, "```", "", "### Evidence to return", "", ...evidence.map((e) => `- ${e}`), "", "### Next gate", "");
  lines.push(
    k.mode === "NORMAL"
      ? "- `pmagent oa guard --mode STRICT` passes (exit 0) on the regenerated STATE.json; then the next OPS block may start."
      : `- The kernel returns to NORMAL (\`pmagent boot oa\` exits 0 with mode NORMAL) before any ${row.forbidden.join(", ")}.`,
  );
  return { ops_block: `${lines.join("\n")}\n`, commands, evidence_required: evidence };
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
    const fromSsot = Array.isArray(ssot.references) ? ssot.references.filter((r): r is string => typeof r === "string" && r.length > 0) : [];
    return { goal: ctx.envelope.goal, kernel_state: kernel, ssot_references: inputs.ssot_references ?? fromSsot, hints: inputs.hints };
  },
  rules: generateOpsBlock,
  decision: () => "GENERATED",
  rationale: (o) => `OPS block with ${o.commands.length} commands and ${o.evidence_required.length} evidence items`,
  commit(ctx, output) {
    // A BLOCKED kernel gets a diagnosis-only block: nothing to record as pending work.
    if (ctx.kernel.mode === "BLOCKED") return;
    recordOpsBlock(ctx.workspace, { id: ctx.envelope.envelope_id, goal: ctx.envelope.goal, created_at: ctx.envelope.timestamp, commands: output.commands }, ctx.kernel.mode);
  },
};
