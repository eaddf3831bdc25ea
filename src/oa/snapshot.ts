import { readFileSync } from "node:fs";
import { sha256Hex, writeFileAtomic, nowIso, formatZodIssues } from "../core/index.js";
import { OASurfaceError } from "./errors.js";
import { computeKernel } from "./kernel.js";
import { OA_STATE_VERSION, OAStateSchema, type OAState, type SurfaceStatus } from "./schemas.js";
import { REQUIRED_SURFACES, SURFACES, contextOf, describeProblem, loadSurfaces, surfaceList, type SurfaceSet } from "./surfaces.js";
import { displayPath, type OAWorkspace } from "./workspace.js";

/** Refuse (exit 1) when a required surface is missing or invalid, naming each file and its problem. */
export function assertRequiredSurfaces(set: SurfaceSet): void {
  const bad = surfaceList(set).filter((s) => s.status.required && s.status.status !== "ok");
  if (bad.length === 0) return;
  const allMissing = bad.every((s) => s.status.status === "missing");
  throw new OASurfaceError(
    allMissing ? "oa_surface_missing" : "oa_surface_invalid",
    `required kernel surface${bad.length > 1 ? "s" : ""} missing or invalid:\n  ${bad.map((s) => describeProblem(s.status)).join("\n  ")}\n` +
      `(OA reads ${REQUIRED_SURFACES.map((n) => SURFACES[n].file).join(", ")} from oa.surfaces_dir; fix or regenerate them)`,
    { surfaces: bad.map((s) => s.status) },
  );
}

/** The normalized OA state of the spec's `pmagent oa snapshot`, from already loaded surfaces. */
export function buildState(ws: OAWorkspace, set: SurfaceSet, clock: () => number = Date.now): OAState {
  assertRequiredSurfaces(set);
  const kernel = computeKernel(set);
  const surfaces: Record<string, string> = {};
  const surfaceStatus: Record<string, SurfaceStatus> = {};
  for (const s of surfaceList(set)) {
    surfaces[s.name] = s.status.path;
    surfaceStatus[s.name] = s.status;
  }
  return OAStateSchema.parse({
    version: OA_STATE_VERSION,
    source: displayPath(ws, ws.surfacesDir),
    generated_at: nowIso(clock),
    branch: kernel.branch,
    current_phase: kernel.phase,
    last_completed_phase: kernel.last_completed_phase,
    reality_green: kernel.reality_green,
    checks_summary: kernel.checks.map((c) => ({ name: c.name, passed: c.passed })),
    kernel_mode: kernel.mode,
    mode_reasons: kernel.reasons,
    surfaces,
    surface_status: surfaceStatus,
    oa_context: contextOf(set).context,
  });
}

/** Build the state and write it atomically to share/orchestrator_assistant/STATE.json. */
export function writeSnapshot(ws: OAWorkspace, clock: () => number = Date.now): { success: true; path: string; state: OAState } {
  const state = buildState(ws, loadSurfaces(ws), clock);
  writeFileAtomic(ws.statePath, `${JSON.stringify(state, null, 2)}\n`);
  return { success: true, path: displayPath(ws, ws.statePath), state };
}

/** The STATE.json the guard compares with the kernel; its own status says whether it could be read. */
export function readState(ws: OAWorkspace): { status: SurfaceStatus; state: OAState | undefined } {
  const path = displayPath(ws, ws.statePath);
  const status = (s: SurfaceStatus["status"], problem: string | null, sha256: string | null = null): SurfaceStatus => ({ path, required: true, status: s, sha256, problem });
  let text: string;
  try {
    text = readFileSync(ws.statePath, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return { status: status(code === "ENOENT" ? "missing" : "invalid", code === "ENOENT" ? "file not found" : `cannot read the file (${code})`), state: undefined };
  }
  const sha = sha256Hex(text);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    return { status: status("invalid_json", `not valid JSON: ${(err as Error).message}`, sha), state: undefined };
  }
  const parsed = OAStateSchema.safeParse(json);
  if (!parsed.success) return { status: status("invalid", formatZodIssues(parsed.error).join("; "), sha), state: undefined };
  return { status: status("ok", null, sha), state: parsed.data };
}
