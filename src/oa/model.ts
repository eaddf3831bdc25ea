import type { z } from "zod";
import type { ProgramId } from "./programs/io.js";

/**
 * A language model that answers a reasoning program through the prompt contract with structured
 * output. The integrator wires this to the prompt module's client; OA validates every answer with
 * `outputSchema` and never trusts it beyond that (fail-closed rules still apply).
 */
export interface ReasoningModel {
  complete(programId: ProgramId, input: unknown, outputSchema: z.ZodType): Promise<unknown>;
}
