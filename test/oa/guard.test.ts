import { describe, expect, it } from "vitest";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { runOaGuard, writeSnapshot, OAGuardOutputSchema, type OADiagnostic } from "../../src/oa/index.js";
import { makeProject, writeSurface } from "./helpers.js";

const errors = (ds: OADiagnostic[]) => ds.filter((d) => d.severity === "error");

describe("oa guard", () => {
  it("passes on a fresh snapshot of a NORMAL kernel", () => {
    const p = makeProject("normal");
    writeSnapshot(p.ws);
    const out = runOaGuard(p.ws, "STRICT");
    expect(OAGuardOutputSchema.parse(out)).toEqual(out);
    expect(out).toMatchObject({
      ok: true,
      mode: "STRICT",
      kernel_mode: "NORMAL",
      mismatches: [],
      missing_surfaces: [],
      diagnostics: [],
    });
  });

  it("passes on a coherent DEGRADED kernel: red reality is not incoherence", () => {
    const p = makeProject("degraded-reality-red");
    writeSnapshot(p.ws);
    const out = runOaGuard(p.ws, "HINT");
    expect(out).toMatchObject({ ok: true, mode: "HINT", kernel_mode: "DEGRADED", diagnostics: [] });
  });

  it("missing_surface: STATE.json never generated (FAIL)", () => {
    const p = makeProject("normal");
    const out = runOaGuard(p.ws, "STRICT");
    expect(out.ok).toBe(false);
    expect(out.missing_surfaces).toEqual(["share/orchestrator_assistant/STATE.json"]);
    expect(out.diagnostics).toEqual([
      expect.objectContaining({
        category: "missing_surface",
        severity: "error",
        remediation: expect.stringMatching(/pmagent oa snapshot/),
      }),
    ]);
  });

  it("missing_surface: a required kernel surface (FAIL) and a referenced optional one (WARN)", () => {
    const p = makeProject("normal");
    writeSnapshot(p.ws);
    rmSync(join(p.share, "HANDOFF_KERNEL.json"));
    rmSync(join(p.share, "REALITY_GREEN_SUMMARY.json"));
    const out = runOaGuard(p.ws, "STRICT");
    expect(out.ok).toBe(false);
    expect(out.kernel_mode).toBe("BLOCKED");
    expect(out.missing_surfaces).toEqual(["share/REALITY_GREEN_SUMMARY.json", "share/HANDOFF_KERNEL.json"]);
    const missing = out.diagnostics.filter((d) => d.category === "missing_surface");
    expect(missing.map((d) => [d.severity, d.message])).toEqual([
      ["error", "required surface share/REALITY_GREEN_SUMMARY.json does not exist"],
      ["warn", "referenced surface share/HANDOFF_KERNEL.json does not exist"],
    ]);
  });

  it("schema_violation: invalid JSON and wrong types in kernel surfaces (FAIL)", () => {
    const p = makeProject("blocked-wrong-types");
    const out = runOaGuard(p.ws, "STRICT");
    const violations = out.diagnostics.filter((d) => d.category === "schema_violation");
    expect(violations.map((d) => d.message)).toEqual([
      "share/PM_BOOTSTRAP_STATE.json is invalid: $.branch: Invalid input: expected string, received number",
      "share/REALITY_GREEN_SUMMARY.json is invalid: $.reality_green: Invalid input: expected boolean, received string",
    ]);
    expect(violations.every((d) => d.severity === "error")).toBe(true);
  });

  it("schema_violation: an invalid CONTEXT.json is a warning only (context validity)", () => {
    const p = makeProject("normal");
    writeSnapshot(p.ws);
    writeSurface(p, "oa/CONTEXT.json", { version: 1, context: { constraints: "no_git_push" } });
    const out = runOaGuard(p.ws, "STRICT");
    expect(out.ok).toBe(true);
    expect(out.diagnostics).toContainEqual(
      expect.objectContaining({
        category: "schema_violation",
        severity: "warn",
        message:
          "share/oa/CONTEXT.json is invalid: $.context.constraints: Invalid input: expected array, received string",
      }),
    );
  });

  it("schema_violation: a corrupt STATE.json (FAIL)", () => {
    const p = makeProject("normal");
    writeSnapshot(p.ws);
    writeSurface(p, "orchestrator_assistant/STATE.json", '{"version": 1');
    const out = runOaGuard(p.ws, "STRICT");
    expect(errors(out.diagnostics)).toEqual([
      expect.objectContaining({
        category: "schema_violation",
        message: expect.stringMatching(
          /^OA state share\/orchestrator_assistant\/STATE\.json is invalid: not valid JSON/,
        ),
      }),
    ]);
  });

  it("kernel_mismatch: STATE.json disagrees with the kernel on branch, phase and reality (FAIL)", () => {
    const p = makeProject("normal");
    writeSnapshot(p.ws);
    writeSurface(p, "PM_BOOTSTRAP_STATE.json", {
      branch: "feat/phase28",
      meta: { current_phase: "28" },
      health: { reality_green: false, agents_sync_ok: true, dms_alignment_ok: true },
    });
    writeSurface(p, "SSOT_SURFACE_V17.json", { current_phase: "28", last_completed_phase: "27" });
    writeSurface(p, "HANDOFF_KERNEL.json", { branch: "feat/phase28", current_phase: "28" });
    writeSurface(p, "REALITY_GREEN_SUMMARY.json", {
      reality_green: false,
      checks: [
        { name: "AGENTS.md Sync", passed: true },
        { name: "DMS Alignment", passed: true },
      ],
    });
    const out = runOaGuard(p.ws, "STRICT");
    expect(out.ok).toBe(false);
    expect(out.mismatches).toEqual([
      'branch match mismatch: PM_BOOTSTRAP_STATE.json="feat/phase28" vs orchestrator_assistant/STATE.json branch="feat/phase27e-oa-runtime"',
      'phase match mismatch: SSOT_SURFACE_V17.json="28" vs orchestrator_assistant/STATE.json current_phase="27"',
      "reality match mismatch: REALITY_GREEN_SUMMARY.json=false vs orchestrator_assistant/STATE.json reality_green=true",
    ]);
    // The bootstrap's meta.current_phase is not the origin's phase check: a note, not a failure.
    expect(out.diagnostics).toContainEqual(
      expect.objectContaining({
        severity: "warn",
        message:
          'phase metadata: PM_BOOTSTRAP_STATE.json says "28" but orchestrator_assistant/STATE.json says "27" (a note: the origin\'s guard does not compare these)',
      }),
    );
    expect(errors(out.diagnostics)[0]).toMatchObject({
      type: "issue",
      details: {
        check: "branch match",
        field: "branch",
        expected: "feat/phase28",
        actual: "feat/phase27e-oa-runtime",
        surfaces: ["PM_BOOTSTRAP_STATE.json", "orchestrator_assistant/STATE.json"],
      },
    });
    expect(errors(out.diagnostics).map((d) => d.category)).toEqual([
      "kernel_mismatch",
      "kernel_mismatch",
      "kernel_mismatch",
    ]);
  });

  it("kernel_mismatch notes: kernel surfaces disagree on branch (HANDOFF_KERNEL) and phase (bootstrap meta), which the origin does not check (PASS)", () => {
    const branch = makeProject("hint-branch-mismatch");
    writeSnapshot(branch.ws);
    const b = runOaGuard(branch.ws, "STRICT");
    expect(b).toMatchObject({ ok: true, kernel_mode: "NORMAL", mismatches: [] });
    expect(b.diagnostics).toEqual([
      expect.objectContaining({
        type: "warn",
        severity: "warn",
        category: "kernel_mismatch",
        message:
          'branch: PM_BOOTSTRAP_STATE.json says "feat/phase27e-oa-runtime" but HANDOFF_KERNEL.json (branch) says "main" (a note: the origin\'s guard does not compare these)',
      }),
    ]);
    const phase = makeProject("hint-phase-mismatch");
    writeSnapshot(phase.ws);
    const ph = runOaGuard(phase.ws, "STRICT");
    expect(ph.ok).toBe(true);
    expect(ph.diagnostics.map((d) => [d.severity, d.message])).toEqual([
      [
        "warn",
        'phase: SSOT_SURFACE_V17.json says "27" but PM_BOOTSTRAP_STATE.json (meta.current_phase) says "26" (a note: the origin\'s guard does not compare these)',
      ],
      [
        "warn",
        'phase metadata: PM_BOOTSTRAP_STATE.json says "26" but orchestrator_assistant/STATE.json says "27" (a note: the origin\'s guard does not compare these)',
      ],
    ]);
  });

  it("tri_surface_incoherence: reality_green and key checks disagree between the three surfaces (FAIL)", () => {
    const p = makeProject("normal");
    writeSnapshot(p.ws);
    writeSurface(p, "PM_BOOTSTRAP_STATE.json", {
      branch: "feat/phase27e-oa-runtime",
      meta: { current_phase: "27" },
      health: { reality_green: false, agents_sync_ok: true, dms_alignment_ok: true },
    });
    writeSurface(p, "REALITY_GREEN_SUMMARY.json", {
      reality_green: true,
      branch: "main",
      checks: [
        { name: "AGENTS.md Sync", passed: true },
        { name: "DMS Alignment", passed: false, message: "DMS lags the SSOT" },
      ],
    });
    const out = runOaGuard(p.ws, "STRICT");
    const tri = out.diagnostics.filter((d) => d.category === "tri_surface_incoherence");
    expect(tri.map((d) => [d.severity, d.message])).toEqual([
      [
        "error",
        "DMS Alignment: REALITY_GREEN_SUMMARY.json says false but PM_BOOTSTRAP_STATE.json (health.dms_alignment_ok) says true",
      ],
      [
        "info",
        "PM_BOOTSTRAP_STATE.json health.reality_green says false but REALITY_GREEN_SUMMARY.json says true: the bootstrap's health is regenerated from the summary, so it is stale until the next run (not a failure; the summary is what counts)",
      ],
      [
        "warn",
        'branch: PM_BOOTSTRAP_STATE.json says "feat/phase27e-oa-runtime" but REALITY_GREEN_SUMMARY.json (branch) says "main" (a note: the origin\'s guard does not compare these)',
      ],
      [
        "warn",
        'branch metadata: REALITY_GREEN_SUMMARY.json says "main" but orchestrator_assistant/STATE.json says "feat/phase27e-oa-runtime" (a note: the origin\'s guard does not compare these)',
      ],
      ["error", "DMS Alignment: REALITY_GREEN_SUMMARY.json says false but orchestrator_assistant/STATE.json says true"],
    ]);
    expect(tri[0]!.details).toMatchObject({ check: "dms_alignment_conflict", field_check: "DMS Alignment" });
    expect(tri[1]!.details).toMatchObject({ check: "health_coherence", field_check: "reality_green" });
    expect(out.ok).toBe(false);
    expect(out.kernel_mode).toBe("DEGRADED");
  });

  it("config_drift: surfaces changed since the snapshot, another source directory, a stale context mode (WARN)", () => {
    const p = makeProject("normal");
    writeSnapshot(p.ws);
    writeSurface(p, "HANDOFF_KERNEL.json", {
      branch: "feat/phase27e-oa-runtime",
      current_phase: "27",
      notes: "updated",
    });
    writeSurface(p, "oa/CONTEXT.json", { version: 1, context: { kernel_mode: "DEGRADED" } });
    const out = runOaGuard(p.ws, "STRICT");
    expect(out.ok).toBe(true);
    const drift = out.diagnostics.filter((d) => d.category === "config_drift");
    expect(drift.map((d) => d.message)).toEqual([
      expect.stringMatching(/^share\/HANDOFF_KERNEL\.json changed since STATE\.json was generated/),
      expect.stringMatching(/^share\/oa\/CONTEXT\.json changed since STATE\.json was generated/),
      "oa/CONTEXT.json says kernel_mode DEGRADED but the kernel is NORMAL",
    ]);
    expect(drift.every((d) => d.severity === "warn")).toBe(true);
  });

  it("config_drift: STATE.json generated from another surfaces directory", () => {
    const p = makeProject("normal");
    writeSurface(p, "orchestrator_assistant/STATE.json", { ...writeSnapshot(p.ws).state, surfaces_dir: "old-share" });
    const out = runOaGuard(p.ws, "HINT");
    expect(out.diagnostics).toContainEqual(
      expect.objectContaining({
        category: "config_drift",
        message: 'STATE.json was generated from "old-share" but oa.surfaces_dir is now "share"',
      }),
    );
  });
});

describe("oa guard on the origin's files", () => {
  it("a stale bootstrap health.reality_green (false, the summary true): NORMAL, the guard passes with a hint", () => {
    const p = makeProject("origin-reality-conflict");
    const out = runOaGuard(p.ws, "STRICT");
    expect(OAGuardOutputSchema.parse(out)).toEqual(out);
    expect(out).toMatchObject({ ok: true, kernel_mode: "NORMAL", mismatches: [], missing_surfaces: [] });
    expect(out.diagnostics).toEqual([
      {
        type: "warn",
        category: "tri_surface_incoherence",
        severity: "info",
        message:
          "PM_BOOTSTRAP_STATE.json health.reality_green says false but REALITY_GREEN_SUMMARY.json says true: the bootstrap's health is regenerated from the summary, so it is stale until the next run (not a failure; the summary is what counts)",
        details: expect.objectContaining({
          check: "health_coherence",
          field_check: "reality_green",
          expected: true,
          actual: false,
        }),
        remediation: "regenerate PM_BOOTSTRAP_STATE.json from the summary (the catalog's `make reality.green`)",
      },
    ]);
  });

  it("accepts a STATE.json written by the origin's data model (boolean surface_status, no pmagent fields)", () => {
    const p = makeProject("origin-reality-conflict");
    const bootstrap = JSON.parse(readFileSync(join(p.share, "PM_BOOTSTRAP_STATE.json"), "utf8")) as {
      health: Record<string, boolean>;
    };
    writeSurface(p, "PM_BOOTSTRAP_STATE.json", { ...bootstrap, health: { ...bootstrap.health, reality_green: true } });
    const out = runOaGuard(p.ws, "STRICT");
    expect(out).toMatchObject({ ok: true, kernel_mode: "NORMAL", mismatches: [], missing_surfaces: [] });
    expect(out.diagnostics).toEqual([]);
  });

  it("an origin STATE.json that disagrees with the kernel is compared by value", () => {
    const p = makeProject("origin-reality-conflict");
    const state = JSON.parse(readFileSync(p.ws.statePath, "utf8")) as Record<string, unknown>;
    writeSurface(p, "orchestrator_assistant/STATE.json", { ...state, current_phase: 26 });
    const out = runOaGuard(p.ws, "HINT");
    expect(out.mismatches).toContain(
      'phase match mismatch: SSOT_SURFACE_V17.json="27" vs orchestrator_assistant/STATE.json current_phase="26"',
    );
  });

  it("every diagnostic carries the catalog's type, severity and a remediation", () => {
    const p = makeProject("blocked-missing-surface");
    const out = runOaGuard(p.ws, "STRICT");
    expect(out.kernel_mode).toBe("BLOCKED");
    for (const d of out.diagnostics) expect(["issue", "warn", "blocker"]).toContain(d.type);
    expect(
      out.diagnostics.find((d) => d.category === "missing_surface" && d.details.surface === "reality_green_summary"),
    ).toMatchObject({ type: "blocker", severity: "error" });
  });
});
