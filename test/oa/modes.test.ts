import { describe, expect, it } from "vitest";
import {
  buildEnvelope,
  runReasoning,
  REASONING_PROGRAMS,
  ReasoningResultSchema,
  runOaGuard,
  type ReasoningModel,
} from "../../src/oa/index.js";
import { makeProject, type FixtureName } from "./helpers.js";

const FIXTURES: Array<[FixtureName, "NORMAL" | "DEGRADED" | "BLOCKED"]> = [
  ["normal", "NORMAL"],
  ["degraded-reality-red", "DEGRADED"],
  ["degraded-failing-check", "DEGRADED"],
  ["hint-branch-mismatch", "NORMAL"],
  ["hint-phase-mismatch", "NORMAL"],
  ["degraded-health-mismatch", "DEGRADED"],
  ["degraded-legacy-dms", "DEGRADED"],
  ["origin-reality-conflict", "NORMAL"],
  ["blocked-missing-surface", "BLOCKED"],
  ["blocked-invalid-json", "BLOCKED"],
  ["blocked-wrong-types", "BLOCKED"],
];

const PROGRAM_INPUTS = (p: ReturnType<typeof makeProject>) =>
  ({
    SafeOPSDecision: [
      { goal: "Implement Phase 28", inputs: {} },
      { goal: "Inspect the kernel surfaces", inputs: {} },
    ],
    OPSBlockGenerator: [
      {
        goal: "Create docs/SSOT/oa/OA_DATA_MODEL.md",
        inputs: { hints: [{ flow_id: "docs.create", hint: "Always update AGENTS.md" }] },
      },
    ],
    GuardFailureInterpreter: [
      {
        goal: "why does the guard fail?",
        inputs: { guard_output: runOaGuard(p.ws, "STRICT"), guard_name: "oa_state" },
      },
    ],
    PhaseTransitionValidator: [{ goal: "to 28", inputs: { target_phase: "28" } }],
  }) as const;

/** A model that answers each program with a valid, permissive answer (the floors still apply). */
const permissive: ReasoningModel = {
  complete: async (id) =>
    ({
      SafeOPSDecision: { decision: "ALLOW", reasoning: "fine", conditions: [], warnings: [] },
      OPSBlockGenerator: { ops_block: "## 🟦 OPS MODE — x\n", commands: ["true"], evidence_required: ["none"] },
      GuardFailureInterpreter: { root_cause: "x", remediation_plan: [], is_transient: false },
      PhaseTransitionValidator: { transition_status: "READY", missing_criteria: [] },
    })[id],
};

describe("every program answers inside its schema in every kernel mode", () => {
  for (const [fixture, mode] of FIXTURES) {
    for (const engine of ["rules", "model"] as const) {
      it(`${fixture} (${mode}), ${engine}`, async () => {
        const p = makeProject(fixture);
        const all = PROGRAM_INPUTS(p);
        for (const id of Object.keys(all) as Array<keyof typeof all>) {
          for (const { goal, inputs } of all[id]) {
            const r = await runReasoning(buildEnvelope(id, goal, { workspace: p.ws, inputs }), {
              workspace: p.ws,
              ...(engine === "model" ? { model: permissive } : {}),
            });
            expect(ReasoningResultSchema.parse(r)).toEqual(r);
            expect(r.status, `${id}: ${r.rationale}`).toBe(mode === "NORMAL" ? "OK" : mode);
            expect(
              REASONING_PROGRAMS[id].outputSchema.safeParse(r.output).success,
              `${id} output ${JSON.stringify(r.output)}`,
            ).toBe(true);
            expect(r.decision).not.toBe("REFUSED");
            if (id === "SafeOPSDecision" && mode !== "NORMAL") {
              // Fail-closed: feature work never runs on a kernel that is not NORMAL; diagnosis always may.
              expect(r.decision).toBe(goal.startsWith("Inspect") ? "ALLOW" : "DENY");
            }
            if (id === "PhaseTransitionValidator" && mode !== "NORMAL") expect(r.decision).toBe("NOT_READY");
          }
        }
      });
    }
  }
});
