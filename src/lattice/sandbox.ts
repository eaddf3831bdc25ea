/**
 * What a sprite runs inside: a scrubbed environment (an allow-list, never a token), shims first on
 * its PATH that refuse `git push`, `git remote add|set-url|remove|rename` and `gh` and record the
 * attempt as a hard-rule violation, then the directory of a `pmagent` launcher (for `pmagent emit`
 * and `pmagent checkpoint`), then the supervisor's PATH.
 */
import { accessSync, chmodSync, closeSync, constants, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { delimiter, join, resolve } from "node:path";
import { UsageError, isSecretEnvName } from "../core/index.js";
import { openRegularFile } from "./regular-file.js";

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

/** First executable named `name` on PATH, skipping `skip`. */
export function findExecutable(name: string, path: string, skip: string[] = []): string | undefined {
  for (const dir of path.split(delimiter)) {
    if (!dir || skip.some((s) => resolve(s) === resolve(dir))) continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
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

function gitShim(realGit: string | undefined, violations: string): string {
  const run = realGit ? `exec ${sh(realGit)} "$@"` : `echo "pmagent: git is not installed" >&2; exit 127`;
  return `#!/bin/sh
# pmagent shim: refuses git push and remote edits inside a sprite, passes everything else to git.
${refuseFn(violations)}
sub=""; second=""; skip=0
for a in "$@"; do
  if [ "$skip" = 1 ]; then skip=0; continue; fi
  if [ -z "$sub" ]; then
    case "$a" in
      -C|-c|--git-dir|--work-tree|--namespace|--exec-path|--super-prefix|--config-env) skip=1; continue ;;
      -*) continue ;;
      *) sub="$a"; continue ;;
    esac
  fi
  second="$a"; break
done
case "$sub" in
  push) refuse git_push "git push" "$@" ;;
  remote) case "$second" in add|set-url|remove|rm|rename) refuse git_remote_edit "git remote $second" "$@" ;; esac ;;
  send-pack|http-push) refuse git_push "git $sub" "$@" ;;
esac
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
}

/**
 * Lay out a run's supervisor-owned directory: `bin/` (shims), `tools/` (pmagent launcher),
 * `home/` (the sprite's HOME: no user credentials), and the violations log the shims append to.
 */
export function prepareRunDir(runDir: string, pmagentCommand: readonly string[], supervisorPath: string): RunDirs {
  const dirs: RunDirs = { shimDir: join(runDir, "bin"), toolDir: join(runDir, "tools"), home: join(runDir, "home"), violations: join(runDir, VIOLATIONS_FILE) };
  for (const d of [dirs.shimDir, dirs.toolDir, dirs.home]) mkdirSync(d, { recursive: true });
  const realGit = findExecutable("git", supervisorPath, [dirs.shimDir]);
  writeExecutable(join(dirs.shimDir, "git"), gitShim(realGit, dirs.violations));
  writeExecutable(join(dirs.shimDir, "gh"), ghShim(dirs.violations));
  writeExecutable(join(dirs.toolDir, "pmagent"), launcher(pmagentCommand));
  return dirs;
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
