import { join, relative, sep } from "node:path";
import { confinePath } from "../core/index.js";
import type { Config } from "../config/index.js";

export type OAConfig = Config["oa"];

/** Where one project's OA files live. Every path is confined to the project root. */
export interface OAWorkspace {
  root: string;
  oa: OAConfig;
  /** Absolute surfaces directory (config `oa.surfaces_dir`, default `share`). */
  surfacesDir: string;
  /** `share/orchestrator_assistant/STATE.json`, absolute. */
  statePath: string;
  /** `share/oa/CONTEXT.json`, absolute: the only file reasoning programs write. */
  contextPath: string;
}

export function oaWorkspace(root: string, oa: OAConfig): OAWorkspace {
  const surfacesDir = confinePath(root, oa.surfaces_dir, "oa.surfaces_dir");
  return {
    root,
    oa,
    surfacesDir,
    statePath: join(surfacesDir, "orchestrator_assistant", "STATE.json"),
    contextPath: join(surfacesDir, "oa", "CONTEXT.json"),
  };
}

/** A path as shown to users and written into STATE: relative to the root, with `/`. */
export function displayPath(ws: OAWorkspace, abs: string): string {
  return relative(ws.root, abs).split(sep).join("/") || ".";
}
