/**
 * What a sprite runs inside: a scrubbed environment (an allow-list, never a token), shims first on
 * its PATH that refuse `git push`, remote edits and `gh` and record the attempt as a hard-rule
 * violation, then the directory of a `pmagent` launcher (for `pmagent emit` and `pmagent
 * checkpoint`), then the supervisor's PATH. Where bubblewrap is there (config `sandbox`), the
 * sprite also runs in a bwrap sandbox (`sandboxArgv`): the shims are bound over the real git and
 * gh, and what the sprite must not reach is not visible, so no push succeeds whatever path it takes.
 */
import { spawnSync } from "node:child_process";
import {
  chmodSync,
  closeSync,
  existsSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { delimiter, dirname, isAbsolute, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { Project } from "../../config/index.js";
import { UnavailableError, UsageError, isSecretEnvName } from "../../core/index.js";
import { findExecutable } from "./processes.js";
import { openRegularFile } from "../protocol/index.js";

/** Variables passed through from the supervisor's environment; everything else is dropped. */
export const ENV_ALLOW_LIST = ["PATH", "LANG", "LANGUAGE", "TZ", "TERM", "USER", "LOGNAME", "SHELL", "TMPDIR", "NODE_OPTIONS"] as const;
const ALLOW_PREFIXES = ["LC_"];

export const VIOLATIONS_FILE = "violations.log";

/** Token-shaped values are never passed, whatever their name. */
function looksLikeToken(value: string): boolean {
  return /\b(gh[pousr]_[A-Za-z0-9]{20,}|github_pat_|sk-[A-Za-z0-9_-]{20,}|xox[abposr]-|AKIA[0-9A-Z]{16})/.test(value);
}

/** Refuse extra variables (config `runner.env`, accepted adjustments) whose names look secret. */
export function checkExtraEnv(env: Record<string, string>, source: string): void {
  for (const name of Object.keys(env)) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new UsageError("invalid_sprite_env", `${source}: "${name}" is not a valid environment variable name`);
    if (isSecretEnvName(name) || looksLikeToken(env[name] ?? "")) {
      throw new UsageError(
        "secret_in_sprite_env",
        `${source}: ${name} looks like a secret; sprites never hold credentials (ask for one with ACTION_REQUEST FETCH_CREDENTIAL and a role allowed to have it)`,
      );
    }
  }
}

export interface SpriteEnvInput {
  base: NodeJS.ProcessEnv;
  shimDir: string;
  toolDir: string;
  home: string;
  lattice: Record<string, string>;
  extra: Record<string, string>;
}

export function spriteEnv(input: SpriteEnvInput): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(input.base)) {
    if (value === undefined) continue;
    const allowed = (ENV_ALLOW_LIST as readonly string[]).includes(name) || ALLOW_PREFIXES.some((p) => name.startsWith(p));
    if (allowed && !isSecretEnvName(name) && !looksLikeToken(value)) env[name] = value;
  }
  const rest = (env.PATH ?? "/usr/local/bin:/usr/bin:/bin").split(delimiter).filter((d) => d !== "" && resolve(d) !== resolve(input.shimDir));
  Object.assign(env, input.extra, input.lattice, {
    PATH: [input.shimDir, input.toolDir, ...rest].join(delimiter),
    HOME: input.home,
    // No credential prompts and no user or system git config with stored credentials.
    GIT_TERMINAL_PROMPT: "0",
    GIT_CONFIG_NOSYSTEM: "1",
    GH_PROMPT_DISABLED: "1",
  });
  return env;
}

const sh = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

function refuseFn(violations: string): string {
  return `refuse() {
  rule="$1"; what="$2"; shift 2
  printf '%s\\t%s\\n' "$rule" "$(printf '%s ' "$@" | tr '\\n\\t' '  ')" >> ${sh(violations)}
  echo "pmagent: $what is refused inside a sprite (hard rule: $rule). Lattice performs remote git and GitHub operations: emit an ACTION_REQUEST (e.g. OPEN_PR) instead." >&2
  exit 1
}`;
}

/** Builtins git never lets an alias replace: no alias lookup (one more git process) for them. */
const GIT_BUILTINS =
  "add|am|apply|bisect|blame|branch|cat-file|check-ref-format|checkout|cherry-pick|clean|clone|commit|commit-tree|config|describe|diff|diff-tree|fetch|for-each-ref|format-patch|gc|grep|hash-object|help|index-pack|init|log|ls-files|ls-remote|ls-tree|merge|merge-base|mktree|mv|pack-objects|pull|push|read-tree|rebase|receive-pack|reflog|remote|reset|restore|rev-list|rev-parse|rm|send-pack|show|show-ref|stash|status|switch|symbolic-ref|tag|unpack-objects|update-index|update-ref|upload-pack|var|version|worktree|write-tree";

/**
 * The git wrapper: on the sprite's PATH and, in the sandbox, bound over the real git binaries, so
 * `/usr/bin/git push`, `git-push` and a changed PATH reach it too. It finds the subcommand after
 * global options (`-c`, `-C`, `--git-dir`…), resolves aliases (`-c alias.p=push p`, or one in the
 * repository's config) and the dashed form (`git-push`, from its own name), and refuses pushes and
 * remote edits (`git remote [-v] add|set-url|…`, `git config remote.*.url|pushurl`,
 * `url.*.insteadOf`). Recording only: the sandbox is what makes a push fail whatever path it takes.
 */
function gitShim(realGit: string | undefined, violations: string): string {
  const run = realGit ? `exec ${sh(realGit)} "$@"` : `echo "pmagent: git is not installed" >&2; exit 127`;
  return `#!/bin/sh
# pmagent git wrapper: refuses git push and remote edits inside a sprite, passes everything else to git.
${refuseFn(violations)}
REAL=${sh(realGit ?? "git")}
q() { printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"; }
check() {
  depth="$1"; sub="$2"; shift 2
  case "$sub" in
    push|send-pack|http-push) refuse git_push "git $sub" "$sub" "$@" ;;
    remote)
      for a in "$@"; do
        case "$a" in
          -*) ;;
          add|set-url|remove|rm|rename|set-head|set-branches) refuse git_remote_edit "git remote $a" remote "$@" ;;
          *) break ;;
        esac
      done ;;
    config)
      # A write of a remote's URL: the key with a value, or --unset/--add/--replace-all of it.
      reading=0; writing=0; key=0; n=0; args="$*"
      while [ $# -gt 0 ]; do
        case "$(printf '%s' "$1" | tr 'A-Z' 'a-z')" in
          -f|--file|--blob|--type|--default|--comment) shift ;;
          --get|--get-all|--get-regexp|--get-urlmatch|-l|--list|get|list) reading=1 ;;
          --unset|--unset-all|--add|--replace-all|unset|set) writing=1 ;;
          -*) ;;
          remote.*.url|remote.*.pushurl|remote.*.push|remote.*.receivepack|url.*.insteadof|url.*.pushinsteadof) key=1; n=$((n + 1)) ;;
          *) n=$((n + 1)) ;;
        esac
        [ $# -gt 0 ] && shift
      done
      if [ "$key" = 1 ] && [ "$reading" = 0 ] && { [ "$writing" = 1 ] || [ "$n" -ge 2 ]; }; then refuse git_remote_edit "git config of a remote's URL" config "$args"; fi ;;
    ${GIT_BUILTINS}|"") ;;
    *)
      # An alias: git expands it to its value's words (a "!" alias runs a shell, whose git calls come here).
      case "$sub" in *[!A-Za-z0-9_.-]*) return ;; esac
      [ "$depth" -lt 8 ] || return
      value=$(eval "\\"\\$REAL\\" $g config --get \\"alias.\\$sub\\"" 2>/dev/null) || return
      case "$value" in !*|"") return ;; esac
      eval "check $((depth + 1)) $value \\"\\$@\\"" ;;
  esac
}
g=""
parse() {
  while [ $# -gt 0 ]; do
    case "$1" in
      -c|-C|--git-dir|--work-tree|--namespace|--config-env|--super-prefix) g="$g $1 $(q "\${2-}")"; shift; [ $# -gt 0 ] && shift ;;
      -*) g="$g $(q "$1")"; shift ;;
      *) break ;;
    esac
  done
  [ $# -gt 0 ] && check 0 "$@"
}
# Called as git-<command> (a dashed program in git's exec path): that is git <command>.
name="\${0##*/}"
case "$name" in git-*) set -- "\${name#git-}" "$@" ;; esac
parse "$@"
${run}
`;
}

function ghShim(violations: string): string {
  return `#!/bin/sh
# pmagent shim: the GitHub CLI is refused inside a sprite.
${refuseFn(violations)}
refuse github_cli "gh" "$@"
`;
}

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

/** The real git's path inside the sandbox: a placeholder in the run's `bin/` the real binary is bound over. */
const REAL_GIT_IN_SANDBOX = ".real-git";

/** The git programs a push or a remote edit can be run through (the binary, and the dashed names in its exec path). */
function gitPrograms(realGit: string): string[] {
  const out = new Set<string>([realpathOr(realGit)]);
  const r = spawnSync(realGit, ["--exec-path"], { encoding: "utf8", env: { PATH: "/usr/bin:/bin" }, timeout: 10_000 });
  const execPath = r.status === 0 ? r.stdout.trim() : "";
  for (const name of execPath ? ["git", "git-push", "git-send-pack", "git-http-push", "git-remote", "git-config"] : []) {
    const p = join(execPath, name);
    if (existsSync(p)) out.add(realpathOr(p));
  }
  return [...out];
}

function realpathOr(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
}

/**
 * Lay out a run's supervisor-owned directory: `bin/` (shims), `tools/` (pmagent launcher),
 * `home/` (the sprite's HOME: no user credentials), and the violations log the shims append to.
 * Sandboxed, the git wrapper calls the real git through a placeholder the sandbox binds it over,
 * and the wrappers are bound over every real git and gh program (see `overlays`).
 */
export function prepareRunDir(runDir: string, pmagentCommand: readonly string[], supervisorPath: string, options: { sandboxed?: boolean } = {}): RunDirs {
  const dirs: RunDirs = { shimDir: join(runDir, "bin"), toolDir: join(runDir, "tools"), home: join(runDir, "home"), violations: join(runDir, VIOLATIONS_FILE), overlays: [] };
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

export type SandboxMode = "required" | "auto" | "off";

/** bwrap's namespaces and limits for every sprite (also the probe that bwrap works here). */
const BWRAP_FLAGS = ["--unshare-pid", "--unshare-ipc", "--cap-drop", "ALL", "--die-with-parent", "--new-session"];
const probed = new Map<string, string | null>();

/** Whether bwrap can make a sandbox on this machine (once per process): null, or what went wrong. */
function probeBwrap(bwrap: string): string | null {
  if (!probed.has(bwrap)) {
    const r = spawnSync(bwrap, ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", ...BWRAP_FLAGS, "true"], { encoding: "utf8", timeout: 10_000 });
    probed.set(bwrap, r.status === 0 ? null : (r.stderr || r.error?.message || `exit ${r.status}`).trim().split("\n").slice(-2).join(" "));
  }
  return probed.get(bwrap) ?? null;
}

/**
 * The bubblewrap binary sprites run in, per the config's `sandbox` mode and the supervisor's PATH.
 * `off`: none. `auto`: bwrap when it is installed and works, else none with a warning to log.
 * `required`: bwrap, or a typed error saying how to install it.
 */
export function findSandboxTool(mode: SandboxMode, path: string): { bwrap: string | null; warning?: string } {
  if (mode === "off") return { bwrap: null };
  const bwrap = findExecutable("bwrap", path);
  const failed = bwrap ? probeBwrap(bwrap) : null;
  if (bwrap && failed === null) return { bwrap };
  const problem = bwrap ? `bubblewrap (${bwrap}) cannot make a sandbox here (${failed})` : "bubblewrap (bwrap) is not installed (not found on PATH)";
  if (mode === "required") {
    throw new UnavailableError(
      "sandbox_unavailable",
      `sandbox is "required" in pmagent.config.json but ${problem}: install it with \`apt-get install bubblewrap\` (unprivileged user namespaces must be allowed), or set "sandbox": "auto"`,
    );
  }
  return {
    bwrap: null,
    warning: `SPRITES RUN WITHOUT A SANDBOX: ${problem}. A sprite can read this user's files, the secrets file, the store and the supervisor's environment (/proc), and push with git. Install it: apt-get install bubblewrap (or set "sandbox": "off" in pmagent.config.json to run unsandboxed on purpose)`,
  };
}

/** Where the workspace is also mounted inside the sandbox (the path the Lattice spec gives sprites). */
export const SANDBOX_WORKSPACE = "/workspace";

export interface SandboxSpec {
  bwrap: string;
  /** Writable, at its own path and at /workspace; the sprite starts in it. */
  workspace: string;
  /** Writable too (the run's checkpoint directory and HOME, the violations log). */
  writable: string[];
  /** Visible read-only even when under a hidden path (the project root, the run's shims, pmagent itself). */
  readable: string[];
  /** Not visible: a directory becomes an empty tmpfs, a file reads as empty. Missing paths are skipped. */
  hidden: string[];
  /** Files bound read-only over others (the git and gh wrappers over the real programs). */
  overlays: Array<{ source: string; dest: string }>;
}

const depth = (p: string) => p.split("/").filter(Boolean).length;

/**
 * Wrap a sprite's argv in bubblewrap: the host's root read-only (entry by entry, so /workspace can
 * be made in the sandbox's own root), a private /tmp, /dev and /proc (its own PID namespace: no
 * /proc of the supervisor), the hidden paths covered, the workspace writable, no capabilities
 * (root without them cannot unmount what hides a path), killed with its parent. Mounts go
 * shallowest first so a path made visible again under a hidden one stays visible.
 */
export function sandboxArgv(argv: readonly string[], spec: SandboxSpec): string[] {
  const ops = new Map<string, string[]>();
  // A later mount of the same path replaces an earlier one (the workspace may be the project root).
  const put = (dest: string, args: string[]) => {
    ops.delete(dest);
    ops.set(dest, args);
  };
  for (const name of readdirSync("/")) {
    const p = `/${name}`;
    if (["/proc", "/dev", "/tmp"].includes(p)) continue;
    try {
      const st = lstatSync(p);
      if (st.isSymbolicLink()) put(p, ["--symlink", readlinkSync(p), p]);
      else if (st.isDirectory() || st.isFile()) put(p, ["--ro-bind", p, p]);
    } catch {
      // gone meanwhile
    }
  }
  put("/dev", ["--dev", "/dev"]);
  put("/proc", ["--proc", "/proc"]);
  put("/tmp", ["--tmpfs", "/tmp"]);
  for (const p of spec.hidden.map(realpathOr)) {
    try {
      put(p, statSync(p).isDirectory() ? ["--tmpfs", p] : ["--ro-bind", "/dev/null", p]);
    } catch {
      // nothing there to hide
    }
  }
  for (const p of spec.readable.map(realpathOr)) if (existsSync(p)) put(p, ["--ro-bind", p, p]);
  const workspace = realpathOr(spec.workspace);
  for (const p of [workspace, ...spec.writable.map(realpathOr)]) if (existsSync(p)) put(p, ["--bind", p, p]);
  if (workspace !== SANDBOX_WORKSPACE) put(SANDBOX_WORKSPACE, ["--bind", workspace, SANDBOX_WORKSPACE]);
  for (const o of spec.overlays) put(o.dest, ["--ro-bind", o.source, o.dest]);
  const mounts = [...ops.entries()]
    .map(([dest, args], i) => ({ d: depth(dest), i, args }))
    .sort((a, b) => a.d - b.d || a.i - b.i)
    .flatMap((m) => m.args);
  return [spec.bwrap, ...mounts, "--remount-ro", "/", ...BWRAP_FLAGS, "--chdir", workspace, "--", ...argv];
}

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
  for (const r of refs as Array<{ type?: unknown; ref?: unknown; url?: unknown } | null>) {
    if (r?.type !== "artifact") continue;
    try {
      if (typeof r.ref === "string" && isAbsolute(r.ref)) {
        const file = realpathOr(r.ref);
        if (file.startsWith(`${workspaces}/`) && !file.split("/").includes(".lattice") && statSync(file).isFile()) out.push(file);
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

/** What one run's sandbox shows and hides. */
export function runSandbox(input: RunSandboxInput): SandboxSpec {
  const { root, config } = input.project;
  const hidden = [join(root, ".pmagent"), resolve(root, config.forge.bare_repo)];
  if (config.secrets.file) hidden.push(resolve(root, config.secrets.file));
  if (input.storeFile) hidden.push(...["", "-wal", "-shm", "-journal"].map((s) => input.storeFile + s));
  const home = input.home && resolve(input.home) !== "/" ? realpathOr(resolve(input.home)) : null;
  if (home) hidden.push(home);
  // Programs under the hidden HOME stay runnable: the PATH's directories, and node's own prefix (nvm).
  const underHome = (p: string) => home !== null && realpathOr(p).startsWith(`${home}/`);
  const tools = [...(input.path ?? "").split(delimiter).filter((d) => isAbsolute(d) && underHome(d)), ...[dirname(dirname(process.execPath))].filter(underHome)];
  const files = [...input.pmagentCommand, ...input.command].filter((a) => isAbsolute(a) && existsSync(a));
  return {
    bwrap: input.bwrap,
    workspace: input.workspace,
    writable: [input.checkpointDir, input.dirs.home, input.dirs.violations],
    readable: [root, input.dirs.shimDir, input.dirs.toolDir, ...files.flatMap(packageOf).map(realpathOr), ...artifactPaths(input.entryPayload, root), ...tools],
    hidden,
    overlays: input.dirs.overlays,
  };
}

/** The command that runs this pmagent (the node binary and the CLI script). */
export function selfCommand(): string[] {
  const script = process.argv[1];
  return script && /main\.(js|ts)$/.test(script) ? [process.execPath, resolve(script)] : [process.execPath, resolve(new URL("../cli/main.js", import.meta.url).pathname)];
}

export interface ViolationLine {
  line_no: number;
  rule: string;
  detail: string;
}

/** Parse the shims' violations log (`rule<TAB>argv` lines). */
export function readViolations(path: string): ViolationLine[] {
  let text: string;
  try {
    // Not a FIFO or a link the sprite put there (see regular-file.ts): those read as no violations.
    const fd = openRegularFile(path, "the violations log");
    if (fd === null) return [];
    try {
      text = readFileSync(fd, "utf8");
    } finally {
      closeSync(fd);
    }
  } catch {
    return [];
  }
  const out: ViolationLine[] = [];
  text.split("\n").forEach((line, i) => {
    if (!line) return;
    const tab = line.indexOf("\t");
    out.push({ line_no: i + 1, rule: tab === -1 ? line : line.slice(0, tab), detail: tab === -1 ? "" : line.slice(tab + 1).trim() });
  });
  return out;
}
