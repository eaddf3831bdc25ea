import { cpSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach } from "vitest";
import { loadProject, type Config } from "../../src/config/index.js";
import { oaWorkspace, type OAWorkspace } from "../../src/oa/index.js";

export const FIXTURES = fileURLToPath(new URL("../fixtures/oa/", import.meta.url));

export type FixtureName =
  | "normal"
  | "degraded-reality-red"
  | "degraded-failing-check"
  /** Copies of branch / phase disagree where the origin's guard does not look: NORMAL, with a hint. */
  | "hint-branch-mismatch"
  | "hint-phase-mismatch"
  /** The bootstrap's health.dms_alignment_ok false while the summary's DMS Alignment passes. */
  | "degraded-health-mismatch"
  /** The bootstrap's legacy meta.dms_share_alignment "BROKEN" while the summary's DMS Alignment passes. */
  | "degraded-legacy-dms"
  | "blocked-missing-surface"
  | "blocked-invalid-json"
  | "blocked-wrong-types"
  /** The origin's shapes: the bootstrap's (stale) health says reality_green false, the summary true; STATE.json written by the origin. NORMAL. */
  | "origin-reality-conflict";

export interface TestProject {
  root: string;
  config: Config;
  ws: OAWorkspace;
  share: string;
}

const made: string[] = [];
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/**
 * A project directory with pmagent.config.json and a fixture's surfaces copied to `surfaces_dir`
 * (fixture null: no surfaces at all). Removed after each test.
 */
export function makeProject(fixture: FixtureName | null, oa: Record<string, unknown> = {}): TestProject {
  const root = mkdtempSync(join(tmpdir(), "pmagent-oa-"));
  made.push(root);
  const surfacesDir = typeof oa.surfaces_dir === "string" ? oa.surfaces_dir : "share";
  if (fixture !== null) cpSync(join(FIXTURES, fixture, "share"), join(root, surfacesDir), { recursive: true });
  const config = {
    project_id: "oa-test",
    lanes: [
      {
        layer: "layer_b",
        name: "doc_update",
        roles: [{ name: "Aya", allowed_kinds: ["doc_update_proposal_request"] }],
      },
    ],
    oa,
  };
  writeFileSync(join(root, "pmagent.config.json"), JSON.stringify(config, null, 2));
  const p = loadProject({ cwd: root });
  return { root, config: p.config, ws: oaWorkspace(root, p.config.oa), share: join(root, surfacesDir) };
}

/** Overwrite one surface file of a test project (JSON value, or raw text). */
export function writeSurface(project: TestProject, file: string, value: unknown): void {
  writeFileSync(join(project.share, file), typeof value === "string" ? value : `${JSON.stringify(value, null, 2)}\n`);
}
