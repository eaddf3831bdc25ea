import { readFileSync } from "node:fs";
import { sha256Hex, writeFileAtomic, nowIso, formatZodIssues } from "../core/index.js";
import { OASurfaceError } from "./errors.js";
import { computeKernel } from "./kernel.js";
import { PROGRAM_IDS } from "./programs/io.js";
import {
  OA_STATE_VERSION,
  OAStateReadSchema,
  OAStateSchema,
  type OAState,
  type OAStateRead,
  type SurfaceStatus,
} from "./schemas.js";
import { OA_TOOL_IDS, PROGRAM_TOOL_IDS } from "./tool-ids.js";
import {
  OA_INIT_COMMAND,
  REQUIRED_SURFACES,
  SURFACES,
  contextOf,
  describeProblem,
  loadSurfaces,
  noKernelSurfaces,
  surfaceList,
  type SurfaceSet,
} from "./surfaces.js";
import { displayPath, type OAWorkspace } from "./workspace.js";

/** Refuse (exit 1) when a required surface is missing or invalid, naming each file, its problem and the fix. */
export function assertRequiredSurfaces(set: SurfaceSet): void {
  const bad = surfaceList(set).filter((s) => s.status.required && s.status.status !== "ok");
  if (bad.length === 0) return;
  const allMissing = bad.every((s) => s.status.status === "missing");
  const fix = noKernelSurfaces(set)
    ? `this repository has no kernel surfaces yet: run \`${OA_INIT_COMMAND}\` to write a starting set derived from it (branch from git, phase from config, reality from the configured checks)`
    : allMissing
      ? `restore ${bad.length > 1 ? "them" : "it"} (the kernel writes ${REQUIRED_SURFACES.map((n) => SURFACES[n].file).join(", ")}), or run \`${OA_INIT_COMMAND}\` if it wrote the others`
      : `fix ${bad.length > 1 ? "them" : "it"} so that ${bad.length > 1 ? "they match" : "it matches"} the surface's fields, or regenerate ${bad.length > 1 ? "them" : "it"}`;
  throw new OASurfaceError(
    allMissing ? "oa_surface_missing" : "oa_surface_invalid",
    `required kernel surface${bad.length > 1 ? "s" : ""} missing or invalid:\n  ${bad.map((s) => describeProblem(s.status)).join("\n  ")}\n${fix}`,
    { surfaces: bad.map((s) => s.status) },
  );
}

/** The data model's `dms_hint_summary`: counts from the reality check that reports DMS hints. */
export function dmsHintSummary(checks: ReadonlyArray<{ name: string; details?: unknown }>): {
  total_hints: number;
  flows_with_hints: number;
} {
  const count = (v: unknown) => (typeof v === "number" && Number.isInteger(v) && v >= 0 ? v : 0);
  for (const c of checks) {
    if (!/dms hint/i.test(c.name) || c.details === null || typeof c.details !== "object") continue;
    const d = c.details as Record<string, unknown>;
    return { total_hints: count(d.total_hints), flows_with_hints: count(d.flows_with_hints) };
  }
  return { total_hints: 0, flows_with_hints: 0 };
}

/** The normalized OA state of the spec's `pmagent oa snapshot`, from already loaded surfaces. */
export function buildState(ws: OAWorkspace, set: SurfaceSet, clock: () => number = Date.now): OAState {
  assertRequiredSurfaces(set);
  const kernel = computeKernel(set);
  const surfaces: Record<string, string> = {};
  const surfaceStatus: Record<string, boolean> = {};
  const surfaceDetails: Record<string, SurfaceStatus> = {};
  for (const s of surfaceList(set)) {
    // `surfaces` lists what the state was built from: an absent optional surface is not referenced,
    // and not marked false in surface_status either (the origin's guard notes every false one).
    if (s.status.required || s.status.status !== "missing") {
      surfaces[s.name] = s.status.path;
      surfaceStatus[s.name] = s.status.status === "ok";
    }
    surfaceDetails[s.name] = s.status;
  }
  return OAStateSchema.parse({
    version: OA_STATE_VERSION,
    source: "kernel",
    generated_at: nowIso(clock),
    branch: kernel.branch,
    current_phase: kernel.phase,
    last_completed_phase: kernel.last_completed_phase,
    reality_green: kernel.reality_green,
    checks_summary: kernel.checks.map((c) => ({ name: c.name, passed: c.passed })),
    dms_hint_summary: dmsHintSummary(set.reality.data?.checks ?? []),
    surfaces,
    surface_status: surfaceStatus,
    surface_details: surfaceDetails,
    surfaces_dir: displayPath(ws, ws.surfacesDir),
    kernel_mode: kernel.mode,
    mode_reasons: kernel.reasons,
    oa_context: contextOf(set).context,
    oa_tools: { version: 1, tools: [...OA_TOOL_IDS] },
    reasoning_bridge: {
      version: 1,
      programs: [...PROGRAM_IDS],
      tools_allowed: Object.fromEntries(PROGRAM_IDS.map((id) => [id, [...PROGRAM_TOOL_IDS[id]]])),
    },
  });
}

/** Build the state and write it atomically to share/orchestrator_assistant/STATE.json. */
export function writeSnapshot(
  ws: OAWorkspace,
  clock: () => number = Date.now,
): { success: true; path: string; state: OAState } {
  const state = buildState(ws, loadSurfaces(ws), clock);
  writeFileAtomic(ws.statePath, `${JSON.stringify(state, null, 2)}\n`);
  return { success: true, path: displayPath(ws, ws.statePath), state };
}

/** The STATE.json the guard compares with the kernel; its own status says whether it could be read. */
export function readState(ws: OAWorkspace): { status: SurfaceStatus; state: OAStateRead | undefined } {
  const path = displayPath(ws, ws.statePath);
  const status = (s: SurfaceStatus["status"], problem: string | null, sha256: string | null = null): SurfaceStatus => ({
    path,
    required: true,
    status: s,
    sha256,
    problem,
  });
  let text: string;
  try {
    text = readFileSync(ws.statePath, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return {
      status: status(
        code === "ENOENT" ? "missing" : "invalid",
        code === "ENOENT" ? "file not found" : `cannot read the file (${code})`,
      ),
      state: undefined,
    };
  }
  const sha = sha256Hex(text);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    return { status: status("invalid_json", `not valid JSON: ${(err as Error).message}`, sha), state: undefined };
  }
  const parsed = OAStateReadSchema.safeParse(json);
  if (!parsed.success)
    return { status: status("invalid", formatZodIssues(parsed.error).join("; "), sha), state: undefined };
  return { status: status("ok", null, sha), state: parsed.data };
}
