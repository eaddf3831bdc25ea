/**
 * The reasoning envelope (the bridge's input to a program), in a file of its own below both the
 * bridge (reasoning.ts) and the programs, which read it through their ProgramContext.
 */
import { z } from "zod";
import { KernelStateSchema, ProgramIdSchema } from "./programs/io.js";
import { KernelModeSchema, OAContextBodySchema } from "./schemas.js";
import { OA_TOOL_IDS } from "./tools.js";

const SurfaceRefSchema = z.object({ path: z.string(), sha256: z.string().nullable() });

export const ReasoningEnvelopeSchema = z.object({
  envelope_id: z.string().uuid(),
  timestamp: z.string(),
  program_id: ProgramIdSchema,
  goal: z.string().min(1),
  kernel_state: KernelStateSchema,
  /** The bridge's KernelStateRef: the mode and a pointer (path, content hash) to each authoritative surface. */
  kernel_state_ref: z.object({
    mode: KernelModeSchema,
    bootstrap: SurfaceRefSchema,
    ssot_index: SurfaceRefSchema,
    reality_summary: SurfaceRefSchema,
    handoff_kernel: SurfaceRefSchema,
    oa_state: SurfaceRefSchema,
  }),
  oa_context: OAContextBodySchema,
  /** The bridge's whitelist of `oa.*` tools this program may call. */
  tools_allowed: z.array(z.enum(OA_TOOL_IDS)),
  /** Program-specific inputs (hints, guard output, target phase). */
  inputs: z.record(z.string(), z.unknown()),
});
export type ReasoningEnvelope = Readonly<z.output<typeof ReasoningEnvelopeSchema>>;
