import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { z } from "zod";
import { Redactor, formatZodIssues, secretsFromEnv, sha256Hex } from "../core/index.js";
import {
  HandoffKernelSchema,
  OAContextFileSchema,
  PmBootstrapStateSchema,
  RealityGreenSummarySchema,
  SsotSurfaceSchema,
  type OAContextFile,
  type SurfaceStatus,
} from "./schemas.js";
import { displayPath, type OAWorkspace } from "./workspace.js";

/** The kernel surfaces of DESIGN.md §2, by the name OA uses for them. */
export const SURFACES = {
  pm_bootstrap_state: { file: "PM_BOOTSTRAP_STATE.json", required: true, schema: PmBootstrapStateSchema },
  ssot_surface: { file: "SSOT_SURFACE_V17.json", required: true, schema: SsotSurfaceSchema },
  reality_green_summary: { file: "REALITY_GREEN_SUMMARY.json", required: true, schema: RealityGreenSummarySchema },
  handoff_kernel: { file: "HANDOFF_KERNEL.json", required: false, schema: HandoffKernelSchema },
  oa_context: { file: "oa/CONTEXT.json", required: false, schema: OAContextFileSchema },
} as const;

export type SurfaceName = keyof typeof SURFACES;
export const SURFACE_NAMES = Object.keys(SURFACES) as SurfaceName[];
export const REQUIRED_SURFACES = SURFACE_NAMES.filter((n) => SURFACES[n].required);

export type SurfaceData<N extends SurfaceName> = z.output<(typeof SURFACES)[N]["schema"]>;

export interface LoadedSurface<N extends SurfaceName> {
  name: N;
  status: SurfaceStatus;
  /** Present only when status is "ok". */
  data: SurfaceData<N> | undefined;
  /** The file's JSON as written, before defaults (present only when status is "ok"). */
  raw?: unknown;
}

export interface SurfaceSet {
  bootstrap: LoadedSurface<"pm_bootstrap_state">;
  ssot: LoadedSurface<"ssot_surface">;
  reality: LoadedSurface<"reality_green_summary">;
  handoff: LoadedSurface<"handoff_kernel">;
  context: LoadedSurface<"oa_context">;
}

export const EMPTY_OA_CONTEXT: OAContextFile = {
  version: 1,
  context: { active_goal: null, kernel_mode: null, constraints: [], pending_ops_blocks: [], session_metadata: {} },
};

export function surfacePath(ws: OAWorkspace, name: SurfaceName): string {
  return join(ws.surfacesDir, SURFACES[name].file);
}

/** Read and validate one surface; never throws: problems are reported in its status. */
export function loadSurface<N extends SurfaceName>(ws: OAWorkspace, name: N): LoadedSurface<N> {
  const abs = surfacePath(ws, name);
  const base = { path: displayPath(ws, abs), required: SURFACES[name].required };
  const fail = (status: SurfaceStatus["status"], problem: string, sha256: string | null = null): LoadedSurface<N> => ({
    name,
    status: { ...base, status, sha256, problem },
    data: undefined,
  });
  let bytes: Buffer;
  try {
    bytes = readFileSync(abs);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return code === "ENOENT"
      ? fail("missing", "file not found")
      : fail("invalid", `cannot read the file (${code ?? (err as Error).message})`);
  }
  const sha256 = sha256Hex(bytes);
  let json: unknown;
  try {
    json = JSON.parse(bytes.toString("utf8"));
  } catch (err) {
    // JSON.parse quotes the text around the error: redact it, surfaces may sit beside secrets.
    return fail(
      "invalid_json",
      `not valid JSON: ${new Redactor(secretsFromEnv()).redact((err as Error).message)}`,
      sha256,
    );
  }
  const parsed = SURFACES[name].schema.safeParse(json);
  if (!parsed.success) return fail("invalid", formatZodIssues(parsed.error).join("; "), sha256);
  return {
    name,
    status: { ...base, status: "ok", sha256, problem: null },
    data: parsed.data as SurfaceData<N>,
    raw: json,
  };
}

export function loadSurfaces(ws: OAWorkspace): SurfaceSet {
  return {
    bootstrap: loadSurface(ws, "pm_bootstrap_state"),
    ssot: loadSurface(ws, "ssot_surface"),
    reality: loadSurface(ws, "reality_green_summary"),
    handoff: loadSurface(ws, "handoff_kernel"),
    context: loadSurface(ws, "oa_context"),
  };
}

export function surfaceList(set: SurfaceSet): Array<LoadedSurface<SurfaceName>> {
  return [set.bootstrap, set.ssot, set.reality, set.handoff, set.context];
}

/** The OA context: CONTEXT.json when it is valid, else the empty context. */
export function contextOf(set: SurfaceSet): OAContextFile {
  return set.context.data ?? EMPTY_OA_CONTEXT;
}

/** A one-line description of a surface problem, naming the file: for errors and diagnostics. */
export function describeProblem(status: SurfaceStatus): string {
  return `${status.path}: ${status.problem ?? status.status}`;
}

/** The one command that gives a repository without kernel surfaces a starting set. */
export const OA_INIT_COMMAND = "pmagent oa init";

/** True when none of the required surfaces exists: a first run, which `pmagent oa init` fixes. */
export function noKernelSurfaces(set: SurfaceSet): boolean {
  return surfaceList(set).every((s) => !s.status.required || s.status.status === "missing");
}
