/**
 * The Reasoning Bridge: `buildEnvelope` freezes what a program may know and call; `run` executes
 * the program (rules, or a model through the prompt contract) kernel-first and fail-closed.
 */
import { randomUUID } from "node:crypto";
import { z } from "zod";
import {
  PmagentError,
  Redactor,
  UsageError,
  formatZodIssues,
  nowIso,
  parseWith,
  secretsFromEnv,
} from "../core/index.js";
import { OAToolError } from "./errors.js";
import { computeKernel } from "./kernel.js";
import type { ReasoningModel } from "./model.js";
import { PROGRAM_IDS, ProgramIdSchema, ProgramInputsSchemas, type KernelState, type ProgramId } from "./programs/io.js";
import { guardFailureInterpreter } from "./programs/guard-interpreter.js";
import { kernelStateFrom } from "./programs/kernel-state.js";
import { opsBlockGenerator } from "./programs/ops-block.js";
import { phaseTransitionValidator } from "./programs/phase-validator.js";
import { safeOpsDecision } from "./programs/safe-ops.js";
import type { ProgramContext, ProgramDefinition } from "./programs/types.js";
import { ReasoningEnvelopeSchema, type ReasoningEnvelope } from "./envelope.js";
import type { SurfaceStatus } from "./schemas.js";
import { readState } from "./snapshot.js";
import { contextOf, loadSurfaces } from "./surfaces.js";
import { callOATool, type OAToolId } from "./tools.js";
import type { OAWorkspace } from "./workspace.js";

export const PROGRAMS: Record<ProgramId, ProgramDefinition<unknown, unknown>> = {
  SafeOPSDecision: safeOpsDecision as ProgramDefinition<unknown, unknown>,
  OPSBlockGenerator: opsBlockGenerator as ProgramDefinition<unknown, unknown>,
  GuardFailureInterpreter: guardFailureInterpreter as ProgramDefinition<unknown, unknown>,
  PhaseTransitionValidator: phaseTransitionValidator as ProgramDefinition<unknown, unknown>,
};

/** The spec's "DSPy Program → Tool Mapping". */
export const PROGRAM_TOOLS: Record<ProgramId, readonly OAToolId[]> = Object.fromEntries(
  PROGRAM_IDS.map((id) => [id, PROGRAMS[id].tools]),
) as Record<ProgramId, readonly OAToolId[]>;

export { ReasoningEnvelopeSchema, type ReasoningEnvelope };

export const OAToolCallSchema = z.object({
  tool_id: z.string(),
  args: z.array(z.string()),
  ok: z.boolean(),
  error: z.string().nullable(),
});
export const ReasoningDiagnosticSchema = z.object({
  severity: z.enum(["info", "warn", "error"]),
  code: z.string(),
  message: z.string(),
});
export type ReasoningDiagnostic = z.output<typeof ReasoningDiagnosticSchema>;

export const ReasoningResultSchema = z.object({
  envelope_id: z.string(),
  program_id: ProgramIdSchema,
  status: z.enum(["OK", "DEGRADED", "BLOCKED", "FAILED"]),
  decision: z.string(),
  rationale: z.string(),
  /** The program's output in its spec schema (in every kernel mode); null only when FAILED. */
  output: z.unknown(),
  engine: z.enum(["rules", "model"]),
  tool_calls: z.array(OAToolCallSchema),
  diagnostics: z.array(ReasoningDiagnosticSchema),
});
export type ReasoningResult = z.output<typeof ReasoningResultSchema>;

export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value as Record<string, unknown>)) deepFreeze(v);
  }
  return value;
}

export interface BuildEnvelopeOptions {
  workspace: OAWorkspace;
  /** Program-specific inputs: OPSBlockGenerator {ssot_references?, hints?}, GuardFailureInterpreter {guard_output, guard_name?}, PhaseTransitionValidator {target_phase}. */
  inputs?: Record<string, unknown>;
  clock?: () => number;
}

/** A deeply frozen envelope: kernel state, OA context, goal and the program's allowed tools. */
export function buildEnvelope(programId: string, goal: string, options: BuildEnvelopeOptions): ReasoningEnvelope {
  const parsedId = ProgramIdSchema.safeParse(programId);
  if (!parsedId.success)
    throw new UsageError(
      "oa_unknown_program",
      `unknown reasoning program "${programId}" (programs: ${PROGRAM_IDS.join(", ")})`,
    );
  const id = parsedId.data;
  if (goal.trim() === "") throw new UsageError("oa_goal_empty", `${id} needs a non-empty goal`);
  const inputs = parseWith(
    ProgramInputsSchemas[id],
    options.inputs ?? {},
    `${id} inputs`,
    "oa_invalid_inputs",
  ) as Record<string, unknown>;
  const ws = options.workspace;
  const set = loadSurfaces(ws);
  const kernel = computeKernel(set);
  const state = readState(ws);
  const ref = (st: SurfaceStatus) => ({ path: st.path, sha256: st.sha256 });
  const envelope = ReasoningEnvelopeSchema.parse({
    envelope_id: randomUUID(),
    timestamp: nowIso(options.clock),
    program_id: id,
    goal,
    kernel_state: {
      mode: kernel.mode,
      phase: kernel.phase,
      branch: kernel.branch,
      reality_green: kernel.reality_green,
      reasons: kernel.reasons,
    },
    kernel_state_ref: {
      mode: kernel.mode,
      bootstrap: ref(set.bootstrap.status),
      ssot_index: ref(set.ssot.status),
      reality_summary: ref(set.reality.status),
      handoff_kernel: ref(set.handoff.status),
      oa_state: { path: state.status.path, sha256: state.status.sha256 },
    },
    oa_context: contextOf(set).context,
    tools_allowed: [...PROGRAM_TOOLS[id]],
    inputs,
  });
  return deepFreeze(envelope);
}

export interface RunOptions {
  workspace: OAWorkspace;
  /** When given, the model answers (validated, under the rules' fail-closed floor); else the rules do. */
  model?: ReasoningModel;
}

/** Execute the envelope's program. Never throws for program failures: they come back as FAILED. */
export async function run(envelope: ReasoningEnvelope, options: RunOptions): Promise<ReasoningResult> {
  // Envelopes normally come from buildEnvelope; one made by hand is checked the same way.
  parseWith(ReasoningEnvelopeSchema, envelope, "reasoning envelope", "oa_invalid_envelope");
  parseWith(
    ProgramInputsSchemas[envelope.program_id],
    envelope.inputs,
    `${envelope.program_id} inputs`,
    "oa_invalid_inputs",
  );
  const program = PROGRAMS[envelope.program_id];
  const redactor = new Redactor(secretsFromEnv());
  const toolCalls: ReasoningResult["tool_calls"] = [];
  const diagnostics: ReasoningDiagnostic[] = [];
  let engine: ReasoningResult["engine"] = options.model ? "model" : "rules";
  const finish = (
    status: ReasoningResult["status"],
    decision: string,
    rationale: string,
    output: unknown,
  ): ReasoningResult =>
    deepFreeze({
      envelope_id: envelope.envelope_id,
      program_id: program.id,
      status,
      decision,
      rationale,
      output,
      engine,
      tool_calls: toolCalls,
      diagnostics,
    });
  const failed = (code: string, message: string) => {
    const text = redactor.redact(message);
    diagnostics.push({ severity: "error", code, message: text });
    return finish("FAILED", "FAILED", text, null);
  };

  const tool = async (id: OAToolId, args: string[] = []): Promise<unknown> => {
    if (!envelope.tools_allowed.includes(id)) {
      const err = new OAToolError(
        "oa_tool_not_allowed",
        `${program.id} may not call ${id} (allowed tools: ${envelope.tools_allowed.join(", ")})`,
      );
      toolCalls.push({ tool_id: id, args, ok: false, error: err.message });
      throw err;
    }
    try {
      const result = await callOATool(options.workspace, id, args);
      toolCalls.push({ tool_id: id, args, ok: true, error: null });
      return result;
    } catch (err) {
      toolCalls.push({ tool_id: id, args, ok: false, error: redactor.redact((err as Error).message) });
      throw err;
    }
  };

  let kernel: KernelState;
  let input: unknown;
  try {
    // Kernel-first: the kernel as it is now decides, not as it was when the envelope was built.
    kernel = kernelStateFrom(await tool("oa.kernel_status"));
    if (kernel.mode !== envelope.kernel_state.mode) {
      diagnostics.push({
        severity: "warn",
        code: "oa_kernel_changed",
        message: `kernel mode changed from ${envelope.kernel_state.mode} to ${kernel.mode} since the envelope was built`,
      });
    }
    // Every program runs in every mode and answers inside its own schema: fail-closed lives in
    // the rules (a BLOCKED kernel allows diagnosis only), not in a refusal outside the enums.
    const tryTool = async (id: OAToolId, args: string[] = []): Promise<unknown> => {
      try {
        return await tool(id, args);
      } catch (err) {
        if (!(err instanceof OAToolError) || kernel.mode !== "BLOCKED") throw err;
        diagnostics.push({ severity: "warn", code: err.code, message: redactor.redact(err.message) });
        return undefined;
      }
    };
    const ctx: ProgramContext = { envelope, workspace: options.workspace, kernel, tool, tryTool };
    input = parseWith(
      program.inputSchema,
      await program.gather(ctx),
      `${program.id} input`,
      "oa_program_input_invalid",
    );

    let output: unknown;
    // A BLOCKED kernel is answered by the rules alone: the fail-closed answer is not up for a model.
    if (options.model && kernel.mode === "BLOCKED") engine = "rules";
    if (options.model && kernel.mode !== "BLOCKED") {
      let raw: unknown;
      try {
        raw = await options.model.complete(program.id, input, program.outputSchema);
      } catch (err) {
        return failed("oa_model_failed", `the model failed to answer ${program.id}: ${(err as Error).message}`);
      }
      const parsed = program.outputSchema.safeParse(raw);
      if (!parsed.success)
        return failed(
          "oa_model_output_invalid",
          `the model's answer to ${program.id} does not match its output schema: ${formatZodIssues(parsed.error).join("; ")}`,
        );
      output = parsed.data;
      if (program.floor) {
        const floored = program.floor(input, output, program.rules(input));
        if (floored.overridden)
          diagnostics.push({ severity: "warn", code: "oa_model_overridden", message: floored.overridden });
        output = floored.output;
      }
    } else {
      output = program.rules(input);
    }
    program.commit?.(ctx, output);
    if (kernel.mode !== "NORMAL")
      diagnostics.push({
        severity: kernel.mode === "BLOCKED" ? "error" : "warn",
        code: kernel.mode === "BLOCKED" ? "oa_kernel_blocked" : "oa_kernel_not_normal",
        message: `kernel is ${kernel.mode}: ${kernel.reasons.join("; ")}`,
      });
    const status = kernel.mode === "NORMAL" ? "OK" : kernel.mode;
    return finish(status, program.decision(output), program.rationale(output), output);
  } catch (err) {
    if (err instanceof PmagentError) return failed(err.code, err.message);
    throw err;
  }
}
