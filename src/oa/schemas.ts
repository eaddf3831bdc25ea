/**
 * Wire formats of OA: the kernel surfaces it reads (DESIGN.md §2), the STATE it writes, the boot
 * envelope and the guard output. Surface schemas are loose: fields OA does not know are kept.
 */
import { z } from "zod";

/** A phase is written as a string ("27", "27.E") or a number (27); OA compares it as a string. */
export const OAPhaseSchema = z.union([z.string().min(1), z.number()]);

export const KernelModeSchema = z.enum(["NORMAL", "DEGRADED", "BLOCKED"]);
export type KernelMode = z.output<typeof KernelModeSchema>;

export const PmBootstrapStateSchema = z.looseObject({
  branch: z.string().min(1),
  meta: z.looseObject({ current_phase: OAPhaseSchema.optional() }).optional(),
  health: z
    .looseObject({
      reality_green: z.boolean().optional(),
      agents_sync_ok: z.boolean().optional(),
      dms_alignment_ok: z.boolean().optional(),
    })
    .optional(),
});

export const SsotSurfaceSchema = z
  .looseObject({
    current_phase: OAPhaseSchema.optional(),
    phases: z.looseObject({ current: OAPhaseSchema.optional() }).optional(),
    last_completed_phase: OAPhaseSchema.nullable().optional(),
  })
  .refine((s) => s.current_phase !== undefined || s.phases?.current !== undefined, {
    message: "expected current_phase (or phases.current)",
    path: ["current_phase"],
  });

export const RealityCheckSchema = z.looseObject({
  name: z.string().min(1),
  passed: z.boolean(),
  message: z.string().optional(),
  details: z.unknown().optional(),
});

export const RealityGreenSummarySchema = z.looseObject({
  reality_green: z.boolean(),
  checks: z.array(RealityCheckSchema),
  timestamp: z.string().optional(),
  /** Optional: the branch the checks ran on; compared with the bootstrap's branch. */
  branch: z.string().optional(),
});

/** The handoff kernel's content is free-form; branch and phase are compared when present. */
export const HandoffKernelSchema = z.looseObject({
  branch: z.string().optional(),
  current_phase: OAPhaseSchema.optional(),
});

export const PendingOpsBlockSchema = z.union([z.string(), z.looseObject({ id: z.string().optional(), goal: z.string().optional() })]);

export const OAContextBodySchema = z.looseObject({
  active_goal: z.string().nullable().default(null),
  kernel_mode: KernelModeSchema.nullable().default(null),
  constraints: z.array(z.string()).default([]),
  pending_ops_blocks: z.array(PendingOpsBlockSchema).default([]),
  session_metadata: z.record(z.string(), z.unknown()).default({}),
});
export type OAContextBody = z.output<typeof OAContextBodySchema>;

export const OAContextFileSchema = z.looseObject({
  version: z.union([z.number(), z.string()]).default(1),
  context: OAContextBodySchema,
});
export type OAContextFile = z.output<typeof OAContextFileSchema>;

export const SurfaceStatusSchema = z.object({
  path: z.string(),
  required: z.boolean(),
  status: z.enum(["ok", "missing", "invalid_json", "invalid"]),
  /** sha256 of the file's bytes, so the guard can tell when STATE.json went stale. */
  sha256: z.string().nullable(),
  problem: z.string().nullable(),
});
export type SurfaceStatus = z.output<typeof SurfaceStatusSchema>;

export const OACheckSummarySchema = z.object({ name: z.string(), passed: z.boolean() });

export const OA_STATE_VERSION = 1;

/** share/orchestrator_assistant/STATE.json */
export const OAStateSchema = z.object({
  version: z.literal(OA_STATE_VERSION),
  /** The surfaces directory, relative to the project root. */
  source: z.string(),
  generated_at: z.string(),
  branch: z.string(),
  current_phase: z.string(),
  last_completed_phase: z.string().nullable(),
  reality_green: z.boolean(),
  checks_summary: z.array(OACheckSummarySchema),
  kernel_mode: KernelModeSchema,
  mode_reasons: z.array(z.string()),
  /** Surface name → path relative to the project root: the surfaces this state was built from. */
  surfaces: z.record(z.string(), z.string()),
  surface_status: z.record(z.string(), SurfaceStatusSchema),
  oa_context: OAContextBodySchema,
});
export type OAState = z.output<typeof OAStateSchema>;

export const SnapshotResultSchema = z.object({ success: z.literal(true), path: z.string(), state: OAStateSchema });

export const OAInterpretationSchema = z.object({
  allowed_actions: z.array(z.string()),
  forbidden_actions: z.array(z.string()),
  recommended_commands: z.array(z.string()),
  /** Why the kernel is in this mode (empty when NORMAL). */
  reasons: z.array(z.string()),
});
export type OAInterpretation = z.output<typeof OAInterpretationSchema>;

export const BootEnvelopeSchema = z.object({
  oa_boot_envelope: z.object({
    timestamp: z.string(),
    kernel: z.object({ phase: z.string().nullable(), branch: z.string().nullable(), mode: KernelModeSchema }),
    interpretation: OAInterpretationSchema,
    session_metadata: z.object({ session_id: z.string().regex(/^oa-session-[0-9a-f-]{36}$/), workspace: z.string() }),
  }),
});
export type BootEnvelope = z.output<typeof BootEnvelopeSchema>;

export const OAGuardModeSchema = z.enum(["STRICT", "HINT"]);
export type OAGuardMode = z.output<typeof OAGuardModeSchema>;

export const OADiagnosticCategorySchema = z.enum(["kernel_mismatch", "config_drift", "missing_surface", "schema_violation", "tri_surface_incoherence"]);
export type OADiagnosticCategory = z.output<typeof OADiagnosticCategorySchema>;

export const OADiagnosticSchema = z.object({
  category: OADiagnosticCategorySchema,
  /** error = the spec's FAIL, warn = WARN. */
  severity: z.enum(["error", "warn"]),
  message: z.string(),
  details: z.record(z.string(), z.unknown()),
  remediation: z.string(),
});
export type OADiagnostic = z.output<typeof OADiagnosticSchema>;

export const OAMismatchSchema = z.object({
  check: z.string(),
  field: z.string(),
  expected: z.unknown(),
  actual: z.unknown(),
  /** [surface holding `expected`, surface holding `actual`] */
  surfaces: z.tuple([z.string(), z.string()]),
});
export type OAMismatch = z.output<typeof OAMismatchSchema>;

export const OAGuardOutputSchema = z.object({
  ok: z.boolean(),
  /** The guard's mode (STRICT|HINT), as in the spec's example. */
  mode: OAGuardModeSchema,
  kernel_mode: KernelModeSchema,
  mismatches: z.array(OAMismatchSchema),
  missing_surfaces: z.array(z.string()),
  diagnostics: z.array(OADiagnosticSchema),
  timestamp: z.string(),
});
export type OAGuardOutput = z.output<typeof OAGuardOutputSchema>;
