/** The OA Tools registry's tool ids (apart from tools.ts so STATE.json can list them without a cycle). */
export const OA_TOOL_IDS = [
  "oa.kernel_status",
  "oa.reality_check",
  "oa.guard.run",
  "oa.bootstrap_state",
  "oa.ssot_surface",
  "oa.reality_summary",
  "oa.handoff_kernel",
] as const;
export type OAToolId = (typeof OA_TOOL_IDS)[number];

/** The spec's "DSPy Program → Tool Mapping". */
export const PROGRAM_TOOL_IDS = {
  SafeOPSDecision: ["oa.kernel_status", "oa.reality_summary"],
  OPSBlockGenerator: ["oa.kernel_status", "oa.ssot_surface", "oa.bootstrap_state"],
  GuardFailureInterpreter: ["oa.kernel_status", "oa.guard.run"],
  PhaseTransitionValidator: ["oa.kernel_status", "oa.ssot_surface", "oa.reality_check"],
} as const satisfies Record<string, readonly OAToolId[]>;
