/**
 * The OA Tools API: the seven read-only tools of the spec, each returning JSON. OA reaches kernel
 * state only through these; reasoning programs get a subset (see PROGRAM_TOOLS).
 */
import { OAToolError } from "./errors.js";
import { computeKernel, describeDisagreement, interpretation } from "./kernel.js";
import { runRegisteredGuard, guardNames } from "./guards.js";
import {
  OA_INIT_COMMAND,
  describeProblem,
  loadSurface,
  loadSurfaces,
  noKernelSurfaces,
  type SurfaceName,
} from "./surfaces.js";
import type { OAWorkspace } from "./workspace.js";

import { OA_TOOL_IDS, type OAToolId } from "./tool-ids.js";

export { OA_TOOL_IDS, type OAToolId };

export function isOAToolId(id: string): id is OAToolId {
  return (OA_TOOL_IDS as readonly string[]).includes(id);
}

function surfaceTool(ws: OAWorkspace, name: SurfaceName): unknown {
  const loaded = loadSurface(ws, name);
  if (!loaded.data) {
    const fix =
      loaded.status.status === "missing" && noKernelSurfaces(loadSurfaces(ws))
        ? ` (no kernel surfaces yet: run \`${OA_INIT_COMMAND}\`)`
        : "";
    throw new OAToolError("oa_surface_unavailable", `cannot load ${describeProblem(loaded.status)}${fix}`, {
      details: { status: loaded.status },
    });
  }
  return loaded.data;
}

const OVERALL = { NORMAL: "green", DEGRADED: "yellow", BLOCKED: "red" } as const;

function kernelStatus(ws: OAWorkspace): unknown {
  const k = computeKernel(loadSurfaces(ws));
  return {
    mode: k.mode,
    phase: k.phase,
    branch: k.branch,
    last_completed_phase: k.last_completed_phase,
    reality_green: k.reality_green,
    failed_checks: k.failed_checks,
    // The registry's `health.overall`: green when NORMAL, yellow when DEGRADED, red when BLOCKED.
    health: { overall: OVERALL[k.mode], ...k.health },
    reasons: k.reasons,
    // Disagreements the origin's guard does not check (a stale bootstrap health, copies of branch or phase).
    hints: k.hints.map(describeDisagreement),
    interpretation: interpretation(k),
  };
}

/** The registry's RealityCheckResult: counts, the failed checks' names and every check with its details. */
function realityCheck(ws: OAWorkspace): unknown {
  const r = surfaceTool(ws, "reality_green_summary") as {
    reality_green: boolean;
    checks: Array<{ name: string; passed: boolean; message?: string; details?: unknown }>;
    timestamp?: string;
  };
  const checks = r.checks.map((c) => ({
    name: c.name,
    passed: c.passed,
    message: c.message ?? null,
    details: c.details ?? {},
  }));
  const failed = checks.filter((c) => !c.passed).map((c) => c.name);
  return {
    reality_green: r.reality_green,
    total_checks: checks.length,
    passed_checks: checks.length - failed.length,
    failed_checks: failed,
    checks,
    timestamp: r.timestamp ?? null,
  };
}

/** Call one tool by id. Unknown ids and wrong arguments raise OAToolError. */
export async function callOATool(ws: OAWorkspace, id: string, args: string[] = []): Promise<unknown> {
  if (!isOAToolId(id))
    throw new OAToolError("oa_unknown_tool", `unknown OA tool "${id}" (tools: ${OA_TOOL_IDS.join(", ")})`, {
      kind: "usage",
    });
  if (id === "oa.guard.run") {
    if (args.length !== 1 || !args[0])
      throw new OAToolError(
        "oa_tool_arguments",
        `oa.guard.run takes one guard name (registered guards: ${guardNames(ws).join(", ")})`,
        { kind: "usage" },
      );
    return runRegisteredGuard(ws, args[0]);
  }
  if (args.length > 0)
    throw new OAToolError("oa_tool_arguments", `${id} takes no argument, got ${args.length}`, { kind: "usage" });
  switch (id) {
    case "oa.kernel_status":
      return kernelStatus(ws);
    case "oa.reality_check":
      return realityCheck(ws);
    case "oa.bootstrap_state":
      return surfaceTool(ws, "pm_bootstrap_state");
    case "oa.ssot_surface":
      return surfaceTool(ws, "ssot_surface");
    case "oa.reality_summary":
      return surfaceTool(ws, "reality_green_summary");
    case "oa.handoff_kernel":
      return surfaceTool(ws, "handoff_kernel");
  }
}
