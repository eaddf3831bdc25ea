/**
 * The OA state guard (the spec's guard_oa_state.py): compares STATE.json with the kernel surfaces
 * and the kernel surfaces with each other, and reports every problem as a diagnostic.
 */
import { nowIso } from "../core/index.js";
import { KEY_CHECKS, computeKernel, findCheck, type KernelView } from "./kernel.js";
import type { OADiagnostic, OAGuardMode, OAGuardOutput, OAMismatch, OAState, SurfaceStatus } from "./schemas.js";
import { SURFACES, contextOf, loadSurfaces, surfaceList, type SurfaceSet } from "./surfaces.js";
import { readState } from "./snapshot.js";
import { displayPath, type OAWorkspace } from "./workspace.js";

const SNAPSHOT = "run `pmagent oa snapshot` to regenerate STATE.json from the kernel surfaces";
const STATE_FILE = "orchestrator_assistant/STATE.json";

export function runOaGuard(ws: OAWorkspace, mode: OAGuardMode, clock: () => number = Date.now): OAGuardOutput {
  const set = loadSurfaces(ws);
  const kernel = computeKernel(set);
  const { status: stateStatus, state } = readState(ws);
  const diagnostics: OADiagnostic[] = [];
  const mismatches: OAMismatch[] = [];
  const missing: string[] = [];

  surfaceDiagnostics(set, diagnostics, missing);
  stateStatusDiagnostics(stateStatus, diagnostics, missing);
  kernelDisagreements(kernel, diagnostics, mismatches);
  if (state) {
    driftDiagnostics(ws, set, kernel, state, diagnostics);
    stateMismatches(set, state, diagnostics, mismatches);
  }
  return {
    ok: !diagnostics.some((d) => d.severity === "error"),
    mode,
    kernel_mode: kernel.mode,
    mismatches,
    missing_surfaces: missing,
    diagnostics,
    timestamp: nowIso(clock),
  };
}

/** Surface existence (WARN for optional surfaces, FAIL for required ones) and context validity. */
function surfaceDiagnostics(set: SurfaceSet, out: OADiagnostic[], missing: string[]): void {
  for (const s of surfaceList(set)) {
    const st = s.status;
    if (st.status === "ok") continue;
    // CONTEXT.json is optional with an empty fallback: its absence is not a problem.
    if (st.status === "missing" && s.name === "oa_context") continue;
    const severity = st.required ? "error" : "warn";
    if (st.status === "missing") {
      missing.push(st.path);
      out.push({
        category: "missing_surface",
        severity,
        message: `${st.required ? "required" : "referenced"} surface ${st.path} does not exist`,
        details: { surface: s.name, path: st.path, required: st.required },
        remediation: `restore ${st.path} (the kernel writes it), or set oa.surfaces_dir in pmagent.config.json to the directory that holds ${SURFACES[s.name].file}`,
      });
    } else {
      out.push({
        category: "schema_violation",
        severity,
        message: `${st.path} is ${st.status === "invalid_json" ? "not valid JSON" : "invalid"}: ${st.problem}`,
        details: { surface: s.name, path: st.path, problem: st.problem },
        remediation: s.name === "oa_context" ? `fix or delete ${st.path} (a missing context is treated as empty)` : `fix ${st.path} so that it matches the surface's fields, or regenerate it`,
      });
    }
  }
}

function stateStatusDiagnostics(st: SurfaceStatus, out: OADiagnostic[], missing: string[]): void {
  if (st.status === "missing") {
    missing.push(st.path);
    out.push({ category: "missing_surface", severity: "error", message: `OA state ${st.path} does not exist`, details: { path: st.path }, remediation: SNAPSHOT });
  } else if (st.status !== "ok") {
    out.push({ category: "schema_violation", severity: "error", message: `OA state ${st.path} is invalid: ${st.problem}`, details: { path: st.path, problem: st.problem }, remediation: SNAPSHOT });
  }
}

/** Kernel surfaces disagreeing with each other; reality/bootstrap pairs are tri-surface rules. */
function kernelDisagreements(kernel: KernelView, out: OADiagnostic[], mismatches: OAMismatch[]): void {
  const tri = new Set<string>([SURFACES.reality_green_summary.file, SURFACES.pm_bootstrap_state.file]);
  for (const { gross: _gross, ...d } of kernel.disagreements) {
    mismatches.push(d);
    const isTri = d.surfaces.every((s) => tri.has(s));
    out.push({
      category: isTri ? "tri_surface_incoherence" : "kernel_mismatch",
      severity: "error",
      message: `${d.check}: ${d.surfaces[0]} says ${JSON.stringify(d.expected)} but ${d.surfaces[1]} (${d.field}) says ${JSON.stringify(d.actual)}`,
      details: { ...d },
      remediation: `bring ${d.surfaces[1]} in line with ${d.surfaces[0]} (regenerate the stale one), then run \`pmagent oa snapshot\``,
    });
  }
}

/** STATE.json built from another surfaces directory or from surfaces that changed since. */
function driftDiagnostics(ws: OAWorkspace, set: SurfaceSet, kernel: KernelView, state: OAState, out: OADiagnostic[]): void {
  const source = displayPath(ws, ws.surfacesDir);
  if (state.source !== source) {
    out.push({
      category: "config_drift",
      severity: "warn",
      message: `STATE.json was generated from "${state.source}" but oa.surfaces_dir is now "${source}"`,
      details: { state_source: state.source, configured: source },
      remediation: SNAPSHOT,
    });
  }
  for (const s of surfaceList(set)) {
    const recorded = state.surface_status[s.name];
    if (recorded && recorded.sha256 !== s.status.sha256) {
      out.push({
        category: "config_drift",
        severity: "warn",
        message: `${s.status.path} changed since STATE.json was generated (${state.generated_at})`,
        details: { surface: s.name, path: s.status.path, recorded_sha256: recorded.sha256, current_sha256: s.status.sha256 },
        remediation: SNAPSHOT,
      });
    }
  }
  const declared = contextOf(set).context.kernel_mode;
  if (declared !== null && declared !== kernel.mode) {
    out.push({
      category: "config_drift",
      severity: "warn",
      message: `${SURFACES.oa_context.file} says kernel_mode ${declared} but the kernel is ${kernel.mode}`,
      details: { context_kernel_mode: declared, kernel_mode: kernel.mode },
      remediation: "run `pmagent oa generate` or edit context.kernel_mode so the OA context follows the kernel",
    });
  }
}

/** The spec's guard table (branch, phase, reality) and the key-check tri-surface rule, STATE vs kernel. */
function stateMismatches(set: SurfaceSet, state: OAState, out: OADiagnostic[], mismatches: OAMismatch[]): void {
  const b = set.bootstrap.data;
  const s = set.ssot.data;
  const r = set.reality.data;
  const fail = (category: OADiagnostic["category"], m: OAMismatch) => {
    mismatches.push(m);
    out.push({
      category,
      severity: "error",
      message: `${m.check}: ${m.surfaces[0]} says ${JSON.stringify(m.expected)} but ${m.surfaces[1]} says ${JSON.stringify(m.actual)}`,
      details: { ...m },
      remediation: SNAPSHOT,
    });
  };
  const compare = (category: OADiagnostic["category"], check: string, field: string, expected: unknown, actual: unknown, kernelFile: string) => {
    if (expected !== undefined && expected !== null && expected !== actual) fail(category, { check, field, expected, actual, surfaces: [kernelFile, STATE_FILE] });
  };
  if (b) {
    compare("kernel_mismatch", "branch match", "branch", b.branch, state.branch, SURFACES.pm_bootstrap_state.file);
    const bootstrapPhase = b.meta?.current_phase;
    compare("tri_surface_incoherence", "phase metadata", "meta.current_phase", bootstrapPhase === undefined ? undefined : String(bootstrapPhase), state.current_phase, SURFACES.pm_bootstrap_state.file);
  }
  if (r?.branch !== undefined) compare("tri_surface_incoherence", "branch metadata", "branch", r.branch, state.branch, SURFACES.reality_green_summary.file);
  if (s) {
    const phase = s.current_phase ?? s.phases?.current;
    compare("kernel_mismatch", "phase match", "current_phase", phase === undefined ? undefined : String(phase), state.current_phase, SURFACES.ssot_surface.file);
  }
  if (r) {
    compare("kernel_mismatch", "reality match", "reality_green", r.reality_green, state.reality_green, SURFACES.reality_green_summary.file);
    for (const key of KEY_CHECKS) {
      const inState = findCheck(state.checks_summary, key.name)?.passed;
      compare("tri_surface_incoherence", key.name, `checks_summary[${key.name}].passed`, findCheck(r.checks, key.name)?.passed, inState, SURFACES.reality_green_summary.file);
    }
  }
}
