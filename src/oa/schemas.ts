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
  /** `dms_share_alignment` is a legacy field ("OK"/"BROKEN") the origin's guard still compares. */
  meta: z
    .looseObject({ current_phase: OAPhaseSchema.optional(), dms_share_alignment: z.unknown().optional() })
    .optional(),
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

export const PendingOpsBlockSchema = z.union([
  z.string(),
  z.looseObject({ id: z.string().optional(), goal: z.string().optional() }),
]);

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

/** The data model's DMS hint counts, from the reality check that reports them (zero when none does). */
export const DmsHintSummarySchema = z.looseObject({
  total_hints: z.number().int().min(0),
  flows_with_hints: z.number().int().min(0),
});

/**
 * share/orchestrator_assistant/STATE.json as pmagent writes it: the origin's OA data model
 * (`source: "kernel"`, `surface_status` surface → exists-and-valid boolean, `dms_hint_summary`,
 * `oa_tools`, `reasoning_bridge`) plus pmagent's own fields (`surface_details`, `surfaces_dir`,
 * `kernel_mode`, `mode_reasons`), which the origin's consumers ignore.
 */
export const OAStateSchema = z.object({
  version: z.literal(OA_STATE_VERSION),
  /** Always "kernel" (the data model): the state is derived from the kernel surfaces. */
  source: z.literal("kernel"),
  generated_at: z.string(),
  branch: z.string(),
  current_phase: z.string(),
  last_completed_phase: z.string().nullable(),
  reality_green: z.boolean(),
  checks_summary: z.array(OACheckSummarySchema),
  dms_hint_summary: DmsHintSummarySchema,
  /** Surface name → path relative to the project root: the surfaces this state was built from. */
  surfaces: z.record(z.string(), z.string()),
  /** Surface name → true when it exists and is valid (the data model's existence checks). */
  surface_status: z.record(z.string(), z.boolean()),
  /** Surface name → status, problem and content hash (so the guard can tell a stale STATE.json). */
  surface_details: z.record(z.string(), SurfaceStatusSchema),
  /** The surfaces directory, relative to the project root. */
  surfaces_dir: z.string(),
  kernel_mode: KernelModeSchema,
  mode_reasons: z.array(z.string()),
  oa_context: OAContextBodySchema,
  /** The OA Tools registry this runtime offers (the registry's `oa_tools.tools`). */
  oa_tools: z.object({ version: z.number().int(), tools: z.array(z.string()) }),
  /** The reasoning bridge: programs and the tools each may call. */
  reasoning_bridge: z.object({
    version: z.number().int(),
    programs: z.array(z.string()),
    tools_allowed: z.record(z.string(), z.array(z.string())),
  }),
});
export type OAState = z.output<typeof OAStateSchema>;

/**
 * What the guard accepts as STATE.json: the data model's fields, so a STATE.json written by the
 * origin's runtime is read as well as pmagent's own; pmagent's extra fields are optional.
 */
export const OAStateReadSchema = z.looseObject({
  version: z.union([z.number(), z.string()]),
  source: z.string().optional(),
  generated_at: z.string().optional(),
  branch: z.string(),
  current_phase: OAPhaseSchema.transform(String),
  last_completed_phase: OAPhaseSchema.transform(String).nullable().optional(),
  reality_green: z.boolean(),
  checks_summary: z.array(z.looseObject({ name: z.string(), passed: z.boolean() })).default([]),
  surfaces: z.record(z.string(), z.unknown()).optional(),
  surface_status: z.record(z.string(), z.unknown()).optional(),
  surface_details: z.record(z.string(), SurfaceStatusSchema).optional(),
  surfaces_dir: z.string().optional(),
  kernel_mode: KernelModeSchema.optional(),
});
export type OAStateRead = z.output<typeof OAStateReadSchema>;

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

export const OADiagnosticCategorySchema = z.enum([
  "kernel_mismatch",
  "config_drift",
  "missing_surface",
  "schema_violation",
  "tri_surface_incoherence",
]);
export type OADiagnosticCategory = z.output<typeof OADiagnosticCategorySchema>;

/** The catalog's diagnostic: `blocker` makes the kernel BLOCKED, `issue` fails the guard, `warn` reports. */
export const OADiagnosticSchema = z.object({
  type: z.enum(["issue", "warn", "blocker"]),
  category: OADiagnosticCategorySchema,
  /** The catalog's severities; the guard fails (STRICT) on `error` and `block`. */
  severity: z.enum(["info", "warn", "error", "block"]),
  message: z.string(),
  details: z.record(z.string(), z.unknown()),
  remediation: z.string().nullable(),
});
export type OADiagnostic = z.output<typeof OADiagnosticSchema>;

/** A disagreement between two surfaces (kernel view; guard diagnostics carry it in `details`). */
export const OAMismatchSchema = z.object({
  check: z.string(),
  field: z.string(),
  expected: z.unknown(),
  actual: z.unknown(),
  /** [surface holding `expected`, surface holding `actual`] */
  surfaces: z.tuple([z.string(), z.string()]),
});
export type OAMismatch = z.output<typeof OAMismatchSchema>;

/** The catalog's diagnostic report, with the kernel mode pmagent adds. */
export const OAGuardOutputSchema = z.object({
  ok: z.boolean(),
  /** The guard's mode (STRICT|HINT), as in the spec's example. */
  mode: OAGuardModeSchema,
  kernel_mode: KernelModeSchema,
  /** One line per mismatch, as the origin's guard prints them; the structure is in `diagnostics`. */
  mismatches: z.array(z.string()),
  missing_surfaces: z.array(z.string()),
  diagnostics: z.array(OADiagnosticSchema),
  timestamp: z.string(),
});
export type OAGuardOutput = z.output<typeof OAGuardOutputSchema>;
