/** What one run's sandbox shows and hides: the policy `sandboxArgv` applies. */
import { existsSync, statSync } from "node:fs";
import { delimiter, dirname, isAbsolute, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { Project } from "../../config/index.js";
import type { SandboxSpec } from "./bwrap.js";
import { realpathOr } from "./paths.js";
import type { RunDirs } from "./run-dir.js";

export interface RunSandboxInput {
  bwrap: string;
  project: Project;
  /** The SQLite file of the store (null for PostgreSQL). */
  storeFile: string | null;
  workspace: string;
  checkpointDir: string;
  dirs: RunDirs;
  /** How the sprite runs pmagent, and its own argv: their files stay visible. */
  pmagentCommand: readonly string[];
  command: readonly string[];
  /** The supervisor's HOME (its credentials: ~/.ssh, ~/.config/gh, ~/.git-credentials). */
  home: string | undefined;
  /** The entry's payload: the artifacts it references stay readable (see artifactPaths). */
  entryPayload?: unknown;
  /** The sprite's PATH: its directories stay visible under a hidden HOME (tools installed in ~/.local/bin, nvm's node). */
  path?: string;
  /** The network for this run (an accepted enable_network_access), else the config's `sandbox_network`. */
  network?: "host" | "none";
}

/** The package a script belongs to (nearest directory with package.json) and its node_modules, or the file itself. */
function packageOf(file: string): string[] {
  for (let dir = dirname(file); dir !== dirname(dir); dir = dirname(dir)) {
    if (existsSync(join(dir, "package.json"))) return [dir, join(dir, "node_modules")];
  }
  return [file];
}

/**
 * What an entry's artifact references point to in earlier runs' workspaces (`payload.refs[]` of
 * type artifact, which the supervisor posts from a run's ARTIFACT events): the next role reads
 * them, so they stay visible, read-only. A `ref` that is a regular file under
 * `.pmagent/workspaces/` outside any `.lattice/` directory (outboxes, resume.json), and for a
 * `file:` URL naming a workspace (a branch to fetch), that workspace's `.git` only. Symlinks are
 * resolved first: whoever wrote the entry cannot make the secrets file, the store or another
 * run's resume visible.
 */
export function artifactPaths(payload: unknown, root: string): string[] {
  const raw = (payload as { refs?: unknown } | null)?.refs;
  // The list form, or the roles contract's object form with the list under `artifacts`.
  const refs = Array.isArray(raw) ? raw : (raw as { artifacts?: unknown } | null | undefined)?.artifacts;
  if (!Array.isArray(refs)) return [];
  const workspaces = realpathOr(join(root, ".pmagent", "workspaces"));
  const out: string[] = [];
  for (const r of refs as Array<{ type?: unknown; ref?: unknown; url?: unknown; run_id?: unknown } | null>) {
    if (r?.type !== "artifact") continue;
    try {
      // A repository-relative file is read from the workspace of the run that made it.
      const path =
        typeof r.ref !== "string"
          ? null
          : isAbsolute(r.ref)
            ? r.ref
            : typeof r.run_id === "string" && /^[\w.-]+$/.test(r.run_id)
              ? join(workspaces, r.run_id, r.ref)
              : null;
      if (path !== null) {
        const file = realpathOr(path);
        if (file.startsWith(`${workspaces}/`) && !file.split("/").includes(".lattice") && statSync(file).isFile())
          out.push(file);
      }
      if (typeof r.url === "string" && r.url.startsWith("file:")) {
        const repo = realpathOr(fileURLToPath(r.url));
        if (dirname(repo) === workspaces && statSync(join(repo, ".git")).isDirectory()) out.push(join(repo, ".git"));
      }
    } catch {
      // gone or not a path: the sprite reports what it misses
    }
  }
  return out;
}

/** The supervisor's HOME as the sandbox hides it (its real path); null when unset or "/". */
function hiddenHome(home: string | undefined): string | null {
  return home && resolve(home) !== "/" ? realpathOr(resolve(home)) : null;
}

/**
 * What no sprite may see, nor anything the supervisor runs on what a sprite made: the project's
 * `.pmagent` (other runs, checkpoints, tools), the forge, the secrets file, the store's files and
 * the supervisor's HOME (its credentials: ~/.ssh, ~/.config/gh, ~/.git-credentials).
 */
export function hiddenFromSprites(project: Project, storeFile: string | null, home: string | undefined): string[] {
  const { root, config } = project;
  const hidden = [join(root, ".pmagent"), resolve(root, config.forge.bare_repo)];
  if (config.secrets.file) hidden.push(resolve(root, config.secrets.file));
  if (storeFile) hidden.push(...["", "-wal", "-shm", "-journal"].map((s) => storeFile + s));
  const h = hiddenHome(home);
  if (h) hidden.push(h);
  return hidden;
}

/** Programs under the hidden HOME that stay runnable: the PATH's directories there, and node's own prefix (nvm). */
function runnableUnderHome(home: string | undefined, path: string | undefined): string[] {
  const h = hiddenHome(home);
  const underHome = (p: string) => h !== null && realpathOr(p).startsWith(`${h}/`);
  return [
    ...(path ?? "").split(delimiter).filter((d) => isAbsolute(d) && underHome(d)),
    ...[dirname(dirname(process.execPath))].filter(underHome),
  ];
}

/** What one run's sandbox shows and hides. */
export function runSandbox(input: RunSandboxInput): SandboxSpec {
  const root = input.project.root;
  const files = [...input.pmagentCommand, ...input.command].filter((a) => isAbsolute(a) && existsSync(a));
  return {
    bwrap: input.bwrap,
    workspace: input.workspace,
    writable: [input.checkpointDir, input.dirs.home, input.dirs.violations],
    // Tools accepted environment changes installed (under the hidden .pmagent) stay runnable.
    readable: [
      root,
      join(root, ".pmagent", "tools"),
      input.dirs.shimDir,
      input.dirs.toolDir,
      ...files.flatMap(packageOf).map(realpathOr),
      ...artifactPaths(input.entryPayload, root),
      ...runnableUnderHome(input.home, input.path),
    ],
    hidden: hiddenFromSprites(input.project, input.storeFile, input.home),
    overlays: input.dirs.overlays,
    network: input.network ?? input.project.config.sandbox_network,
  };
}

/** A sandbox for a program the supervisor runs on what a sprite made (an installer, git reading a workspace). */
export interface HelperSandboxInput {
  bwrap: string;
  /** What it must not see (hiddenFromSprites). */
  hidden: string[];
  /** The supervisor's HOME and PATH: programs under the hidden HOME stay runnable. */
  home: string | undefined;
  path: string | undefined;
  /** Where it runs: writable, and its working directory. */
  workspace: string;
  writable?: string[];
  readable?: string[];
  network: "host" | "none";
}

/** A sprite's view of this machine, and no more: the hidden paths covered, only `workspace` and `writable` writable. */
export function helperSandbox(input: HelperSandboxInput): SandboxSpec {
  return {
    bwrap: input.bwrap,
    workspace: input.workspace,
    writable: input.writable ?? [],
    readable: [...(input.readable ?? []), ...runnableUnderHome(input.home, input.path)],
    hidden: input.hidden,
    overlays: [],
    network: input.network,
  };
}
