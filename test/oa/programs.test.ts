import { describe, expect, it } from "vitest";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  checkConstraints,
  classifyAction,
  comparePhases,
  decideSafeOps,
  generateOpsBlock,
  interpretGuardFailure,
  validatePhaseTransition,
  type KernelState,
} from "../../src/oa/index.js";

const NORMAL: KernelState = {
  mode: "NORMAL",
  phase: "27",
  branch: "feat/phase27e-oa-runtime",
  reality_green: true,
  reasons: [],
};
const DEGRADED: KernelState = {
  mode: "DEGRADED",
  phase: "27",
  branch: "main",
  reality_green: false,
  reasons: ["REALITY_GREEN_SUMMARY.json: reality_green is false"],
};
const BLOCKED: KernelState = {
  mode: "BLOCKED",
  phase: null,
  branch: null,
  reality_green: null,
  reasons: ["required surface share/SSOT_SURFACE_V17.json: file not found"],
};
const ctx = (constraints: string[] = []) => ({ active_goal: "OA Runtime Enhancement", constraints });

describe("action classification", () => {
  it.each([
    ["Implement Phase 27.E", "feature_work"],
    ["Fix the docs index", "remediation"],
    ["Implement a status page", "feature_work"],
    ["Check reality and report", "diagnostic"],
    ["Run the database migration 0042", "migrations"],
    ["Check things, then advance to phase 28", "phase_transitions"],
    ["Aya runs doc_update_proposal_request (entry e-1)", "feature_work"],
    ["Prepare an OPS block for the release", "ops_blocks"],
    ["Ponder the universe", null],
  ])("%s → %s", (action, category) => {
    expect(classifyAction(action)).toBe(category);
  });

  it("finds no_* constraints an action breaks, and lists the ones it cannot check", () => {
    expect(checkConstraints("Run the database migration", ["no_db_writes", "no_git_push", "docs_only"])).toEqual({
      violated: ["no_db_writes"],
      unchecked: ["docs_only"],
    });
    expect(checkConstraints("git push the branch to origin", ["no_git_push"]).violated).toEqual(["no_git_push"]);
    expect(checkConstraints("Write OA docs", ["no_db_writes", "no_git_push"]).violated).toEqual([]);
  });
});

describe("SafeOPSDecision rules", () => {
  it("ALLOWs feature work on a NORMAL kernel (the spec's example)", () => {
    expect(
      decideSafeOps({
        proposed_action: "Implement Phase 27.E",
        kernel_state: NORMAL,
        oa_context: ctx(["no_db_writes", "no_git_push"]),
      }),
    ).toEqual({
      decision: "ALLOW",
      reasoning: "Kernel is NORMAL and feature_work is allowed; no constraint conflicts.",
      conditions: [],
      warnings: [],
    });
  });

  it("DENYs an action that breaks a constraint, even on a NORMAL kernel", () => {
    const out = decideSafeOps({
      proposed_action: "Apply schema migration to the database",
      kernel_state: NORMAL,
      oa_context: ctx(["no_db_writes"]),
    });
    expect(out.decision).toBe("DENY");
    expect(out.reasoning).toBe("Action breaks the OA constraint no_db_writes.");
  });

  it("DENYs work the DEGRADED mode forbids, ALLOWs remediation with a warning, CONDITIONAL for the rest", () => {
    const feature = decideSafeOps({
      proposed_action: "Implement the OA console",
      kernel_state: DEGRADED,
      oa_context: ctx(),
    });
    expect(feature.decision).toBe("DENY");
    expect(feature.reasoning).toBe(
      "Kernel is DEGRADED; feature_work is forbidden in DEGRADED (allowed: remediation, diagnostic).",
    );
    const fix = decideSafeOps({
      proposed_action: "Fix the failing unit tests",
      kernel_state: DEGRADED,
      oa_context: ctx(),
    });
    expect(fix).toMatchObject({
      decision: "ALLOW",
      warnings: ["kernel is DEGRADED: REALITY_GREEN_SUMMARY.json: reality_green is false"],
    });
    const other = decideSafeOps({ proposed_action: "Ponder the universe", kernel_state: DEGRADED, oa_context: ctx() });
    expect(other.decision).toBe("CONDITIONAL");
    expect(other.conditions).toHaveLength(2);
  });

  it("allows only diagnosis on a BLOCKED kernel", () => {
    expect(
      decideSafeOps({ proposed_action: "Inspect the kernel surfaces", kernel_state: BLOCKED, oa_context: ctx() })
        .decision,
    ).toBe("ALLOW");
    expect(
      decideSafeOps({ proposed_action: "Fix the SSOT surface", kernel_state: BLOCKED, oa_context: ctx() }).decision,
    ).toBe("DENY");
  });
});

describe("OPSBlockGenerator rules", () => {
  const REFS = ["docs/SSOT/PHASE27_B_OA_RUNTIME.md", "docs/SSOT/PHASE27_D_DSPY_REASONING_OUTLINE.md"];
  const HINT = { flow_id: "docs.create", hint: "Always update AGENTS.md" };

  it("turns the contract's example goal, references and hint into commands that do it", () => {
    const out = generateOpsBlock({
      goal: "Create OA data model documentation",
      kernel_state: NORMAL,
      ssot_references: REFS,
      hints: [HINT],
    });
    expect(out.ops_block).toMatch(/^## 🟦 OPS MODE — Create OA data model documentation\n/);
    for (const section of [
      "## Goal",
      "## Preflight",
      "Source: docs/SSOT/PHASE27_B_OA_RUNTIME.md",
      "## Commands",
      "## Evidence to Return",
      "## Next Gate",
    ])
      expect(out.ops_block).toContain(section);
    expect(out.commands[0]).toBe("mkdir -p docs/SSOT/oa");
    expect(out.commands[1]).toMatch(
      /^test -e docs\/SSOT\/oa\/OA_DATA_MODEL\.md \|\| printf '%s\\n' '# OA Data Model' /,
    );
    expect(out.commands).toContain("printf '%s\\n' '- [OA Data Model](docs/SSOT/oa/OA_DATA_MODEL.md)' >> AGENTS.md");
    expect(out.evidence_required.slice(0, 2)).toEqual([
      "First 50 lines of docs/SSOT/oa/OA_DATA_MODEL.md",
      "`git diff -- AGENTS.md` showing the link to docs/SSOT/oa/OA_DATA_MODEL.md",
    ]);
    for (const c of out.commands) expect(out.ops_block).toContain(c);
  });

  it("its commands, run by a shell, create the folder and the document and follow the hint", () => {
    const dir = mkdtempSync(join(tmpdir(), "pmagent-ops-"));
    try {
      writeFileSync(join(dir, "AGENTS.md"), "# Agents\n");
      const out = generateOpsBlock({
        goal: "Create OA data model documentation",
        kernel_state: NORMAL,
        ssot_references: REFS,
        hints: [HINT],
      });
      // Everything but pmagent's own verification and git (no repository here).
      const script = out.commands.filter((c) => !c.startsWith("pmagent") && !c.startsWith("git")).join("\n");
      execFileSync("sh", ["-c", script], { cwd: dir });
      expect(readFileSync(join(dir, "docs/SSOT/oa/OA_DATA_MODEL.md"), "utf8")).toBe(
        "# OA Data Model\n\nCreate OA data model documentation\n\nSources:\n- docs/SSOT/PHASE27_B_OA_RUNTIME.md\n- docs/SSOT/PHASE27_D_DSPY_REASONING_OUTLINE.md\n",
      );
      expect(readFileSync(join(dir, "AGENTS.md"), "utf8")).toBe(
        "# Agents\n- [OA Data Model](docs/SSOT/oa/OA_DATA_MODEL.md)\n",
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("answers different goals differently: a named file to edit, a command to run, a hint that is a command", () => {
    const edit = generateOpsBlock({
      goal: "Update docs/README.md and run `npm test`",
      kernel_state: NORMAL,
      ssot_references: [],
      hints: [{ flow_id: "reality", hint: "make reality.green" }],
    });
    expect(edit.commands).toEqual([
      '"${EDITOR:-vi}" docs/README.md',
      "git diff -- docs/README.md",
      "npm test",
      "make reality.green",
      "pmagent oa guard --mode STRICT --format json",
    ]);
    const remove = generateOpsBlock({
      goal: "Remove docs/old.md",
      kernel_state: NORMAL,
      ssot_references: [],
      hints: [],
    });
    expect(remove.commands.slice(0, 2)).toEqual(["git rm docs/old.md", "git status --short -- docs/old.md"]);
    const named = generateOpsBlock({
      goal: "Create docs/SSOT/oa/OA_DATA_MODEL.md",
      kernel_state: NORMAL,
      ssot_references: [],
      hints: [],
    });
    expect(named.commands.slice(0, 1)).toEqual(["mkdir -p docs/SSOT/oa"]);
    expect(named.evidence_required[0]).toBe("First 50 lines of docs/SSOT/oa/OA_DATA_MODEL.md");
  });

  it("says so when it cannot derive commands from the goal", () => {
    const out = generateOpsBlock({ goal: "Make things better", kernel_state: NORMAL, ssot_references: [], hints: [] });
    expect(out.commands).toEqual(["pmagent oa guard --mode STRICT --format json"]);
    expect(out.ops_block).toContain("> The rules could not derive commands from this goal: name the files it touches");
  });

  it("limits the block to remediation when the kernel is DEGRADED and the goal is forbidden work", () => {
    const out = generateOpsBlock({
      goal: "Implement feature in src/oa/new.ts",
      kernel_state: DEGRADED,
      ssot_references: [],
      hints: [],
    });
    expect(out.commands).toEqual([
      "pmagent oa tool oa.reality_check",
      "pmagent oa guard --format json | pmagent oa interpret -",
      "pmagent oa guard --mode STRICT --format json",
    ]);
    expect(out.ops_block).toContain(
      "> Kernel is DEGRADED: feature_work is not allowed now, so this block only remediates",
    );
    expect(out.ops_block).toContain("The kernel returns to NORMAL");
  });

  it("diagnoses instead when the kernel is BLOCKED", () => {
    const out = generateOpsBlock({
      goal: "Create OA data model documentation",
      kernel_state: BLOCKED,
      ssot_references: REFS,
      hints: [HINT],
    });
    expect(out.commands).toEqual([
      "pmagent oa tool oa.kernel_status",
      "pmagent oa guard --format json | pmagent oa interpret -",
      "pmagent oa guard --mode STRICT --format json",
    ]);
    expect(out.ops_block).toContain(
      "> Kernel is BLOCKED (required surface share/SSOT_SURFACE_V17.json: file not found): only diagnosis runs",
    );
  });
});

describe("GuardFailureInterpreter rules", () => {
  const diag = (category: string, message: string, remediation: string, severity = "error") => ({
    category,
    severity,
    message,
    details: {},
    remediation,
  });
  const guardOut = (diagnostics: unknown[]) => ({
    ok: false,
    mode: "STRICT",
    kernel_mode: "BLOCKED",
    mismatches: [],
    missing_surfaces: [],
    diagnostics,
    timestamp: "2026-11-23T00:00:00Z",
  });

  it("picks the most fundamental diagnostic as root cause and orders the plan", () => {
    const out = interpretGuardFailure({
      guard_name: null,
      kernel_state: BLOCKED,
      rerun: null,
      guard_output: guardOut([
        diag("kernel_mismatch", "branch match: …", "run `pmagent oa snapshot`"),
        diag("missing_surface", "required surface share/X.json does not exist", "restore share/X.json"),
      ]),
    });
    expect(out).toEqual({
      root_cause: "missing_surface: required surface share/X.json does not exist (and 1 more diagnostic)",
      remediation_plan: [
        "restore share/X.json",
        "run `pmagent oa snapshot`",
        "re-run `pmagent oa guard --mode STRICT` and confirm it reports ok",
      ],
      is_transient: false,
    });
  });

  it("calls a stale snapshot transient, and anything that passes on re-run", () => {
    const stale = guardOut([diag("kernel_mismatch", "phase match: …", "run `pmagent oa snapshot`")]);
    expect(
      interpretGuardFailure({ guard_name: null, kernel_state: NORMAL, rerun: null, guard_output: stale }).is_transient,
    ).toBe(true);
    const missing = guardOut([diag("missing_surface", "gone", "restore it")]);
    expect(
      interpretGuardFailure({
        guard_name: "oa_state",
        kernel_state: NORMAL,
        rerun: { exit_code: 0, ok: true },
        guard_output: missing,
      }).is_transient,
    ).toBe(true);
  });

  it("reads the origin's guard_oa_state.py report (the catalog's example: no kernel_mode)", () => {
    const report = {
      ok: false,
      mode: "STRICT",
      timestamp: "2024-12-07T15:30:00Z",
      mismatches: ["branch mismatch: OA='feature-x' vs kernel='main'"],
      missing_surfaces: [],
      diagnostics: [
        {
          type: "issue",
          category: "kernel_mismatch",
          severity: "error",
          message: "OA branch mismatches kernel branch",
          details: { oa_branch: "feature-x", kernel_branch: "main" },
          remediation: "pmagent oa snapshot",
        },
      ],
    };
    expect(
      interpretGuardFailure({ guard_name: null, kernel_state: NORMAL, rerun: null, guard_output: report }),
    ).toEqual({
      root_cause: "kernel_mismatch: OA branch mismatches kernel branch",
      remediation_plan: ["pmagent oa snapshot", "re-run `pmagent oa guard --mode STRICT` and confirm it reports ok"],
      is_transient: true,
    });
  });

  it("reads other guards' errors lists and messages", () => {
    const out = interpretGuardFailure({
      guard_name: "docs",
      kernel_state: NORMAL,
      rerun: null,
      guard_output: { ok: false, errors: ["INDEX.md is out of date", { message: "request timed out" }] },
    });
    expect(out).toEqual({
      root_cause: "docs failed: INDEX.md is out of date (and 1 more)",
      remediation_plan: [
        "resolve: INDEX.md is out of date",
        "resolve: request timed out",
        "re-run docs and confirm it passes",
      ],
      is_transient: false,
    });
    expect(
      interpretGuardFailure({
        guard_name: "net",
        kernel_state: NORMAL,
        rerun: null,
        guard_output: { ok: false, error: "ECONNRESET while fetching" },
      }).is_transient,
    ).toBe(true);
  });

  it("says so when there is no failure, or no reason given", () => {
    const ok = {
      ok: true,
      mode: "HINT",
      kernel_mode: "NORMAL",
      mismatches: [],
      missing_surfaces: [],
      diagnostics: [],
      timestamp: "t",
    };
    expect(interpretGuardFailure({ guard_name: null, kernel_state: NORMAL, rerun: null, guard_output: ok })).toEqual({
      root_cause: "no failure: the guard reported ok with kernel mode NORMAL",
      remediation_plan: [],
      is_transient: false,
    });
    expect(
      interpretGuardFailure({ guard_name: null, kernel_state: NORMAL, rerun: null, guard_output: { ok: false } })
        .root_cause,
    ).toBe("the guard reported a failure without saying why (no errors, failures, issues or message field)");
  });
});

describe("PhaseTransitionValidator rules", () => {
  const base = { kernel_state: NORMAL, last_completed_phase: "27", failed_checks: [], pending_ops_blocks: 0 };

  it("is READY to move to the next phase when everything holds", () => {
    expect(validatePhaseTransition({ ...base, target_phase: "28" })).toEqual({
      transition_status: "READY",
      missing_criteria: [],
    });
  });

  it("lists every missing criterion", () => {
    const out = validatePhaseTransition({
      target_phase: "30",
      kernel_state: DEGRADED,
      last_completed_phase: "26",
      failed_checks: ["Unit Tests"],
      pending_ops_blocks: 2,
    });
    expect(out).toEqual({
      transition_status: "NOT_READY",
      missing_criteria: [
        "kernel mode is DEGRADED, must be NORMAL (REALITY_GREEN_SUMMARY.json: reality_green is false)",
        "reality is not green (REALITY_GREEN_SUMMARY.json reality_green must be true)",
        'check "Unit Tests" is failing',
        "phase 30 skips phases 28–29",
        "the current phase 27 is not completed (last_completed_phase is 26)",
        "2 OPS blocks are still pending in share/oa/CONTEXT.json",
      ],
    });
    expect(validatePhaseTransition({ ...base, target_phase: "27" }).missing_criteria).toEqual([
      "target phase 27 is not after the current phase 27",
    ]);
  });

  it("orders phases with sub-phase letters", () => {
    expect(comparePhases("27.E", "27.F")).toBeLessThan(0);
    expect(comparePhases("28", "27.F")).toBeGreaterThan(0);
    expect(comparePhases("10", "9")).toBeGreaterThan(0);
  });
});
