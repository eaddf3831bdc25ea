/**
 * Function tools a role is offered in its Responses request. The contract gives the orchestrator
 * two, for plan and document artifacts: `apply_patch` (the edit format of apply-patch.ts) and
 * `update_plan` (the plan as it stands). The other roles answer without tools.
 */
import { z } from "zod";
import type { FunctionTool } from "openai/resources/responses/responses";
import { toJsonSchema } from "../core/index.js";
import { assertStrictJsonSchema } from "./output-schema.js";
import type { AgentRole } from "./roles.js";

export const APPLY_PATCH = "apply_patch";
export const UPDATE_PLAN = "update_plan";

export const ApplyPatchArgsSchema = z.strictObject({
  input: z.string().describe("the whole patch, from '*** Begin Patch' to '*** End Patch'"),
});

// A refinement, not minLength: strict mode does not take every JSON Schema keyword.
const filled = (what: string) => z.string().refine((s) => s.trim() !== "", `${what} must not be empty`);

export const PLAN_STATUSES = ["pending", "in_progress", "completed"] as const;

export const UpdatePlanArgsSchema = z.strictObject({
  explanation: z.string().nullable().describe("what changed in the plan and why, or null"),
  plan: z
    .array(
      z.strictObject({
        step: filled("step").describe("one action with a visible result"),
        owner: filled("owner").describe("the role that takes this step"),
        status: z.enum(PLAN_STATUSES),
      }),
    )
    .min(1)
    .describe("the whole plan as it stands now, every step"),
});
export type UpdatePlanArgs = z.output<typeof UpdatePlanArgsSchema>;

/** A function call the model made, as the Responses API gives it. */
export interface ToolCall {
  name: string;
  call_id: string;
  /** The arguments as the model wrote them: JSON text, not yet checked. */
  arguments: string;
}

/** Carries out a call; what it returns goes back to the model as the call's output. */
export type ToolHandler = (call: ToolCall) => Promise<string> | string;

function functionTool(name: string, description: string, schema: z.ZodType): FunctionTool {
  const { $schema: _ignored, ...parameters } = toJsonSchema(schema);
  assertStrictJsonSchema(parameters, `tool ${name}'s parameters`);
  return { type: "function", name, description, parameters, strict: true };
}

const PATCH_FORMAT = [
  "Edit plan and document files with a patch in this format:",
  "*** Begin Patch",
  "*** Add File: <path>        (then every line of the new file, each starting with '+')",
  "*** Update File: <path>     (then hunks; optionally first '*** Move to: <new path>')",
  "@@ <a line the hunk comes after, optional>",
  " <unchanged context line>",
  "-<removed line>",
  "+<added line>",
  "*** Delete File: <path>",
  "*** End Patch",
  "Paths are relative to the repository root. Give about three context lines around each change, copied exactly. The patch applies whole or not at all.",
].join("\n");

/** The orchestrator's edit tools; `allowedPaths`, when known, are named in apply_patch's description. */
export function roleTools(role: AgentRole, allowedPaths?: readonly string[]): FunctionTool[] {
  if (role !== "orchestrator") return [];
  const where = allowedPaths
    ? ` Only files under ${allowedPaths.join(", ")} may be changed; other paths are refused.`
    : " Only the lane's allowed paths (plan and document files) may be changed; other paths are refused.";
  return [
    functionTool(APPLY_PATCH, `${PATCH_FORMAT}${where}`, ApplyPatchArgsSchema),
    functionTool(
      UPDATE_PLAN,
      "Replace the lane's plan with the steps given: every step, each with its owner and a truthful status. Call it whenever the plan changes.",
      UpdatePlanArgsSchema,
    ),
  ];
}
