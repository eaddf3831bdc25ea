/**
 * Carrying out the orchestrator's edit tools in a workspace: `apply_patch` confined to the lane's
 * allowed paths, `update_plan` written as the plan artifact. A refused or malformed call is not a
 * failure of the run: its error goes back to the model as the call's output, so it can correct it.
 */
import type { z } from "zod";
import { PmagentError, UsageError, confinePath, formatZodIssues, nowIso, writeFileAtomic } from "../core/index.js";
import { applyPatch, type PatchChange } from "./apply-patch.js";
import {
  APPLY_PATCH,
  ApplyPatchArgsSchema,
  PLAN_STATUSES,
  UPDATE_PLAN,
  UpdatePlanArgsSchema,
  type ToolCall,
  type UpdatePlanArgs,
} from "./tools.js";

export interface EditToolContext {
  workspace: string;
  /** The lane's `allowed_paths`: what apply_patch may change. */
  allowedPaths: readonly string[];
  /** Where update_plan writes the plan, relative to the workspace. */
  planFile: string;
  entryId: string;
}

export type EditToolResult =
  | { ok: true; tool: typeof APPLY_PATCH; output: string; changes: PatchChange[] }
  | { ok: true; tool: typeof UPDATE_PLAN; output: string; plan: UpdatePlanArgs; ref: string }
  | { ok: false; tool: string; output: string; code: string };

function failed(call: ToolCall, code: string, message: string): EditToolResult {
  return { ok: false, tool: call.name, code, output: `error [${code}]: ${message}` };
}

function args<T extends z.ZodType>(call: ToolCall, schema: T): z.output<T> {
  let json: unknown;
  try {
    json = JSON.parse(call.arguments);
  } catch (err) {
    throw new UsageError(
      "invalid_tool_arguments",
      `${call.name}: the arguments are not valid JSON (${(err as Error).message})`,
    );
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success)
    throw new UsageError(
      "invalid_tool_arguments",
      `${call.name}: invalid arguments:\n  ${formatZodIssues(parsed.error).join("\n  ")}`,
    );
  return parsed.data;
}

/** Carry out one call; errors of the call itself (refused path, bad patch) become its output. */
export function runEditTool(call: ToolCall, ctx: EditToolContext): EditToolResult {
  try {
    if (call.name === APPLY_PATCH) {
      const { input } = args(call, ApplyPatchArgsSchema);
      const changes = applyPatch(ctx.workspace, input, ctx.allowedPaths);
      return { ok: true, tool: APPLY_PATCH, changes, output: `applied: ${changes.map(describeChange).join("; ")}` };
    }
    if (call.name === UPDATE_PLAN) {
      const plan = args(call, UpdatePlanArgsSchema);
      const path = confinePath(ctx.workspace, ctx.planFile, "plan file");
      writeFileAtomic(
        path,
        `${JSON.stringify({ entry_id: ctx.entryId, explanation: plan.explanation, plan: plan.plan, updated_at: nowIso() }, null, 2)}\n`,
      );
      const counts = PLAN_STATUSES.map((s) => `${plan.plan.filter((p) => p.status === s).length} ${s}`).join(", ");
      return {
        ok: true,
        tool: UPDATE_PLAN,
        plan,
        ref: ctx.planFile,
        output: `plan updated: ${plan.plan.length} step${plan.plan.length === 1 ? "" : "s"} (${counts})`,
      };
    }
    return failed(
      call,
      "unknown_tool",
      `there is no tool "${call.name}": the tools are ${APPLY_PATCH} and ${UPDATE_PLAN}`,
    );
  } catch (err) {
    if (err instanceof PmagentError) return failed(call, err.code, err.message);
    throw err;
  }
}

function describeChange(c: PatchChange): string {
  const lines = (n: number | null) => `${n} line${n === 1 ? "" : "s"}`;
  if (c.type === "add") return `added ${c.path} (${lines(c.lines_after)})`;
  if (c.type === "delete") return `deleted ${c.path}`;
  return `updated ${c.from ? `${c.from} → ` : ""}${c.path} (${c.lines_before} → ${lines(c.lines_after)})`;
}
