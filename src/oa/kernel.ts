/**
 * The kernel's view: mode (NORMAL/DEGRADED/BLOCKED), branch, phase and health, derived from the
 * kernel surfaces alone, and the interpretation table of DESIGN.md §2.
 */
import {
  OA_INIT_COMMAND,
  SURFACES,
  describeProblem,
  noKernelSurfaces,
  surfaceList,
  type SurfaceSet,
} from "./surfaces.js";
import type { OAInterpretation, KernelMode, OAMismatch } from "./schemas.js";

/** Checks named by the spec's tri-surface coherence rules, with the bootstrap health flag they mirror. */
export const KEY_CHECKS = [
  { name: "AGENTS.md Sync", health: "agents_sync_ok" },
  { name: "DMS Alignment", health: "dms_alignment_ok" },
] as const;

/** The key checks the origin's guard compares between STATE.json's checks_summary and the summary's checks. */
export const STATE_KEY_CHECKS = ["AGENTS.md Sync", "DMS Alignment", "AGENTS–DMS Contract"] as const;

/** The legacy bootstrap field the origin's guard still reads: "BROKEN" while DMS Alignment passes is stale. */
export const LEGACY_DMS_FIELD = "meta.dms_share_alignment";

export interface KernelView {
  mode: KernelMode;
  /** Why the mode is not NORMAL, one line each. */
  reasons: string[];
  branch: string | null;
  phase: string | null;
  last_completed_phase: string | null;
  reality_green: boolean | null;
  checks: Array<{ name: string; passed: boolean; message: string | null }>;
  failed_checks: string[];
  health: { reality_green: boolean | null; agents_sync_ok: boolean | null; dms_alignment_ok: boolean | null };
  /** The one command that fixes a BLOCKED kernel, when there is one (`pmagent oa init` on a first run). */
  fix: string | null;
  /**
   * Disagreements between kernel surfaces the origin's guard fails on (the bootstrap's health flags
   * and legacy DMS field vs the summary's checks): reality is not proven (DEGRADED), never BLOCKED.
   */
  disagreements: OAMismatch[];
  /**
   * Disagreements the origin's guard does not check, said as hints only: the bootstrap's
   * `health.reality_green` (regenerated from the summary, so stale on the first run after a
   * failure) and branch or phase copies in the bootstrap, summary and handoff kernel.
   */
  hints: OAMismatch[];
}

export function phaseString(value: string | number | null | undefined): string | null {
  return value === undefined || value === null ? null : String(value);
}

export function findCheck<T extends { name: string }>(checks: readonly T[], name: string): T | undefined {
  return checks.find((c) => c.name.toLowerCase() === name.toLowerCase());
}

export function computeKernel(set: SurfaceSet): KernelView {
  const b = set.bootstrap.data;
  const s = set.ssot.data;
  const r = set.reality.data;
  const h = set.handoff.data;
  const checks = (r?.checks ?? []).map((c) => ({ name: c.name, passed: c.passed, message: c.message ?? null }));
  const view: KernelView = {
    mode: "NORMAL",
    reasons: [],
    branch: b?.branch ?? null,
    phase: phaseString(s?.current_phase ?? s?.phases?.current),
    last_completed_phase: phaseString(s?.last_completed_phase),
    reality_green: r?.reality_green ?? null,
    checks,
    failed_checks: checks.filter((c) => !c.passed).map((c) => c.name),
    health: {
      reality_green: b?.health?.reality_green ?? null,
      agents_sync_ok: b?.health?.agents_sync_ok ?? null,
      dms_alignment_ok: b?.health?.dms_alignment_ok ?? null,
    },
    disagreements: [],
    hints: [],
    fix: null,
  };

  const blocked: string[] = [];
  for (const surface of surfaceList(set)) {
    if (surface.status.required && surface.status.status !== "ok")
      blocked.push(`required surface ${describeProblem(surface.status)}`);
  }

  const file = (n: keyof typeof SURFACES) => SURFACES[n].file;
  const differ =
    (into: OAMismatch[]) =>
    (check: string, field: string, expected: unknown, actual: unknown, surfaces: [string, string]) => {
      if (expected === null || expected === undefined || actual === null || actual === undefined || expected === actual)
        return;
      into.push({ check, field, expected, actual, surfaces });
    };
  const disagree = differ(view.disagreements);
  const hint = differ(view.hints);
  const summaryAndBootstrap: [string, string] = [file("reality_green_summary"), file("pm_bootstrap_state")];
  if (b && r) {
    for (const key of KEY_CHECKS)
      disagree(
        key.name,
        `health.${key.health}`,
        findCheck(r.checks, key.name)?.passed,
        b.health?.[key.health],
        summaryAndBootstrap,
      );
    if (b.meta?.dms_share_alignment === "BROKEN" && findCheck(r.checks, "DMS Alignment")?.passed === true) {
      disagree("DMS Alignment", LEGACY_DMS_FIELD, true, "BROKEN", summaryAndBootstrap);
    }
    hint("reality_green", "health.reality_green", r.reality_green, b.health?.reality_green, summaryAndBootstrap);
    hint("branch", "branch", b.branch, r.branch, [file("pm_bootstrap_state"), file("reality_green_summary")]);
  }
  if (b && h) hint("branch", "branch", b.branch, h.branch, [file("pm_bootstrap_state"), file("handoff_kernel")]);
  if (b && s)
    hint("phase", "meta.current_phase", view.phase, phaseString(b.meta?.current_phase), [
      file("ssot_surface"),
      file("pm_bootstrap_state"),
    ]);
  if (h && s)
    hint("phase", "current_phase", view.phase, phaseString(h.current_phase), [
      file("ssot_surface"),
      file("handoff_kernel"),
    ]);

  // BLOCKED is for what OA cannot read at all; surfaces that disagree are read fine and only
  // leave reality unproven (DEGRADED below).
  if (blocked.length === 0 && view.branch === null)
    blocked.push(`the branch cannot be determined (${file("pm_bootstrap_state")} branch)`);
  if (blocked.length === 0 && view.phase === null)
    blocked.push(`the phase cannot be determined (${file("ssot_surface")} current_phase)`);
  if (blocked.length > 0) {
    view.mode = "BLOCKED";
    view.reasons = blocked;
    if (noKernelSurfaces(set)) view.fix = OA_INIT_COMMAND;
    return view;
  }

  const degraded: string[] = [];
  if (r && !r.reality_green) degraded.push(`${file("reality_green_summary")}: reality_green is false`);
  for (const c of checks.filter((x) => !x.passed))
    degraded.push(`check "${c.name}" failed${c.message ? `: ${c.message}` : ""}`);
  for (const d of view.disagreements) degraded.push(describeDisagreement(d));
  if (degraded.length > 0) {
    view.mode = "DEGRADED";
    view.reasons = degraded;
  }
  return view;
}

/** One line naming both surfaces and both values. */
export function describeDisagreement(d: OAMismatch): string {
  return `${d.check} disagrees: ${d.surfaces[0]} says ${JSON.stringify(d.expected)}, ${d.surfaces[1]} ${d.field} says ${JSON.stringify(d.actual)}`;
}

/** Actions every mode knows about; DESIGN.md §2 lists which each mode allows and forbids. */
export const OA_ACTIONS = [
  "feature_work",
  "ops_blocks",
  "migrations",
  "phase_transitions",
  "remediation",
  "diagnostic",
] as const;
export type ActionCategory = (typeof OA_ACTIONS)[number];

export const OA_MODE_TABLE: Record<
  KernelMode,
  { allowed: ActionCategory[]; forbidden: ActionCategory[]; recommended: string[] }
> = {
  NORMAL: {
    allowed: ["feature_work", "ops_blocks", "migrations", "phase_transitions"],
    forbidden: [],
    recommended: ["pmagent oa snapshot", "pmagent oa guard --mode STRICT"],
  },
  DEGRADED: {
    allowed: ["remediation", "diagnostic"],
    forbidden: ["feature_work", "migrations", "phase_transitions"],
    recommended: [
      "pmagent oa tool oa.reality_check",
      "pmagent oa guard --mode HINT --format json | pmagent oa interpret -",
      "pmagent oa snapshot",
    ],
  },
  BLOCKED: {
    allowed: ["diagnostic"],
    forbidden: ["feature_work", "ops_blocks", "migrations", "phase_transitions", "remediation"],
    recommended: ["pmagent oa guard --mode HINT", "pmagent oa tool oa.kernel_status"],
  },
};

export function interpretation(view: KernelView): OAInterpretation {
  const row = OA_MODE_TABLE[view.mode];
  const recommended = view.fix ? [view.fix, ...row.recommended] : [...row.recommended];
  return {
    allowed_actions: [...row.allowed],
    forbidden_actions: [...row.forbidden],
    recommended_commands: recommended,
    reasons: [...view.reasons],
  };
}
