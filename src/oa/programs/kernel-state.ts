import { KernelStateSchema, type KernelState } from "./io.js";

/** The KernelState of the program schemas from `oa.kernel_status` output. */
export function kernelStateFrom(kernelStatus: unknown): KernelState {
  const k = kernelStatus as {
    mode: string;
    phase: string | null;
    branch: string | null;
    reality_green: boolean | null;
    reasons: string[];
  };
  return KernelStateSchema.parse({
    mode: k.mode,
    phase: k.phase,
    branch: k.branch,
    reality_green: k.reality_green,
    reasons: k.reasons,
  });
}
