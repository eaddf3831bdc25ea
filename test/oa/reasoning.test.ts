import { describe, expect, it } from "vitest";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { z } from "zod";
import {
  PROGRAM_TOOLS,
  buildEnvelope,
  completeOpsBlock,
  runReasoning,
  runOaGuard,
  writeSnapshot,
  type ProgramId,
  type ReasoningModel,
  type ReasoningEnvelope,
} from "../../src/oa/index.js";
import { FIXTURES, makeProject, writeSurface } from "./helpers.js";

/** An in-process model: answers from a table, recording what it was asked. */
class TableModel implements ReasoningModel {
  readonly calls: Array<{ programId: ProgramId; input: unknown; schema: z.ZodType }> = [];
  constructor(private readonly answer: (programId: ProgramId, input: unknown) => unknown) {}
  async complete(programId: ProgramId, input: unknown, outputSchema: z.ZodType): Promise<unknown> {
    this.calls.push({ programId, input, schema: outputSchema });
    return this.answer(programId, input);
  }
}

describe("buildEnvelope", () => {
  it("returns a deeply frozen envelope with kernel state, context and the program's tools", () => {
    const p = makeProject("normal");
    const env = buildEnvelope("OPSBlockGenerator", "Create docs/SSOT/oa/OA_DATA_MODEL.md", {
      workspace: p.ws,
      inputs: { hints: [{ flow_id: "docs.create", hint: "Always update AGENTS.md" }] },
      clock: () => Date.parse("2026-11-23T02:00:00Z"),
    });
    expect(env).toMatchObject({
      envelope_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      timestamp: "2026-11-23T02:00:00.000Z",
      program_id: "OPSBlockGenerator",
      goal: "Create docs/SSOT/oa/OA_DATA_MODEL.md",
      kernel_state: {
        mode: "NORMAL",
        phase: "27",
        branch: "feat/phase27e-oa-runtime",
        reality_green: true,
        reasons: [],
      },
      kernel_state_ref: {
        mode: "NORMAL",
        bootstrap: { path: "share/PM_BOOTSTRAP_STATE.json", sha256: expect.stringMatching(/^[0-9a-f]{64}$/) },
        ssot_index: { path: "share/SSOT_SURFACE_V17.json", sha256: expect.stringMatching(/^[0-9a-f]{64}$/) },
        oa_state: { path: "share/orchestrator_assistant/STATE.json", sha256: null },
      },
      oa_context: { active_goal: "OA Runtime Enhancement", constraints: ["no_db_writes", "no_git_push"] },
      tools_allowed: ["oa.kernel_status", "oa.ssot_surface", "oa.bootstrap_state"],
    });
    expect(Object.isFrozen(env)).toBe(true);
    expect(Object.isFrozen(env.kernel_state)).toBe(true);
    expect(Object.isFrozen(env.oa_context.constraints)).toBe(true);
    expect(() => (env.oa_context.constraints as string[]).push("x")).toThrow(TypeError);
  });

  it("gives each program exactly the tools of the spec's mapping", () => {
    expect(PROGRAM_TOOLS).toEqual({
      SafeOPSDecision: ["oa.kernel_status", "oa.reality_summary"],
      OPSBlockGenerator: ["oa.kernel_status", "oa.ssot_surface", "oa.bootstrap_state"],
      GuardFailureInterpreter: ["oa.kernel_status", "oa.guard.run"],
      PhaseTransitionValidator: ["oa.kernel_status", "oa.ssot_surface", "oa.reality_check"],
    });
  });

  it("refuses an unknown program, an empty goal and invalid inputs", () => {
    const ws = makeProject("normal").ws;
    expect(() => buildEnvelope("DoAnything", "x", { workspace: ws })).toThrow(
      'unknown reasoning program "DoAnything" (programs: SafeOPSDecision, OPSBlockGenerator, GuardFailureInterpreter, PhaseTransitionValidator)',
    );
    expect(() => buildEnvelope("SafeOPSDecision", "  ", { workspace: ws })).toThrow(
      "SafeOPSDecision needs a non-empty goal",
    );
    expect(() => buildEnvelope("PhaseTransitionValidator", "go", { workspace: ws })).toThrow(
      /PhaseTransitionValidator inputs is invalid:\n {2}\$\.target_phase: Invalid input: expected string, received undefined/,
    );
    expect(() => buildEnvelope("GuardFailureInterpreter", "go", { workspace: ws })).toThrow(
      /\$\.guard_output: expected the guard's JSON output/,
    );
    expect(() =>
      buildEnvelope("OPSBlockGenerator", "go", { workspace: ws, inputs: { hints: [{ flow_id: "x" }] } }),
    ).toThrow(/\$\.hints\[0\]\.hint: Invalid input: expected string, received undefined/);
  });
});

describe("run (rule-based programs)", () => {
  it("SafeOPSDecision on a NORMAL kernel: OK, ALLOW, through its two tools", async () => {
    const p = makeProject("normal");
    const r = await runReasoning(buildEnvelope("SafeOPSDecision", "Implement Phase 27.E", { workspace: p.ws }), {
      workspace: p.ws,
    });
    expect(r).toMatchObject({
      status: "OK",
      decision: "ALLOW",
      engine: "rules",
      rationale: "Kernel is NORMAL and feature_work is allowed; no constraint conflicts.",
      diagnostics: [],
    });
    expect(r.tool_calls.map((c) => [c.tool_id, c.ok])).toEqual([
      ["oa.kernel_status", true],
      ["oa.reality_summary", true],
    ]);
    expect(Object.isFrozen(r)).toBe(true);
  });

  it("is DEGRADED on a degraded kernel and says why", async () => {
    const p = makeProject("degraded-reality-red");
    const r = await runReasoning(buildEnvelope("SafeOPSDecision", "Fix the failing checks", { workspace: p.ws }), {
      workspace: p.ws,
    });
    expect(r.status).toBe("DEGRADED");
    expect(r.decision).toBe("ALLOW");
    expect(r.diagnostics).toContainEqual({
      severity: "warn",
      code: "oa_kernel_not_normal",
      message: "kernel is DEGRADED: REALITY_GREEN_SUMMARY.json: reality_green is false",
    });
  });

  it("fail-closed on a BLOCKED kernel, inside each program's enums: diagnosis ALLOWed, work DENYed, NOT_READY", async () => {
    const p = makeProject("blocked-missing-surface");
    const decide = async (action: string) =>
      runReasoning(buildEnvelope("SafeOPSDecision", action, { workspace: p.ws }), { workspace: p.ws });
    const diagnose = await decide("Inspect the kernel surfaces");
    expect(diagnose).toMatchObject({ status: "BLOCKED", decision: "ALLOW", output: { decision: "ALLOW" } });
    const work = await decide("Implement the console");
    expect(work).toMatchObject({ status: "BLOCKED", decision: "DENY", output: { decision: "DENY" } });
    expect(work.rationale).toBe("Kernel is BLOCKED; feature_work is forbidden in BLOCKED (allowed: diagnostic).");
    // The summary is missing: the tool's failure is a warning, the kernel's reason an error.
    expect(work.tool_calls.map((c) => [c.tool_id, c.ok])).toEqual([
      ["oa.kernel_status", true],
      ["oa.reality_summary", false],
    ]);
    expect(work.diagnostics).toContainEqual({
      severity: "error",
      code: "oa_kernel_blocked",
      message: "kernel is BLOCKED: required surface share/REALITY_GREEN_SUMMARY.json: file not found",
    });
    const phase = await runReasoning(
      buildEnvelope("PhaseTransitionValidator", "to 28", { workspace: p.ws, inputs: { target_phase: "28" } }),
      { workspace: p.ws },
    );
    expect(phase).toMatchObject({ status: "BLOCKED", decision: "NOT_READY" });
    expect((phase.output as { missing_criteria: string[] }).missing_criteria[0]).toBe(
      "kernel mode is BLOCKED, must be NORMAL (required surface share/REALITY_GREEN_SUMMARY.json: file not found)",
    );
    const ops = await runReasoning(buildEnvelope("OPSBlockGenerator", "Implement the console", { workspace: p.ws }), {
      workspace: p.ws,
    });
    expect(ops).toMatchObject({ status: "BLOCKED", decision: "GENERATED" });
    // A BLOCKED kernel's block is not recorded as pending work.
    expect(JSON.parse(readFileSync(join(p.share, "oa/CONTEXT.json"), "utf8")).context.pending_ops_blocks).toEqual([]);
  });

  it("GuardFailureInterpreter still runs on a BLOCKED kernel, re-running the named guard", async () => {
    const p = makeProject("blocked-missing-surface");
    const guardOutput = runOaGuard(p.ws, "STRICT");
    const r = await runReasoning(
      buildEnvelope("GuardFailureInterpreter", "why does the guard fail?", {
        workspace: p.ws,
        inputs: { guard_output: guardOutput, guard_name: "oa_state" },
      }),
      { workspace: p.ws },
    );
    expect(r.status).toBe("BLOCKED");
    expect(r.decision).toBe("PERSISTENT");
    expect(r.output).toMatchObject({
      root_cause:
        "missing_surface: required surface share/REALITY_GREEN_SUMMARY.json does not exist (and 1 more diagnostic)",
      is_transient: false,
    });
    expect(r.tool_calls.map((c) => [c.tool_id, c.args])).toEqual([
      ["oa.kernel_status", []],
      ["oa.guard.run", ["oa_state"]],
    ]);
  });

  it("GuardFailureInterpreter calls a failure transient when the registered guard now passes", async () => {
    const p = makeProject("normal", {
      guards: { docs: { command: [process.execPath, join(FIXTURES, "guards", "pass.mjs")] } },
    });
    const r = await runReasoning(
      buildEnvelope("GuardFailureInterpreter", "interpret", {
        workspace: p.ws,
        inputs: { guard_output: { ok: false, errors: ["INDEX.md is out of date"] }, guard_name: "docs" },
      }),
      { workspace: p.ws },
    );
    expect(r).toMatchObject({ status: "OK", decision: "TRANSIENT", output: { is_transient: true } });
  });

  it("OPSBlockGenerator records the block in CONTEXT.json (atomically), keeping unknown fields", async () => {
    const p = makeProject("normal");
    const env = buildEnvelope("OPSBlockGenerator", "Create docs/SSOT/oa/OA_DATA_MODEL.md", { workspace: p.ws });
    const r = await runReasoning(env, { workspace: p.ws });
    expect(r.status).toBe("OK");
    expect((r.output as { evidence_required: string[] }).evidence_required).toContain(
      "Confirmation that docs/SSOT/PHASE27_B_OA_RUNTIME.md, docs/SSOT/PHASE27_D_DSPY_REASONING_OUTLINE.md were read and followed",
    );
    const context = JSON.parse(readFileSync(join(p.share, "oa/CONTEXT.json"), "utf8"));
    expect(context.context).toMatchObject({
      active_goal: "Create docs/SSOT/oa/OA_DATA_MODEL.md",
      kernel_mode: "NORMAL",
      constraints: ["no_db_writes", "no_git_push"],
      session_metadata: { owner: "orchestrator" },
      pending_ops_blocks: [
        {
          id: env.envelope_id,
          goal: "Create docs/SSOT/oa/OA_DATA_MODEL.md",
          commands: (r.output as { commands: string[] }).commands,
        },
      ],
    });
    // The pending block now stands between the project and the next phase.
    const phase = await runReasoning(
      buildEnvelope("PhaseTransitionValidator", "to 28", { workspace: p.ws, inputs: { target_phase: "28" } }),
      { workspace: p.ws },
    );
    expect(phase.output).toEqual({
      transition_status: "NOT_READY",
      missing_criteria: ["1 OPS block is still pending in share/oa/CONTEXT.json"],
    });
    expect(() => completeOpsBlock(p.ws, "nope")).toThrow(
      `no pending OPS block "nope" in share/oa/CONTEXT.json (pending: ${env.envelope_id})`,
    );
    expect(completeOpsBlock(p.ws, env.envelope_id)).toEqual({ completed: env.envelope_id, pending: 0 });
    const again = await runReasoning(
      buildEnvelope("PhaseTransitionValidator", "to 28", { workspace: p.ws, inputs: { target_phase: "28" } }),
      { workspace: p.ws },
    );
    expect(again.decision).toBe("READY");
  });

  it("OPSBlockGenerator creates CONTEXT.json when missing and never overwrites an invalid one", async () => {
    const p = makeProject("normal");
    rmSync(join(p.share, "oa/CONTEXT.json"));
    const first = await runReasoning(buildEnvelope("OPSBlockGenerator", "Write docs/a.md", { workspace: p.ws }), {
      workspace: p.ws,
    });
    expect(first.status).toBe("OK");
    expect(JSON.parse(readFileSync(join(p.share, "oa/CONTEXT.json"), "utf8")).context.pending_ops_blocks).toHaveLength(
      1,
    );
    writeSurface(p, "oa/CONTEXT.json", "{ broken");
    const second = await runReasoning(buildEnvelope("OPSBlockGenerator", "Write docs/b.md", { workspace: p.ws }), {
      workspace: p.ws,
    });
    expect(second).toMatchObject({ status: "FAILED", decision: "FAILED" });
    expect(second.diagnostics[0]).toMatchObject({
      code: "oa_context_invalid",
      message: expect.stringMatching(/^not overwriting share\/oa\/CONTEXT\.json: not valid JSON/),
    });
    expect(readFileSync(join(p.share, "oa/CONTEXT.json"), "utf8")).toBe("{ broken");
  });

  it("PhaseTransitionValidator is READY on a completed NORMAL phase and NOT_READY on a degraded one", async () => {
    const ok = makeProject("normal");
    const ready = await runReasoning(
      buildEnvelope("PhaseTransitionValidator", "to 28", { workspace: ok.ws, inputs: { target_phase: "28" } }),
      { workspace: ok.ws },
    );
    expect(ready).toMatchObject({
      status: "OK",
      decision: "READY",
      output: { transition_status: "READY", missing_criteria: [] },
    });
    expect(ready.tool_calls.map((c) => c.tool_id)).toEqual(["oa.kernel_status", "oa.ssot_surface", "oa.reality_check"]);
    const bad = makeProject("degraded-failing-check");
    const notReady = await runReasoning(
      buildEnvelope("PhaseTransitionValidator", "to 28", { workspace: bad.ws, inputs: { target_phase: "28" } }),
      { workspace: bad.ws },
    );
    expect(notReady.decision).toBe("NOT_READY");
    expect((notReady.output as { missing_criteria: string[] }).missing_criteria).toContain(
      'check "Unit Tests" is failing',
    );
  });

  it("a program may call only its allowed tools", async () => {
    const p = makeProject("normal");
    const env = buildEnvelope("SafeOPSDecision", "Implement it", { workspace: p.ws });
    const narrowed: ReasoningEnvelope = { ...env, tools_allowed: ["oa.kernel_status"] };
    const r = await runReasoning(narrowed, { workspace: p.ws });
    expect(r.status).toBe("FAILED");
    expect(r.diagnostics).toEqual([
      {
        severity: "error",
        code: "oa_tool_not_allowed",
        message: "SafeOPSDecision may not call oa.reality_summary (allowed tools: oa.kernel_status)",
      },
    ]);
    expect(r.tool_calls.at(-1)).toMatchObject({ tool_id: "oa.reality_summary", ok: false });
  });

  it("refuses a hand-made envelope that is invalid", async () => {
    const p = makeProject("normal");
    const env = buildEnvelope("PhaseTransitionValidator", "to 28", { workspace: p.ws, inputs: { target_phase: "28" } });
    await expect(runReasoning({ ...env, tools_allowed: ["oa.shell" as never] }, { workspace: p.ws })).rejects.toThrow(
      /^reasoning envelope is invalid:\n {2}\$\.tools_allowed\[0\]: Invalid option/,
    );
    await expect(runReasoning({ ...env, inputs: { target_phase: 28 } }, { workspace: p.ws })).rejects.toThrow(
      "PhaseTransitionValidator inputs is invalid:\n  $.target_phase: Invalid input: expected string, received number",
    );
  });

  it("decides on the kernel as it is when it runs (kernel-first), not as it was in the envelope", async () => {
    const p = makeProject("normal");
    const env = buildEnvelope("SafeOPSDecision", "Implement it", { workspace: p.ws });
    rmSync(join(p.share, "PM_BOOTSTRAP_STATE.json"));
    const r = await runReasoning(env, { workspace: p.ws });
    expect(r.status).toBe("BLOCKED");
    expect(r.diagnostics[0]).toEqual({
      severity: "warn",
      code: "oa_kernel_changed",
      message: "kernel mode changed from NORMAL to BLOCKED since the envelope was built",
    });
  });
});

describe("run (model-backed programs)", () => {
  it("asks the model with the program's input and output schema and returns its validated answer", async () => {
    const p = makeProject("normal");
    const model = new TableModel(() => ({
      decision: "CONDITIONAL",
      reasoning: "Feature work is fine if the docs follow.",
      conditions: ["update AGENTS.md"],
      warnings: [],
    }));
    const r = await runReasoning(buildEnvelope("SafeOPSDecision", "Implement Phase 27.E", { workspace: p.ws }), {
      workspace: p.ws,
      model,
    });
    expect(r).toMatchObject({
      status: "OK",
      engine: "model",
      decision: "CONDITIONAL",
      rationale: "Feature work is fine if the docs follow.",
      output: { conditions: ["update AGENTS.md"] },
    });
    expect(model.calls).toHaveLength(1);
    expect(model.calls[0]!.programId).toBe("SafeOPSDecision");
    expect(model.calls[0]!.input).toEqual({
      proposed_action: "Implement Phase 27.E",
      kernel_state: {
        mode: "NORMAL",
        phase: "27",
        branch: "feat/phase27e-oa-runtime",
        reality_green: true,
        reasons: [],
      },
      oa_context: { active_goal: "OA Runtime Enhancement", constraints: ["no_db_writes", "no_git_push"] },
    });
    expect(model.calls[0]!.schema.safeParse({ decision: "MAYBE" }).success).toBe(false);
  });

  it("fails with a diagnostic when the model's answer does not match the output schema", async () => {
    const p = makeProject("normal");
    const model = new TableModel(() => ({ decision: "PROCEED", reasoning: "" }));
    const r = await runReasoning(buildEnvelope("SafeOPSDecision", "Implement it", { workspace: p.ws }), {
      workspace: p.ws,
      model,
    });
    expect(r).toMatchObject({ status: "FAILED", decision: "FAILED", output: null });
    expect(r.diagnostics[0]!.code).toBe("oa_model_output_invalid");
    expect(r.diagnostics[0]!.message).toMatch(
      /^the model's answer to SafeOPSDecision does not match its output schema: \$\.decision: Invalid option/,
    );
  });

  it("fails with a diagnostic, secrets redacted, when the model call throws", async () => {
    const p = makeProject("normal");
    const model: ReasoningModel = {
      complete: async () => {
        throw new Error("401 from model server for key sk-proj-abcdefghijklmnopqrstuvwx");
      },
    };
    const r = await runReasoning(
      buildEnvelope("PhaseTransitionValidator", "to 28", { workspace: p.ws, inputs: { target_phase: "28" } }),
      { workspace: p.ws, model },
    );
    expect(r.status).toBe("FAILED");
    expect(r.diagnostics[0]).toEqual({
      severity: "error",
      code: "oa_model_failed",
      message: "the model failed to answer PhaseTransitionValidator: 401 from model server for key [REDACTED]",
    });
  });

  it("keeps the rules' refusal when the model would allow (fail-closed floor)", async () => {
    const p = makeProject("degraded-reality-red");
    const model = new TableModel(() => ({ decision: "ALLOW", reasoning: "Looks fine.", conditions: [], warnings: [] }));
    const r = await runReasoning(buildEnvelope("SafeOPSDecision", "Implement the console", { workspace: p.ws }), {
      workspace: p.ws,
      model,
    });
    expect(r.decision).toBe("DENY");
    expect(r.diagnostics).toContainEqual({
      severity: "warn",
      code: "oa_model_overridden",
      message: "model decision ALLOW overridden by the rules: DENY",
    });
    const phaseModel = new TableModel(() => ({ transition_status: "READY", missing_criteria: [] }));
    const phase = await runReasoning(
      buildEnvelope("PhaseTransitionValidator", "to 28", { workspace: p.ws, inputs: { target_phase: "28" } }),
      { workspace: p.ws, model: phaseModel },
    );
    expect(phase.decision).toBe("NOT_READY");
  });

  it("does not ask the model at all when the kernel is BLOCKED: the rules answer", async () => {
    const p = makeProject("blocked-invalid-json");
    const model = new TableModel(() => ({ ops_block: "x", commands: [], evidence_required: [] }));
    const r = await runReasoning(buildEnvelope("OPSBlockGenerator", "anything", { workspace: p.ws }), {
      workspace: p.ws,
      model,
    });
    expect(r).toMatchObject({ status: "BLOCKED", engine: "rules", decision: "GENERATED" });
    expect(model.calls).toEqual([]);
  });

  it("uses a model-generated OPS block and records it in the context", async () => {
    const p = makeProject("normal");
    writeSnapshot(p.ws);
    const model = new TableModel((_id, input) => ({
      ops_block: `## 🟦 OPS MODE — ${(input as { goal: string }).goal}\n\n### Goal\n\n…\n`,
      commands: ["pmagent oa guard --mode STRICT --format json"],
      evidence_required: ["guard output"],
    }));
    const r = await runReasoning(buildEnvelope("OPSBlockGenerator", "Write docs/x.md", { workspace: p.ws }), {
      workspace: p.ws,
      model,
    });
    expect(r).toMatchObject({ status: "OK", engine: "model", decision: "GENERATED" });
    expect(
      JSON.parse(readFileSync(join(p.share, "oa/CONTEXT.json"), "utf8")).context.pending_ops_blocks[0].commands,
    ).toEqual(["pmagent oa guard --mode STRICT --format json"]);
  });
});
