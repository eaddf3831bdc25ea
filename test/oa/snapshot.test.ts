import { describe, expect, it } from "vitest";
import { readdirSync, readFileSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { OASurfaceError, OAStateSchema, writeSnapshot, bootEnvelope, bootExitCode } from "../../src/oa/index.js";
import { makeProject, writeSurface } from "./helpers.js";

const FIXED = () => Date.parse("2026-11-23T02:00:00Z");

describe("oa snapshot", () => {
  it("writes the normalized STATE.json and returns exactly what it wrote", () => {
    const p = makeProject("normal");
    const result = writeSnapshot(p.ws, FIXED);
    expect(result.path).toBe("share/orchestrator_assistant/STATE.json");
    const written = JSON.parse(readFileSync(join(p.root, result.path), "utf8"));
    expect(written).toEqual(result.state);
    expect(OAStateSchema.parse(written)).toEqual(written);
    expect(written).toMatchObject({
      version: 1,
      source: "kernel",
      surfaces_dir: "share",
      generated_at: "2026-11-23T02:00:00.000Z",
      branch: "feat/phase27e-oa-runtime",
      current_phase: "27",
      last_completed_phase: "27",
      reality_green: true,
      kernel_mode: "NORMAL",
      checks_summary: [
        { name: "AGENTS.md Sync", passed: true },
        { name: "DMS Alignment", passed: true },
        { name: "Unit Tests", passed: true },
      ],
      surfaces: { pm_bootstrap_state: "share/PM_BOOTSTRAP_STATE.json", oa_context: "share/oa/CONTEXT.json" },
      oa_context: { active_goal: "OA Runtime Enhancement", constraints: ["no_db_writes", "no_git_push"] },
      // The origin's data model: surface → boolean, the hint counts, the tools and the bridge.
      surface_status: {
        pm_bootstrap_state: true,
        ssot_surface: true,
        reality_green_summary: true,
        handoff_kernel: true,
        oa_context: true,
      },
      dms_hint_summary: { total_hints: 0, flows_with_hints: 0 },
      oa_tools: { version: 1, tools: expect.arrayContaining(["oa.kernel_status", "oa.reality_check", "oa.guard.run"]) },
      reasoning_bridge: {
        version: 1,
        programs: ["SafeOPSDecision", "OPSBlockGenerator", "GuardFailureInterpreter", "PhaseTransitionValidator"],
      },
    });
    expect(written.reasoning_bridge.tools_allowed.SafeOPSDecision).toEqual(["oa.kernel_status", "oa.reality_summary"]);
    expect(written.surface_details.reality_green_summary).toMatchObject({
      status: "ok",
      required: true,
      sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    // Atomic write: no temporary file is left beside it.
    expect(readdirSync(dirname(join(p.root, result.path)))).toEqual(["STATE.json"]);
  });

  it('works with the surfaces at the project root (surfaces_dir ".")', () => {
    const p = makeProject("normal", { surfaces_dir: "." });
    const result = writeSnapshot(p.ws);
    expect(result.path).toBe("orchestrator_assistant/STATE.json");
    expect(result.state.surfaces_dir).toBe(".");
    expect(result.state.surfaces.pm_bootstrap_state).toBe("PM_BOOTSTRAP_STATE.json");
  });

  it("gives an empty context when CONTEXT.json is missing", () => {
    const p = makeProject("normal");
    rmSync(join(p.share, "oa/CONTEXT.json"));
    const { state } = writeSnapshot(p.ws);
    expect(state.oa_context).toEqual({
      active_goal: null,
      kernel_mode: null,
      constraints: [],
      pending_ops_blocks: [],
      session_metadata: {},
    });
    // Absent and optional: not referenced, so not marked false (the origin's guard notes every false one).
    expect(state.surface_status.oa_context).toBeUndefined();
    expect(state.surfaces.oa_context).toBeUndefined();
    expect(state.surface_details.oa_context?.status).toBe("missing");
  });

  it("gives an empty context and records the problem when CONTEXT.json is invalid", () => {
    const p = makeProject("normal");
    writeSurface(p, "oa/CONTEXT.json", "{ nope");
    const { state } = writeSnapshot(p.ws);
    expect(state.oa_context.constraints).toEqual([]);
    expect(state.surface_status.oa_context).toBe(false);
    expect(state.surface_details.oa_context).toMatchObject({
      status: "invalid_json",
      problem: expect.stringMatching(/^not valid JSON/),
    });
  });

  it("counts DMS hints from the reality check that reports them", () => {
    const p = makeProject("normal");
    writeSurface(p, "REALITY_GREEN_SUMMARY.json", {
      reality_green: true,
      checks: [
        { name: "AGENTS.md Sync", passed: true },
        { name: "DMS Alignment", passed: true },
        { name: "DMS Hint Registry", passed: true, details: { total_hints: 4, flows_with_hints: 2 } },
      ],
    });
    expect(writeSnapshot(p.ws).state.dms_hint_summary).toEqual({ total_hints: 4, flows_with_hints: 2 });
  });

  it("records a DEGRADED kernel with its reasons", () => {
    const { state } = writeSnapshot(makeProject("degraded-failing-check").ws);
    expect(state.kernel_mode).toBe("DEGRADED");
    expect(state.checks_summary).toContainEqual({ name: "Unit Tests", passed: false });
    expect(state.mode_reasons).toEqual(['check "Unit Tests" failed: 3 failed, 409 passed']);
  });

  it.each([
    ["blocked-missing-surface", "oa_surface_missing", /share\/REALITY_GREEN_SUMMARY\.json: file not found/],
    ["blocked-invalid-json", "oa_surface_invalid", /share\/SSOT_SURFACE_V17\.json: not valid JSON/],
    [
      "blocked-wrong-types",
      "oa_surface_invalid",
      /share\/PM_BOOTSTRAP_STATE\.json: \$\.branch: Invalid input: expected string, received number\n\s+share\/REALITY_GREEN_SUMMARY\.json: \$\.reality_green: Invalid input: expected boolean, received string/,
    ],
  ] as const)(
    "refuses %s with a message naming the file and the problem, writing nothing",
    (fixture, code, message) => {
      const p = makeProject(fixture);
      let error: unknown;
      try {
        writeSnapshot(p.ws);
      } catch (err) {
        error = err;
      }
      expect(error).toBeInstanceOf(OASurfaceError);
      expect((error as OASurfaceError).code).toBe(code);
      expect((error as Error).message).toMatch(message);
      expect(() => readFileSync(p.ws.statePath)).toThrow(/ENOENT/);
    },
  );
});

describe("boot oa", () => {
  const UUID = "0b6f3a2e-3c1f-4a57-9d1e-5d2f8f0e4b11";

  it("returns the spec's boot envelope for a NORMAL kernel (exit 0)", () => {
    const p = makeProject("normal");
    const envelope = bootEnvelope(p.ws, { clock: FIXED, uuid: () => UUID });
    expect(envelope).toEqual({
      oa_boot_envelope: {
        timestamp: "2026-11-23T02:00:00.000Z",
        kernel: { phase: "27", branch: "feat/phase27e-oa-runtime", mode: "NORMAL" },
        interpretation: {
          allowed_actions: ["feature_work", "ops_blocks", "migrations", "phase_transitions"],
          forbidden_actions: [],
          recommended_commands: ["pmagent oa snapshot", "pmagent oa guard --mode STRICT"],
          reasons: [],
        },
        session_metadata: { session_id: `oa-session-${UUID}`, workspace: p.root },
      },
    });
    expect(bootExitCode(envelope)).toBe(0);
  });

  it("exits 0 for DEGRADED and 3 for BLOCKED, with unknown fields as null", () => {
    const degraded = bootEnvelope(makeProject("degraded-health-mismatch").ws);
    expect(degraded.oa_boot_envelope.kernel.mode).toBe("DEGRADED");
    expect(bootExitCode(degraded)).toBe(0);
    const blocked = bootEnvelope(makeProject("blocked-wrong-types").ws);
    expect(blocked.oa_boot_envelope.kernel).toEqual({ phase: "27", branch: null, mode: "BLOCKED" });
    expect(blocked.oa_boot_envelope.interpretation.allowed_actions).toEqual(["diagnostic"]);
    expect(bootExitCode(blocked)).toBe(3);
  });
});
