import { describe, expect, it } from "vitest";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { computeKernel, interpretation, loadSurfaces, oaWorkspace } from "../../src/oa/index.js";
import { makeProject, writeSurface, type FixtureName } from "./helpers.js";

const MODES: Array<[FixtureName, "NORMAL" | "DEGRADED" | "BLOCKED", RegExp | null]> = [
  ["normal", "NORMAL", null],
  ["degraded-reality-red", "DEGRADED", /REALITY_GREEN_SUMMARY\.json: reality_green is false/],
  ["degraded-failing-check", "DEGRADED", /check "Unit Tests" failed: 3 failed, 409 passed/],
  [
    "degraded-health-mismatch",
    "DEGRADED",
    /DMS Alignment disagrees: REALITY_GREEN_SUMMARY\.json says true, PM_BOOTSTRAP_STATE\.json health\.dms_alignment_ok says false/,
  ],
  [
    "degraded-legacy-dms",
    "DEGRADED",
    /DMS Alignment disagrees: REALITY_GREEN_SUMMARY\.json says true, PM_BOOTSTRAP_STATE\.json meta\.dms_share_alignment says "BROKEN"/,
  ],
  // Copies the origin's guard does not compare: NORMAL, said as hints.
  ["hint-branch-mismatch", "NORMAL", null],
  ["hint-phase-mismatch", "NORMAL", null],
  ["blocked-missing-surface", "BLOCKED", /required surface share\/REALITY_GREEN_SUMMARY\.json: file not found/],
  ["blocked-invalid-json", "BLOCKED", /required surface share\/SSOT_SURFACE_V17\.json: not valid JSON/],
  ["blocked-wrong-types", "BLOCKED", /share\/PM_BOOTSTRAP_STATE\.json: \$\.branch: .*expected string/],
];

describe("kernel surfaces and mode", () => {
  it.each(MODES)("%s is %s", (fixture, mode, reason) => {
    const p = makeProject(fixture);
    const kernel = computeKernel(loadSurfaces(p.ws));
    expect(kernel.mode).toBe(mode);
    if (reason === null) expect(kernel.reasons).toEqual([]);
    else expect(kernel.reasons.join("\n")).toMatch(reason);
  });

  it("keeps unknown fields of every surface instead of refusing them", () => {
    const set = loadSurfaces(makeProject("normal").ws);
    expect(set.bootstrap.data).toMatchObject({ roles: ["PM", "OA"], meta: { generated_by: "pm.bootstrap" } });
    expect(set.ssot.data).toMatchObject({
      version: 17,
      references: ["docs/SSOT/PHASE27_B_OA_RUNTIME.md", "docs/SSOT/PHASE27_D_DSPY_REASONING_OUTLINE.md"],
    });
    expect(set.reality.data?.checks[2]).toMatchObject({ details: { duration_s: 31 } });
    expect(set.handoff.data).toMatchObject({ handoff_to: "PM" });
    expect(set.context.data?.context.session_metadata).toEqual({ owner: "orchestrator" });
  });

  it("reads the phase from phases.current when current_phase is absent, and numbers as strings", () => {
    const p = makeProject("normal");
    writeSurface(p, "SSOT_SURFACE_V17.json", { phases: { current: 27 }, last_completed_phase: 26 });
    const kernel = computeKernel(loadSurfaces(p.ws));
    expect(kernel.phase).toBe("27");
    expect(kernel.last_completed_phase).toBe("26");
  });

  it("names the missing phase field when neither current_phase nor phases.current is given", () => {
    const p = makeProject("normal");
    writeSurface(p, "SSOT_SURFACE_V17.json", { last_completed_phase: "26" });
    const set = loadSurfaces(p.ws);
    expect(set.ssot.status).toMatchObject({
      status: "invalid",
      problem: "$.current_phase: expected current_phase (or phases.current)",
    });
  });

  it("degrades (not blocks) when the bootstrap's health contradicts the reality summary", () => {
    const p = makeProject("normal");
    writeSurface(p, "PM_BOOTSTRAP_STATE.json", {
      branch: "feat/phase27e-oa-runtime",
      meta: { current_phase: "27" },
      health: { reality_green: true, agents_sync_ok: false, dms_alignment_ok: true },
    });
    const kernel = computeKernel(loadSurfaces(p.ws));
    expect(kernel.mode).toBe("DEGRADED");
    expect(kernel.reasons).toEqual([
      "AGENTS.md Sync disagrees: REALITY_GREEN_SUMMARY.json says true, PM_BOOTSTRAP_STATE.json health.agents_sync_ok says false",
    ]);
  });

  it("treats a missing CONTEXT.json and a missing HANDOFF_KERNEL.json as optional", () => {
    const p = makeProject("normal");
    rmSync(join(p.share, "oa/CONTEXT.json"));
    rmSync(join(p.share, "HANDOFF_KERNEL.json"));
    const set = loadSurfaces(p.ws);
    expect(set.context.status.status).toBe("missing");
    expect(set.handoff.status.status).toBe("missing");
    expect(computeKernel(set).mode).toBe("NORMAL");
  });

  it("reads surfaces from a configured directory", () => {
    const p = makeProject("degraded-reality-red", { surfaces_dir: "kernel/surfaces" });
    expect(computeKernel(loadSurfaces(p.ws)).mode).toBe("DEGRADED");
  });

  it("refuses a surfaces directory outside the project root", () => {
    const p = makeProject("normal");
    expect(() => oaWorkspace(p.root, { ...p.config.oa, surfaces_dir: "../elsewhere" })).toThrow(
      /oa\.surfaces_dir "\.\.\/elsewhere" is outside/,
    );
  });

  it("interprets each mode with the table of DESIGN.md", () => {
    const normal = interpretation(computeKernel(loadSurfaces(makeProject("normal").ws)));
    expect(normal.allowed_actions).toEqual(["feature_work", "ops_blocks", "migrations", "phase_transitions"]);
    expect(normal.forbidden_actions).toEqual([]);
    const degraded = interpretation(computeKernel(loadSurfaces(makeProject("degraded-reality-red").ws)));
    expect(degraded.allowed_actions).toEqual(["remediation", "diagnostic"]);
    expect(degraded.forbidden_actions).toEqual(["feature_work", "migrations", "phase_transitions"]);
    const blocked = interpretation(computeKernel(loadSurfaces(makeProject("blocked-invalid-json").ws)));
    expect(blocked.allowed_actions).toEqual(["diagnostic"]);
    expect(blocked.forbidden_actions).toContain("feature_work");
  });
});
