/**
 * The git and gh wrappers a sprite runs instead of the real programs: they refuse `git push`,
 * remote edits and `gh`, and append each attempt to the run's violations log, which the
 * supervisor reads back (`readViolations`) as hard-rule violations.
 */
import { spawnSync } from "node:child_process";
import { closeSync, existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { sh } from "../../core/index.js";
import { openRegularFile } from "../wire/index.js";
import { realpathOr } from "./paths.js";

export const VIOLATIONS_FILE = "violations.log";

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
export function gitShim(realGit: string | undefined, violations: string): string {
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

export function ghShim(violations: string): string {
  return `#!/bin/sh
# pmagent shim: the GitHub CLI is refused inside a sprite.
${refuseFn(violations)}
refuse github_cli "gh" "$@"
`;
}

/** The git programs a push or a remote edit can be run through (the binary, and the dashed names in its exec path). */
export function gitPrograms(realGit: string): string[] {
  const out = new Set<string>([realpathOr(realGit)]);
  const r = spawnSync(realGit, ["--exec-path"], { encoding: "utf8", env: { PATH: "/usr/bin:/bin" }, timeout: 10_000 });
  const execPath = r.status === 0 ? r.stdout.trim() : "";
  for (const name of execPath
    ? ["git", "git-push", "git-send-pack", "git-http-push", "git-remote", "git-config"]
    : []) {
    const p = join(execPath, name);
    if (existsSync(p)) out.add(realpathOr(p));
  }
  return [...out];
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
    out.push({
      line_no: i + 1,
      rule: tab === -1 ? line : line.slice(0, tab),
      detail: tab === -1 ? "" : line.slice(tab + 1).trim(),
    });
  });
  return out;
}
