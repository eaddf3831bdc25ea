import { NotFoundError, writeFileAtomic } from "../core/index.js";
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
    throw new OASurfaceError(
      "oa_context_invalid",
      `not overwriting ${describeProblem(loaded.status)}; fix or delete it first`,
    );
  }
  const current = loaded.data ?? EMPTY_OA_CONTEXT;
  const next = {
    ...current,
    context: {
      ...current.context,
      active_goal: block.goal,
      kernel_mode: mode,
      pending_ops_blocks: [...current.context.pending_ops_blocks, block],
    },
  };
  writeFileAtomic(ws.contextPath, `${JSON.stringify(next, null, 2)}\n`);
}

/** Mark a pending OPS block done: remove it from share/oa/CONTEXT.json (PhaseTransitionValidator counts the rest). */
export function completeOpsBlock(ws: OAWorkspace, id: string): { completed: string; pending: number } {
  const loaded = loadSurface(ws, "oa_context");
  if (!loaded.data)
    throw new OASurfaceError(
      "oa_context_invalid",
      `cannot complete OPS block ${id}: ${describeProblem(loaded.status)}`,
    );
  const pending = loaded.data.context.pending_ops_blocks;
  const idOf = (b: (typeof pending)[number]) => (typeof b === "string" ? b : b.id);
  const rest = pending.filter((b) => idOf(b) !== id);
  if (rest.length === pending.length) {
    const known = pending.map(idOf).filter((x): x is string => typeof x === "string");
    throw new NotFoundError(
      "oa_ops_block_not_found",
      `no pending OPS block "${id}" in ${loaded.status.path} (pending: ${known.join(", ") || "none"})`,
    );
  }
  const next = { ...loaded.data, context: { ...loaded.data.context, pending_ops_blocks: rest } };
  writeFileAtomic(ws.contextPath, `${JSON.stringify(next, null, 2)}\n`);
  return { completed: id, pending: rest.length };
}
