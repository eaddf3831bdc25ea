import { Argument, Command } from "./commander.js";

/** The command groups (program.ts's table, passed in: this file must not import program.ts back). */
type Groups = Readonly<Record<string, { load: () => Promise<(program: Command) => void> }>>;

export const SHELLS = ["bash", "zsh", "fish"] as const;
type Shell = (typeof SHELLS)[number];

interface OptionSpec {
  flags: string[];
  description: string;
  takesValue: boolean;
  choices: string[];
}

/** One command of the program tree: its path from the root ("" for pmagent itself, "bb list"). */
interface Node {
  path: string;
  name: string;
  description: string;
  subs: Node[];
  options: OptionSpec[];
  /** Values of the first argument when it has fixed choices (`completion <shell>`). */
  values: string[];
}

const HELP: OptionSpec = {
  flags: ["-h", "--help"],
  description: "display help for command",
  takesValue: false,
  choices: [],
};

function node(cmd: Command, path: string): Node {
  const options = cmd.options.map((o): OptionSpec => ({
    flags: [o.short, o.long].filter((f): f is string => typeof f === "string"),
    description: o.description,
    takesValue: o.required || o.optional,
    choices: o.argChoices ?? [],
  }));
  const first = cmd.registeredArguments[0] as Argument | undefined;
  return {
    path,
    name: cmd.name(),
    description: cmd.summary() || cmd.description().split("\n")[0]!,
    subs: cmd.commands.map((c) => node(c, path === "" ? c.name() : `${path} ${c.name()}`)),
    options: [...options, HELP],
    values: first?.argChoices ?? [],
  };
}

/** The whole program tree, every group loaded (completion is the one command that needs them all). */
export async function programTree(groups: Groups): Promise<Node> {
  const program = new Command("pmagent")
    .option("--config <file>", "pmagent.config.json to use")
    .version("0", "-V, --version", "output the version number");
  for (const group of Object.values(groups)) (await group.load())(program);
  return node(program, "");
}

function all(root: Node): Node[] {
  return [root, ...root.subs.flatMap(all)];
}

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
const oneLine = (s: string) => s.replace(/\s+/g, " ").trim();

/**
 * Shell functions both bash and zsh run (case tables generated from the tree):
 * _pmagent_subs PATH, _pmagent_opts PATH, _pmagent_takes PATH OPT, _pmagent_choices PATH OPT,
 * and _pmagent_path WORDS… which walks the words typed so far to the command they name.
 */
function tables(root: Node, describe: boolean): string {
  const nodes = all(root);
  const d = (name: string, description: string) =>
    describe ? `${name.replace(/:/g, "\\:")}:${oneLine(description)}` : name;
  const cases = (fn: string, rows: Array<[string, string[]]>, sep: string) =>
    [
      `${fn}() {`,
      `  case "$1" in`,
      ...rows
        .filter(([, v]) => v.length > 0)
        .map(([k, v]) => `    ${quote(k)}) printf '%s\\n' ${v.map(quote).join(" ")} ;;`),
      "  esac",
      "}",
    ].join("\n") + sep;
  const takes = nodes.flatMap((n) =>
    n.options.filter((o) => o.takesValue).flatMap((o) => o.flags.map((f) => `${n.path}|${f}`)),
  );
  const choices = nodes.flatMap((n) =>
    n.options
      .filter((o) => o.choices.length > 0)
      .flatMap((o) => o.flags.map((f): [string, string[]] => [`${n.path}|${f}`, o.choices])),
  );
  return [
    cases(
      "_pmagent_subs",
      nodes.map((n) => [n.path, n.subs.map((s) => d(s.name, s.description)).concat(n.values)]),
      "\n",
    ),
    cases(
      "_pmagent_opts",
      nodes.map((n) => [n.path, n.options.flatMap((o) => o.flags.map((f) => d(f, o.description)))]),
      "\n",
    ),
    cases("_pmagent_choices", choices, "\n"),
    `_pmagent_takes() {\n  case "$1|$2" in\n    ${[...takes.map(quote), "*'|--config'"].join("|")}) return 0 ;;\n  esac\n  return 1\n}\n`,
    `# The command the words name: subcommands are followed, options and their values skipped.
_pmagent_path() {
  local p="" w skip=0
  for w in "$@"; do
    if [ "$skip" = 1 ]; then skip=0; continue; fi
    case "$w" in
      --) break ;;
      --*=*) ;;
      -*) _pmagent_takes "$p" "$w" && skip=1 ;;
      *) if _pmagent_subs "$p" | cut -d: -f1 | grep -qxF -- "$w"; then p="\${p:+$p }$w"; fi ;;
    esac
  done
  printf '%s' "$p"
}
`,
  ].join("\n");
}

function bash(root: Node): string {
  return `# pmagent completion for bash: source <(pmagent completion bash), or save it in
# ~/.local/share/bash-completion/completions/pmagent
${tables(root, false)}
_pmagent() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" prev="\${COMP_WORDS[COMP_CWORD-1]}" p
  p="$(_pmagent_path "\${COMP_WORDS[@]:1:COMP_CWORD-1}")"
  COMPREPLY=()
  case " \${COMP_WORDS[*]:1:COMP_CWORD-1} " in *" -- "*) return ;; esac
  if [ "$COMP_CWORD" -gt 1 ] && _pmagent_takes "$p" "$prev"; then
    local values; values="$(_pmagent_choices "$p|$prev")"
    [ -n "$values" ] && COMPREPLY=($(compgen -W "$values" -- "$cur"))
    return
  fi
  if [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "$(_pmagent_opts "$p")" -- "$cur"))
  else
    COMPREPLY=($(compgen -W "$(_pmagent_subs "$p")" -- "$cur"))
  fi
}
complete -o default -F _pmagent pmagent
`;
}

function zsh(root: Node): string {
  return `#compdef pmagent
# pmagent completion for zsh: save as _pmagent in a directory of $fpath, or
# source <(pmagent completion zsh) after compinit
${tables(root, true)}
_pmagent() {
  local p prev="\${words[CURRENT-1]}"
  p="$(_pmagent_path "\${(@)words[2,CURRENT-1]}")"
  if (( \${words[(I)--]} > 0 && \${words[(I)--]} < CURRENT )); then _files; return; fi
  if (( CURRENT > 2 )) && _pmagent_takes "$p" "$prev"; then
    local -a values; values=(\${(f)"$(_pmagent_choices "$p|$prev")"})
    if (( $#values )); then compadd -a values; else _files; fi
    return
  fi
  local -a items
  if [[ $PREFIX == -* ]]; then
    items=(\${(f)"$(_pmagent_opts "$p")"}); _describe option items
  else
    items=(\${(f)"$(_pmagent_subs "$p")"})
    if (( $#items )); then _describe command items; else _files; fi
  fi
}
if [[ $zsh_eval_context[-1] == loadautofunc ]]; then _pmagent "$@"; else compdef _pmagent pmagent; fi
`;
}

function fish(root: Node): string {
  const lines = [
    "# pmagent completion for fish: pmagent completion fish > ~/.config/fish/completions/pmagent.fish",
    "function __pmagent_subs",
    '  switch "$argv[1]"',
    ...all(root)
      .filter((n) => n.subs.length > 0)
      .map((n) => `    case ${quote(n.path)}\n      printf '%s\\n' ${n.subs.map((s) => quote(s.name)).join(" ")}`),
    "  end",
    "end",
    "# The command the typed words name (subcommands followed, the rest skipped).",
    "function __pmagent_path",
    "  set -l p ''",
    "  for w in (commandline -opc)[2..-1]",
    "    test \"$w\" = '--'; and break",
    "    if contains -- $w (__pmagent_subs $p)",
    '      set p (string trim -- "$p $w")',
    "    end",
    "  end",
    "  echo $p",
    "end",
    "function __pmagent_at",
    '  test (__pmagent_path) = "$argv[1]"',
    "end",
  ];
  for (const n of all(root)) {
    const at = `-n ${quote(`__pmagent_at ${quote(n.path)}`)}`;
    for (const s of n.subs)
      lines.push(`complete -c pmagent ${at} -f -a ${quote(s.name)} -d ${quote(oneLine(s.description))}`);
    for (const v of n.values) lines.push(`complete -c pmagent ${at} -f -a ${quote(v)}`);
    for (const o of n.options) {
      const flags = o.flags.map((f) => (f.startsWith("--") ? `-l ${f.slice(2)}` : `-s ${f.slice(1)}`)).join(" ");
      const value = o.takesValue ? (o.choices.length > 0 ? ` -x -a ${quote(o.choices.join(" "))}` : " -r -F") : "";
      lines.push(`complete -c pmagent ${at} ${flags} -d ${quote(oneLine(o.description))}${value}`);
    }
  }
  return `${lines.join("\n")}\n`;
}

export function completionScript(shell: Shell, root: Node): string {
  return shell === "bash" ? bash(root) : shell === "zsh" ? zsh(root) : fish(root);
}

/** The `completion` command, over the given groups. */
export const registerCompletion =
  (groups: Groups) =>
  (program: Command): void => {
    program
      .command("completion")
      .description(
        "print a shell completion script for pmagent's commands, subcommands and options: source <(pmagent completion bash)",
      )
      .addArgument(new Argument("<shell>", "the shell").choices([...SHELLS]))
      .action(async (shell: Shell) => {
        process.stdout.write(completionScript(shell, await programTree(groups)));
      });
  };
