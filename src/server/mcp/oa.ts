import { z } from "zod";
import {
  BootEnvelopeSchema,
  KernelModeSchema,
  OAGuardOutputSchema,
  type BootEnvelope,
  type OAGuardOutput,
  type OAState,
} from "../../oa/index.js";
import { Detail, READ, tool, type ToolDef } from "./tool.js";

const list = (xs: readonly string[]) => (xs.length > 0 ? xs.join(", ") : "none");

export const OA_TOOLS: ToolDef[] = [
  tool({
    name: "oa_boot",
    title: "OA boot envelope",
    description:
      "The Orchestrator Assistant's boot envelope: the kernel's mode (NORMAL, DEGRADED, BLOCKED) and phase, the actions allowed and forbidden in that mode, and why. Read it before acting on the kernel.",
    input: z.object({}).strict(),
    output: BootEnvelopeSchema,
    hints: READ,
    async run(_a, env) {
      const b = (await env.route("GET /v1/oa/boot")) as BootEnvelope;
      const { kernel, interpretation: i } = b.oa_boot_envelope;
      const text = [
        `Kernel ${kernel.mode} (phase ${kernel.phase ?? "unknown"}, branch ${kernel.branch ?? "unknown"})`,
        `Allowed: ${list(i.allowed_actions)}`,
        `Forbidden: ${list(i.forbidden_actions)}`,
        ...(i.reasons.length > 0 ? [`Why: ${i.reasons.join("; ")}`] : []),
        ...(i.recommended_commands.length > 0 ? [`Recommended: ${i.recommended_commands.join("; ")}`] : []),
      ];
      return { structured: b, text: text.join("\n") };
    },
  }),
  tool({
    name: "oa_guard",
    title: "OA coherence guard",
    description:
      "Check that the kernel surfaces agree with each other (STRICT fails on errors and blockers; HINT only reports). Answers ok, the mismatches one per line and structured diagnostics with remediations.",
    input: z
      .object({
        mode: z
          .enum(["STRICT", "HINT"])
          .default("HINT")
          .describe("STRICT: ok is false on any error or blocker; HINT (default): report only"),
      })
      .strict(),
    output: OAGuardOutputSchema,
    hints: READ,
    async run(a, env) {
      const g = (await env.route("GET /v1/oa/guard", { query: { mode: a.mode } })) as OAGuardOutput;
      const text = [
        `Guard ${g.mode}: ${g.ok ? "ok" : "not ok"}; kernel ${g.kernel_mode}; missing surfaces: ${list(g.missing_surfaces)}`,
        ...g.mismatches.map((m) => `- ${m}`),
      ];
      return { structured: g, text: text.join("\n") };
    },
  }),
  tool({
    name: "oa_snapshot",
    title: "OA state snapshot",
    description:
      'The OA state built from the kernel surfaces now (nothing is written): kernel mode and why, phase, whether reality is green, failing checks and missing surfaces. detail "full" adds the whole normalized state.',
    input: z.object({ detail: Detail }).strict(),
    output: z.object({
      kernel_mode: KernelModeSchema,
      mode_reasons: z.array(z.string()),
      branch: z.string(),
      current_phase: z.string(),
      last_completed_phase: z.string().nullable(),
      reality_green: z.boolean(),
      failing_checks: z.array(z.string()),
      missing_surfaces: z.array(z.string()).describe("surfaces absent or invalid"),
      state: z
        .record(z.string(), z.unknown())
        .optional()
        .describe('the whole normalized OA state, as GET /v1/oa/snapshot answers (only with detail: "full")'),
    }),
    hints: READ,
    async run(a, env) {
      const s = (await env.route("GET /v1/oa/snapshot")) as OAState;
      const digest = {
        kernel_mode: s.kernel_mode,
        mode_reasons: s.mode_reasons,
        branch: s.branch,
        current_phase: s.current_phase,
        last_completed_phase: s.last_completed_phase,
        reality_green: s.reality_green,
        failing_checks: s.checks_summary.filter((c) => !c.passed).map((c) => c.name),
        missing_surfaces: Object.entries(s.surface_status)
          .filter(([, ok]) => !ok)
          .map(([name]) => name),
      };
      const text = [
        `Kernel ${s.kernel_mode} at phase ${s.current_phase} on ${s.branch}; reality ${s.reality_green ? "green" : "not green"}`,
        `Failing checks: ${list(digest.failing_checks)}; missing surfaces: ${list(digest.missing_surfaces)}`,
        ...s.mode_reasons.map((r) => `- ${r}`),
        ...(a.detail === "full" ? [JSON.stringify(s)] : []),
      ];
      return { structured: { ...digest, state: a.detail === "full" ? s : undefined }, text: text.join("\n") };
    },
  }),
];
