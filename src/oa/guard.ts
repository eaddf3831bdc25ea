/**
 * The OA state guard (the spec's guard_oa_state.py): compares STATE.json with the kernel surfaces
 * and the kernel surfaces with each other, and reports every problem as a catalog diagnostic and,
 * for mismatches, one line in `mismatches` as the origin's guard prints them.
 *
 * Its verdict is the origin's, check for check. It fails on: STATE.json or a required surface
 * missing (or unreadable); branch (STATE vs bootstrap); phase (STATE vs SSOT); reality_green (STATE
 * vs summary); the key checks (STATE's checks_summary vs the summary's checks, where both have
 * them); the bootstrap's agents_sync_ok / dms_alignment_ok vs the summary's checks; a legacy
 * `meta.dms_share_alignment: "BROKEN"` while DMS Alignment passes. Everything else it finds is a
 * note (warn) or a hint (info) and never fails it: the bootstrap's health.reality_green above all,
 * which the origin regenerates from the summary and so is stale after any failure.
 */
import { nowIso } from "../core/index.js";
import { STATE_KEY_CHECKS, computeKernel, findCheck, type KernelView } from "./kernel.js";
import type { OADiagnostic, OAGuardMode, OAGuardOutput, OAMismatch, OAStateRead, SurfaceStatus } from "./schemas.js";
import {
  OA_INIT_COMMAND,
  REQUIRED_SURFACES,
  SURFACES,
  contextOf,
  loadSurfaces,
  noKernelSurfaces,
  surfaceList,
  type SurfaceSet,
} from "./surfaces.js";
import { readState } from "./snapshot.js";
import { displayPath, type OAWorkspace } from "./workspace.js";

const SNAPSHOT = "pmagent oa snapshot";
const INIT = OA_INIT_COMMAND;
const STATE_FILE = "orchestrator_assistant/STATE.json";
const TRI = new Set<string>([SURFACES.reality_green_summary.file, SURFACES.pm_bootstrap_state.file, STATE_FILE]);

/** Severities that fail the guard in STRICT mode. */
const FAILING = new Set<OADiagnostic["severity"]>(["error", "block"]);

interface Collector {
  diagnostics: OADiagnostic[];
  mismatches: string[];
  missing: string[];
}

export function runOaGuard(ws: OAWorkspace, mode: OAGuardMode, clock: () => number = Date.now): OAGuardOutput {
  const set = loadSurfaces(ws);
  const kernel = computeKernel(set);
  const { status: stateStatus, state } = readState(ws);
  const out: Collector = { diagnostics: [], mismatches: [], missing: [] };
  const kernelReadable = REQUIRED_SURFACES.every(
    (n) => surfaceList(set).find((s) => s.name === n)?.status.status === "ok",
  );

  surfaceDiagnostics(set, new Set(Object.keys(state?.surfaces ?? {})), out);
  contextNotes(set, out);
  stateStatusDiagnostics(stateStatus, kernelReadable, out);
  kernelDisagreements(kernel, out);
  kernelHints(kernel, out);
  if (state) {
    surfaceStatusNotes(state, out);
    driftDiagnostics(ws, set, kernel, state, out);
    stateMismatches(set, state, out);
  }
  return {
    ok: !out.diagnostics.some((d) => FAILING.has(d.severity)),
    mode,
    kernel_mode: kernel.mode,
    mismatches: out.mismatches,
    missing_surfaces: out.missing,
    diagnostics: out.diagnostics,
    timestamp: nowIso(clock),
  };
}

/**
 * Surface existence (a blocker for required surfaces; WARN for an optional one STATE.json
 * references) and context validity.
 */
function surfaceDiagnostics(set: SurfaceSet, referenced: ReadonlySet<string>, out: Collector): void {
  const allRequiredMissing = noKernelSurfaces(set);
  for (const s of surfaceList(set)) {
    const st = s.status;
    if (st.status === "ok") continue;
    // CONTEXT.json is optional with an empty fallback, and an optional surface nothing refers to
    // (the origin's STATE.json lists only the three required ones) is not missing.
    if (st.status === "missing" && (s.name === "oa_context" || (!st.required && !referenced.has(s.name)))) continue;
    const type = st.required ? "blocker" : "warn";
    const severity = st.required ? "error" : "warn";
    if (st.status === "missing") {
      out.missing.push(st.path);
      out.diagnostics.push({
        type,
        category: "missing_surface",
        severity,
        message: `${st.required ? "required" : "referenced"} surface ${st.path} does not exist`,
        details: { surface: s.name, path: st.path, required: st.required },
        // With no kernel surfaces at all, init writes a starting set; one missing file is restored.
        remediation:
          allRequiredMissing && st.required
            ? INIT
            : `restore ${st.path} (the kernel writes it), or set oa.surfaces_dir in pmagent.config.json to the directory that holds ${SURFACES[s.name].file}`,
      });
    } else {
      out.diagnostics.push({
        type,
        category: "schema_violation",
        severity,
        message: `${st.path} is ${st.status === "invalid_json" ? "not valid JSON" : "invalid"}: ${st.problem}`,
        details: {
          surface: s.name,
          path: st.path,
          problem: st.problem,
          subcategory: st.status === "invalid_json" ? "invalid_json" : "missing_required",
        },
        remediation:
          s.name === "oa_context"
            ? `fix or delete ${st.path} (a missing context is treated as empty)`
            : `fix ${st.path} so that it matches the surface's fields, or regenerate it`,
      });
    }
  }
}

function stateStatusDiagnostics(st: SurfaceStatus, kernelReadable: boolean, out: Collector): void {
  // A snapshot needs readable kernel surfaces: until then the surface diagnostics say what to do.
  const remediation = kernelReadable
    ? SNAPSHOT
    : `fix the kernel surfaces first (see the diagnostics above), then ${SNAPSHOT}`;
  if (st.status === "missing") {
    out.missing.push(st.path);
    out.diagnostics.push({
      type: "issue",
      category: "missing_surface",
      severity: "error",
      message: `OA state ${st.path} does not exist`,
      details: { path: st.path },
      remediation,
    });
  } else if (st.status !== "ok") {
    out.diagnostics.push({
      type: "issue",
      category: "schema_violation",
      severity: "error",
      message: `OA state ${st.path} is invalid: ${st.problem}`,
      details: { path: st.path, problem: st.problem },
      remediation,
    });
  }
}

function mismatchLine(m: OAMismatch): string {
  return `${m.check} mismatch: ${m.surfaces[0]}=${JSON.stringify(m.expected)} vs ${m.surfaces[1]} ${m.field}=${JSON.stringify(m.actual)}`;
}

/** The catalog's subcategory of a tri-surface conflict. */
function triCheck(check: string): string {
  if (check === "reality_green" || check === "reality match") return "reality_green_conflict";
  if (/agents/i.test(check)) return "agents_sync_conflict";
  if (/dms/i.test(check)) return "dms_alignment_conflict";
  return "health_coherence";
}

/** The bootstrap's health flags (or legacy DMS field) disagreeing with the summary's checks: DEGRADED, and a failure of the guard. */
function kernelDisagreements(kernel: KernelView, out: Collector): void {
  for (const d of kernel.disagreements) {
    out.mismatches.push(mismatchLine(d));
    out.diagnostics.push({
      type: "issue",
      category: "tri_surface_incoherence",
      severity: "error",
      message: `${d.check}: ${d.surfaces[0]} says ${JSON.stringify(d.expected)} but ${d.surfaces[1]} (${d.field}) says ${JSON.stringify(d.actual)}`,
      details: { ...d, check: triCheck(d.check), field_check: d.check },
      remediation: `regenerate the stale surface (the catalog's \`make reality.green\`), then ${SNAPSHOT}`,
    });
  }
}

/**
 * Kernel surfaces that disagree where the origin's guard does not look: said, never failing. The
 * bootstrap's health.reality_green is a hint (info): the origin regenerates it from the summary.
 */
function kernelHints(kernel: KernelView, out: Collector): void {
  for (const d of kernel.hints) {
    const stale = d.check === "reality_green";
    out.diagnostics.push({
      type: "warn",
      category: stale || d.surfaces.every((s) => TRI.has(s)) ? "tri_surface_incoherence" : "kernel_mismatch",
      severity: stale ? "info" : "warn",
      message: stale
        ? `${d.surfaces[1]} ${d.field} says ${JSON.stringify(d.actual)} but ${d.surfaces[0]} says ${JSON.stringify(d.expected)}: the bootstrap's health is regenerated from the summary, so it is stale until the next run (not a failure; the summary is what counts)`
        : `${d.check}: ${d.surfaces[0]} says ${JSON.stringify(d.expected)} but ${d.surfaces[1]} (${d.field}) says ${JSON.stringify(d.actual)} (a note: the origin's guard does not compare these)`,
      details: { ...d, ...(stale ? { check: "health_coherence", field_check: d.check } : {}) },
      remediation: stale
        ? `regenerate ${d.surfaces[1]} from the summary (the catalog's \`make reality.green\`)`
        : `bring ${d.surfaces[1]} in line with ${d.surfaces[0]} (regenerate the stale one)`,
    });
  }
}

/** The origin's context validity note: CONTEXT.json must carry `version` and `context` (an invalid one is noted by surfaceDiagnostics). */
function contextNotes(set: SurfaceSet, out: Collector): void {
  const ctx = set.context;
  if (ctx.status.status !== "ok" || ctx.raw === null || typeof ctx.raw !== "object" || Array.isArray(ctx.raw)) return;
  const absent = ["version", "context"].filter((k) => !(k in (ctx.raw as Record<string, unknown>)));
  if (absent.length === 0) return;
  out.diagnostics.push({
    type: "warn",
    category: "schema_violation",
    severity: "warn",
    message: `${ctx.status.path} lacks ${absent.map((k) => `"${k}"`).join(" and ")}`,
    details: {
      surface: "oa_context",
      path: ctx.status.path,
      subcategory: absent.includes("version") ? "missing_version" : "missing_required",
      fields: absent,
    },
    remediation: `add ${absent.join(" and ")} to ${ctx.status.path} (the data model: {"version": 1, "context": {…}})`,
  });
}

/** STATE.json's own surface_status: a surface it marks false is noted, not failed (the origin's guard). */
function surfaceStatusNotes(state: OAStateRead, out: Collector): void {
  for (const [name, ok] of Object.entries(state.surface_status ?? {})) {
    if (ok !== false) continue;
    out.diagnostics.push({
      type: "warn",
      category: "missing_surface",
      severity: "warn",
      message: `${STATE_FILE} marks surface ${name} as unavailable (surface_status false)`,
      details: { surface: name, subcategory: "surface_status" },
      remediation: `restore the surface, then ${SNAPSHOT}`,
    });
  }
}

/** STATE.json built from another surfaces directory or from surfaces that changed since. */
function driftDiagnostics(
  ws: OAWorkspace,
  set: SurfaceSet,
  kernel: KernelView,
  state: OAStateRead,
  out: Collector,
): void {
  const warn = (message: string, details: Record<string, unknown>, remediation: string) =>
    out.diagnostics.push({ type: "warn", category: "config_drift", severity: "warn", message, details, remediation });
  const dir = displayPath(ws, ws.surfacesDir);
  if (state.surfaces_dir !== undefined && state.surfaces_dir !== dir) {
    warn(
      `STATE.json was generated from "${state.surfaces_dir}" but oa.surfaces_dir is now "${dir}"`,
      { subcategory: "stale_oa_state", state_surfaces_dir: state.surfaces_dir, configured: dir },
      SNAPSHOT,
    );
  }
  // Content hashes are pmagent's; a STATE.json from the origin has none and is compared by value only.
  for (const s of surfaceList(set)) {
    const recorded = state.surface_details?.[s.name];
    if (recorded && recorded.sha256 !== s.status.sha256) {
      warn(
        `${s.status.path} changed since STATE.json was generated (${state.generated_at ?? "unknown time"})`,
        {
          subcategory: "stale_oa_state",
          surface: s.name,
          path: s.status.path,
          recorded_sha256: recorded.sha256,
          current_sha256: s.status.sha256,
        },
        SNAPSHOT,
      );
    }
  }
  const declared = contextOf(set).context.kernel_mode;
  if (declared !== null && declared !== kernel.mode) {
    warn(
      `${SURFACES.oa_context.file} says kernel_mode ${declared} but the kernel is ${kernel.mode}`,
      { subcategory: "stale_context", context_kernel_mode: declared, kernel_mode: kernel.mode },
      "edit context.kernel_mode in share/oa/CONTEXT.json (or run `pmagent oa generate`, which records the current mode)",
    );
  }
}

/**
 * The origin's guard table, STATE vs kernel: branch (bootstrap), phase (SSOT), reality_green
 * (summary) and the key checks where both sides have them fail; the branch and phase copies in the
 * bootstrap's meta and the summary are compared as notes only.
 */
function stateMismatches(set: SurfaceSet, state: OAStateRead, out: Collector): void {
  const b = set.bootstrap.data;
  const s = set.ssot.data;
  const r = set.reality.data;
  const compare = (c: {
    failing: boolean;
    category: OADiagnostic["category"];
    check: string;
    field: string;
    expected: unknown;
    actual: unknown;
    kernelFile: string;
  }) => {
    const { failing, category, check, field, expected, actual, kernelFile } = c;
    if (expected === undefined || expected === null || expected === actual) return;
    const m: OAMismatch = { check, field, expected, actual, surfaces: [kernelFile, STATE_FILE] };
    if (failing) out.mismatches.push(mismatchLine(m));
    out.diagnostics.push({
      type: failing ? "issue" : "warn",
      category,
      severity: failing ? "error" : "warn",
      message: `${check}: ${kernelFile} says ${JSON.stringify(expected)} but ${STATE_FILE} says ${JSON.stringify(actual)}${failing ? "" : " (a note: the origin's guard does not compare these)"}`,
      details: { ...m },
      remediation: SNAPSHOT,
    });
  };
  if (b) {
    compare({
      failing: true,
      category: "kernel_mismatch",
      check: "branch match",
      field: "branch",
      expected: b.branch,
      actual: state.branch,
      kernelFile: SURFACES.pm_bootstrap_state.file,
    });
    const bootstrapPhase = b.meta?.current_phase;
    compare({
      failing: false,
      category: "tri_surface_incoherence",
      check: "phase metadata",
      field: "meta.current_phase",
      expected: bootstrapPhase === undefined ? undefined : String(bootstrapPhase),
      actual: state.current_phase,
      kernelFile: SURFACES.pm_bootstrap_state.file,
    });
  }
  if (r?.branch !== undefined)
    compare({
      failing: false,
      category: "tri_surface_incoherence",
      check: "branch metadata",
      field: "branch",
      expected: r.branch,
      actual: state.branch,
      kernelFile: SURFACES.reality_green_summary.file,
    });
  if (s) {
    const phase = s.current_phase ?? s.phases?.current;
    compare({
      failing: true,
      category: "kernel_mismatch",
      check: "phase match",
      field: "current_phase",
      expected: phase === undefined ? undefined : String(phase),
      actual: state.current_phase,
      kernelFile: SURFACES.ssot_surface.file,
    });
  }
  if (r) {
    compare({
      failing: true,
      category: "kernel_mismatch",
      check: "reality match",
      field: "reality_green",
      expected: r.reality_green,
      actual: state.reality_green,
      kernelFile: SURFACES.reality_green_summary.file,
    });
    for (const name of STATE_KEY_CHECKS) {
      const inState = findCheck(state.checks_summary, name)?.passed;
      if (inState === undefined) continue;
      compare({
        failing: true,
        category: "tri_surface_incoherence",
        check: name,
        field: `checks_summary[${name}].passed`,
        expected: findCheck(r.checks, name)?.passed,
        actual: inState,
        kernelFile: SURFACES.reality_green_summary.file,
      });
    }
  }
}
