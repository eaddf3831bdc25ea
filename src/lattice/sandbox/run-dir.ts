/**
 * A run's supervisor-owned directory (the shims, the pmagent launcher, the sprite's HOME, the
 * violations log) and the command the launcher runs.
 */
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { sh, UnavailableError } from "../../core/index.js";
import { VIOLATIONS_FILE, ghShim, gitPrograms, gitShim } from "./git-guard.js";
import { realpathOr } from "./paths.js";
import { findExecutable } from "./processes.js";

function launcher(command: readonly string[]): string {
  return `#!/bin/sh
exec ${command.map(sh).join(" ")} "$@"
`;
}

function writeExecutable(path: string, text: string): void {
  if (existsSync(path) && readFileSync(path, "utf8") === text) return;
  writeFileSync(path, text, { mode: 0o755 });
  chmodSync(path, 0o755);
}

export interface RunDirs {
  shimDir: string;
  toolDir: string;
  home: string;
  violations: string;
  /** In a sandbox: the wrappers bound over the real programs (`source` over `dest`). */
  overlays: Array<{ source: string; dest: string }>;
}

/** The sprite's HOME in a run's directory: where an agent CLI keeps its session. */
export function runHome(runDir: string): string {
  return join(runDir, "home");
}

/** The real git's path inside the sandbox: a placeholder in the run's `bin/` the real binary is bound over. */
const REAL_GIT_IN_SANDBOX = ".real-git";

/**
 * Lay out a run's supervisor-owned directory: `bin/` (shims), `tools/` (pmagent launcher),
 * `home/` (the sprite's HOME: no user credentials), and the violations log the shims append to.
 * Sandboxed, the git wrapper calls the real git through a placeholder the sandbox binds it over,
 * and the wrappers are bound over every real git and gh program (see `overlays`).
 */
export function prepareRunDir(
  runDir: string,
  pmagentCommand: readonly string[],
  supervisorPath: string,
  options: { sandboxed?: boolean } = {},
): RunDirs {
  const dirs: RunDirs = {
    shimDir: join(runDir, "bin"),
    toolDir: join(runDir, "tools"),
    home: runHome(runDir),
    violations: join(runDir, VIOLATIONS_FILE),
    overlays: [],
  };
  for (const d of [dirs.shimDir, dirs.toolDir, dirs.home]) mkdirSync(d, { recursive: true });
  const realGit = findExecutable("git", supervisorPath, { skip: [dirs.shimDir] });
  const gitShimPath = join(dirs.shimDir, "git");
  const ghShimPath = join(dirs.shimDir, "gh");
  let gitInShim = realGit;
  if (options.sandboxed) {
    // Files the sandbox binds over must exist on the host.
    closeSync(openSync(dirs.violations, "a", 0o600));
    if (realGit) {
      gitInShim = join(dirs.shimDir, REAL_GIT_IN_SANDBOX);
      if (!existsSync(gitInShim)) writeFileSync(gitInShim, "", { mode: 0o755 });
      dirs.overlays.push({ source: realpathOr(realGit), dest: gitInShim });
      for (const p of gitPrograms(realGit)) dirs.overlays.push({ source: gitShimPath, dest: p });
    }
    const realGh = findExecutable("gh", supervisorPath, { skip: [dirs.shimDir] });
    if (realGh) dirs.overlays.push({ source: ghShimPath, dest: realpathOr(realGh) });
  }
  writeExecutable(gitShimPath, gitShim(gitInShim, dirs.violations));
  writeExecutable(ghShimPath, ghShim(dirs.violations));
  writeExecutable(join(dirs.toolDir, "pmagent"), launcher(pmagentCommand));
  return dirs;
}

/**
 * The command that runs this pmagent: the node binary and the CLI script this process was started
 * from, else the package's own bin (its package.json, the first one up from this file: the same
 * from tsc's output, the bundled CLI's chunks and the sources).
 */
export function selfCommand(): string[] {
  const script = process.argv[1];
  if (script && /main\.(js|ts)$/.test(script)) return [process.execPath, resolve(script)];
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, "package.json")) && dirname(dir) !== dir) dir = dirname(dir);
  const { bin } = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { bin?: { pmagent?: string } };
  if (typeof bin?.pmagent !== "string")
    throw new UnavailableError(
      "sandbox_unavailable",
      `cannot find pmagent's bin (${join(dir, "package.json")} names none): pass the supervisor's pmagentCommand`,
    );
  return [process.execPath, join(dir, bin.pmagent)];
}
