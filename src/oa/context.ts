import { writeFileAtomic } from "../core/index.js";
import { OASurfaceError } from "./errors.js";
import type { KernelMode } from "./schemas.js";
import { EMPTY_OA_CONTEXT, describeProblem, loadSurface } from "./surfaces.js";
import type { OAWorkspace } from "./workspace.js";

export interface PendingOpsBlock {
  id: string;
  goal: string;
  created_at: string;
  commands: string[];
}

/**
 * Record a generated OPS block in share/oa/CONTEXT.json (the one file programs may write):
 * it becomes the active goal and a pending block. Fields OA does not know are kept; an invalid
 * context file is never overwritten.
 */
export function recordOpsBlock(ws: OAWorkspace, block: PendingOpsBlock, mode: KernelMode): void {
  const loaded = loadSurface(ws, "oa_context");
  if (loaded.status.status !== "ok" && loaded.status.status !== "missing") {
    throw new OASurfaceError("oa_context_invalid", `not overwriting ${describeProblem(loaded.status)}; fix or delete it first`);
  }
  const current = loaded.data ?? EMPTY_OA_CONTEXT;
  const next = {
    ...current,
    context: { ...current.context, active_goal: block.goal, kernel_mode: mode, pending_ops_blocks: [...current.context.pending_ops_blocks, block] },
  };
  writeFileAtomic(ws.contextPath, `${JSON.stringify(next, null, 2)}\n`);
}
