/**
 * `pmagent oa init`: a starting set of kernel surfaces for a repository that has none, derived
 * from the repository itself (branch from git, phase from config, a reality summary from the
 * configured checks), then the first STATE.json. OA never overwrites kernel surfaces it did not
 * write: only files marked `generated_by: "pmagent oa init"` are refreshed.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Redactor, UsageError, isSecretEnvName, nowIso, secretsFromEnv, writeFileAtomic } from "../core/index.js";
import { OASurfaceError } from "./errors.js";
import { writeSnapshot } from "./snapshot.js";
import { EMPTY_OA_CONTEXT, SURFACES, surfacePath, type SurfaceName } from "./surfaces.js";
import { displayPath, type OAWorkspace } from "./workspace.js";

export const INIT_MARK = "pmagent oa init";
const TAIL = 400;

export interface InitCheck {
  name: string;
  command: string[];
  timeout_ms: number;
}

export interface OAInitOptions {
  /** Overrides: the branch (default: git's current branch) and the phase (default: oa.phase, else "1"). */
  branch?: string;
  phase?: string;
  clock?: () => number;
}

export interface OAInitResult {
  written: string[];
  branch: string;
  phase: string;
  reality_green: boolean;
  checks: Array<{ name: string; passed: boolean; message: string }>;
  state: string;
}

/** The checks of `oa.checks`, else package.json's test script as "Tests", else none. */
export function initChecks(ws: OAWorkspace): InitCheck[] {
  if (ws.oa.checks)
    return Object.entries(ws.oa.checks).map(([name, c]) => ({ name, command: c.command, timeout_ms: c.timeout_ms }));
  try {
    const pkg = JSON.parse(readFileSync(join(ws.root, "package.json"), "utf8")) as {
      scripts?: Record<string, unknown>;
    };
    if (typeof pkg.scripts?.test === "string")
      return [{ name: "Tests", command: ["npm", "test", "--silent"], timeout_ms: 600_000 }];
  } catch {
    // No package.json (or not JSON): no default check.
  }
  return [];
}

/** The current branch, from git. */
export function gitBranch(root: string): string {
  const r = spawnSync("git", ["rev-parse", "--abbrev-ref", "HEAD"], { cwd: root, encoding: "utf8" });
  const branch = r.status === 0 ? r.stdout.trim() : "";
  if (branch === "" || branch === "HEAD") {
    throw new UsageError(
      "oa_branch_unknown",
      branch === "HEAD"
        ? `cannot determine the branch: ${root} is on a detached HEAD; check out a branch or pass --branch NAME`
        : `cannot determine the branch: ${root} is not a git repository with a commit (git init && git commit), or pass --branch NAME`,
    );
  }
  return branch;
}

/** Run one check: passed when it exits 0; the message ends with the last output it printed. */
function runCheck(
  root: string,
  check: InitCheck,
  redactor: Redactor,
): Promise<{ name: string; passed: boolean; message: string; details: Record<string, unknown> }> {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !isSecretEnvName(k)));
  return new Promise((resolve) => {
    const [file, ...args] = check.command as [string, ...string[]];
    const child = spawn(file, args, { cwd: root, env, shell: false, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    const keep = (d: Buffer) => {
      out = (out + d.toString("utf8")).slice(-TAIL);
    };
    child.stdout.on("data", keep);
    child.stderr.on("data", keep);
    let done = false;
    const finish = (passed: boolean, why: string, exit: number | null) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      const last = redactor.redact(out.trim().split("\n").slice(-1)[0] ?? "");
      resolve({
        name: check.name,
        passed,
        message: last ? `${why}: ${last}` : why,
        details: { command: check.command.join(" "), exit_code: exit },
      });
    };
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      finish(false, `did not finish within ${check.timeout_ms} ms`, null);
    }, check.timeout_ms);
    child.on("error", (err) =>
      finish(false, `cannot start ${file}: ${(err as NodeJS.ErrnoException).code ?? err.message}`, null),
    );
    child.on("close", (code) => finish(code === 0, `exit ${code ?? "signal"}`, code));
  });
}

function writtenByInit(ws: OAWorkspace, name: SurfaceName): boolean {
  try {
    return (
      (JSON.parse(readFileSync(surfacePath(ws, name), "utf8")) as { generated_by?: unknown }).generated_by === INIT_MARK
    );
  } catch {
    return false;
  }
}

export async function initSurfaces(ws: OAWorkspace, options: OAInitOptions = {}): Promise<OAInitResult> {
  const names: SurfaceName[] = ["pm_bootstrap_state", "ssot_surface", "reality_green_summary"];
  const foreign = names.filter((n) => existsSync(surfacePath(ws, n)) && !writtenByInit(ws, n));
  if (foreign.length > 0) {
    throw new OASurfaceError(
      "oa_surfaces_exist",
      `kernel surfaces already exist and were not written by pmagent oa init: ${foreign.map((n) => displayPath(ws, surfacePath(ws, n))).join(", ")}; OA does not overwrite them (run \`pmagent oa snapshot\` to use them, or remove them first)`,
    );
  }
  const branch = options.branch ?? gitBranch(ws.root);
  const phase = options.phase ?? (ws.oa.phase === undefined ? "1" : String(ws.oa.phase));
  const at = nowIso(options.clock);
  const redactor = new Redactor(secretsFromEnv());
  const checks = [];
  for (const c of initChecks(ws)) checks.push(await runCheck(ws.root, c, redactor));
  if (checks.length === 0) {
    // No check proves anything: reality stays unproven (DEGRADED) until one is configured.
    checks.push({
      name: "Checks configured",
      passed: false,
      message:
        "no checks: add oa.checks to pmagent.config.json (e.g. the test command), then run pmagent oa init again",
      details: {},
    });
  }
  const green = checks.every((c) => c.passed);

  const surfaces: Array<[SurfaceName, unknown]> = [
    [
      "pm_bootstrap_state",
      {
        version: 1,
        generated_by: INIT_MARK,
        generated_at: at,
        branch,
        meta: { current_phase: phase, generated_by: INIT_MARK },
        health: { reality_green: green },
      },
    ],
    [
      "ssot_surface",
      {
        version: 17,
        generated_by: INIT_MARK,
        generated_at: at,
        current_phase: phase,
        last_completed_phase: null,
        references: [],
      },
    ],
    ["reality_green_summary", { generated_by: INIT_MARK, timestamp: at, branch, reality_green: green, checks }],
  ];
  const written: string[] = [];
  for (const [name, value] of surfaces) {
    writeFileAtomic(surfacePath(ws, name), `${JSON.stringify(value, null, 2)}\n`);
    written.push(displayPath(ws, surfacePath(ws, name)));
  }
  if (!existsSync(ws.contextPath)) {
    writeFileAtomic(ws.contextPath, `${JSON.stringify(EMPTY_OA_CONTEXT, null, 2)}\n`);
    written.push(displayPath(ws, ws.contextPath));
  }
  const snapshot = writeSnapshot(ws, options.clock);
  return {
    written,
    branch,
    phase,
    reality_green: green,
    checks: checks.map(({ name, passed, message }) => ({ name, passed, message })),
    state: snapshot.path,
  };
}

/** The surface files init writes, for messages. */
export const INIT_SURFACE_FILES = [
  SURFACES.pm_bootstrap_state.file,
  SURFACES.ssot_surface.file,
  SURFACES.reality_green_summary.file,
];
