import type { z } from "zod";
import type { OAToolId } from "../tools.js";
import type { ReasoningEnvelope } from "../envelope.js";
import type { OAWorkspace } from "../workspace.js";
import type { KernelState, ProgramId } from "./io.js";

/** What a program sees while it runs: its envelope and the tools it is allowed to call. */
export interface ProgramContext {
  envelope: ReasoningEnvelope;
  workspace: OAWorkspace;
  /** The kernel as `oa.kernel_status` reported it when the run started (kernel-first). */
  kernel: KernelState;
  /** Calls a tool of the envelope's tools_allowed (others raise OAToolError) and records the call. */
  tool(id: OAToolId, args?: string[]): Promise<unknown>;
  /** Like `tool`, but while the kernel is BLOCKED a tool that cannot read its surface gives undefined (recorded as a warning). */
  tryTool(id: OAToolId, args?: string[]): Promise<unknown>;
}

/**
 * One reasoning program: how it gathers its spec input through tools, its deterministic rules,
 * and how its output reads as a decision. The bridge runs it with rules or with a model.
 */
export interface ProgramDefinition<I, O> {
  id: ProgramId;
  /** The spec's "DSPy Program → Tool Mapping". */
  tools: readonly OAToolId[];
  inputSchema: z.ZodType<I>;
  outputSchema: z.ZodType<O>;
  gather(ctx: ProgramContext): Promise<I>;
  rules(input: I): O;
  decision(output: O): string;
  rationale(output: O): string;
  /** Fail-closed floor over a model's answer: rules that refuse win over a model that allows. */
  floor?(input: I, model: O, rules: O): { output: O; overridden: string | null };
  /** The only file programs may write: share/oa/CONTEXT.json (through context.ts). */
  commit?(ctx: ProgramContext, output: O): void;
}
