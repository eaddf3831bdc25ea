/**
 * The rule-based reading of an OPS goal: which files it names (or, for a new document, which file
 * the SSOT references imply), what it does to them, and which hints become commands. Each step
 * carries the commands that do it and the evidence that shows it done.
 */
import { posix } from "node:path";

export interface OpsStep {
  title: string;
  commands: string[];
  evidence: string[];
}

type Verb = "create" | "update" | "remove" | "run";

const VERBS: Array<[Verb, RegExp]> = [
  ["create", /\b(create|add|write|new|introduce|draft|document|scaffold)\b/i],
  ["update", /\b(update|edit|change|fix|revise|extend|rewrite|amend|correct|refresh)\b/i],
  ["remove", /\b(remove|delete|drop|retire)\b/i],
  ["run", /\b(run|execute|test|check|verify|validate|rebuild|regenerate)\b/i],
];
const PATH_RE = /(?:[\w.-]+\/)+[\w.-]+\.\w+|\b[\w-]+\.(?:md|json|ts|js|mjs|py|ya?ml|toml|txt|sh|sql)\b/g;
const TICKS = /`([^`]+)`/g;
const COMMAND_WORDS = /^(make|pmagent|npm|npx|node|git|python3?|pytest|bash|sh|\.\/)\b/;
const DOC_WORDS = new Set(["document", "documentation", "doc", "docs", "spec", "specification", "file", "page", "md"]);
const STOP_WORDS = new Set(["the", "a", "an", "new", "for", "in", "under", "of", "our", "this", "that"]);

/** A word for the shell, single-quoted. */
export function shellQuote(s: string): string {
  return /^[\w./@%+=:,-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/** Relative file paths named in a text, in order, once each (absolute and `..` paths are ignored). */
export function pathsIn(text: string): string[] {
  const bare = text.replace(TICKS, " ");
  return [...new Set(bare.match(PATH_RE) ?? [])].filter((p) => !p.startsWith("/") && !p.split("/").includes(".."));
}

/** Commands written in backticks, or a text that is itself a command (`make reality.green`). */
export function commandsIn(text: string): string[] {
  const ticked = [...text.matchAll(TICKS)].map((m) => m[1]!.trim()).filter((c) => COMMAND_WORDS.test(c));
  if (ticked.length > 0) return ticked;
  return COMMAND_WORDS.test(text.trim()) ? [text.trim()] : [];
}

/** The goal's verb: the earliest one that occurs. */
export function goalVerb(goal: string): Verb | null {
  let best: { verb: Verb; at: number } | null = null;
  for (const [verb, re] of VERBS) {
    const m = re.exec(goal);
    if (m && (best === null || m.index < best.at)) best = { verb, at: m.index };
  }
  return best?.verb ?? null;
}

/**
 * The document a "create the X document" goal means, when it names no file: X in UPPER_SNAKE.md,
 * in the directory of the first SSOT reference (docs/ without one), in a sub-folder named after a
 * leading acronym ("OA data model" → docs/SSOT/oa/OA_DATA_MODEL.md).
 */
export function impliedDocument(goal: string, refs: readonly string[]): { path: string; title: string } | null {
  const words = goal
    .replace(TICKS, " ")
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean);
  const verbAt = words.findIndex((w) => VERBS.some(([, re]) => re.test(w)));
  const subject = words
    .slice(verbAt + 1)
    .filter((w) => !STOP_WORDS.has(w.toLowerCase()) && !DOC_WORDS.has(w.toLowerCase()));
  if (subject.length === 0 || subject.length > 6) return null;
  const refDir = refs.map((r) => posix.dirname(r)).find((d) => d !== ".") ?? "docs";
  const acronym = /^[A-Z]{2,5}$/.test(subject[0]!) ? subject[0]!.toLowerCase() : null;
  const dir = acronym ? `${refDir}/${acronym}` : refDir;
  const title = subject.map((w) => (/^[A-Z0-9]+$/.test(w) ? w : w[0]!.toUpperCase() + w.slice(1))).join(" ");
  return { path: `${dir}/${subject.map((w) => w.toUpperCase()).join("_")}.md`, title };
}

function createStep(path: string, title: string, goal: string, refs: readonly string[]): OpsStep {
  const dir = posix.dirname(path);
  const commands = dir === "." ? [] : [`mkdir -p ${shellQuote(dir)}`];
  if (path.endsWith(".md")) {
    // A starting document that states its goal and sources; the author fills it in.
    const lines = [`# ${title}`, "", goal, ...(refs.length > 0 ? ["", "Sources:", ...refs.map((r) => `- ${r}`)] : [])];
    commands.push(
      `test -e ${shellQuote(path)} || printf '%s\\n' ${lines.map(shellQuote).join(" ")} > ${shellQuote(path)}`,
    );
  } else {
    commands.push(`touch ${shellQuote(path)}`);
  }
  commands.push(`head -n 50 ${shellQuote(path)}`);
  return { title: `create ${path}`, commands, evidence: [`First 50 lines of ${path}`] };
}

function fileStep(verb: Verb, path: string, goal: string, refs: readonly string[]): OpsStep {
  switch (verb) {
    case "create":
      return createStep(
        path,
        posix
          .basename(path)
          .replace(/\.\w+$/, "")
          .replace(/_/g, " "),
        goal,
        refs,
      );
    case "remove":
      return {
        title: `remove ${path}`,
        commands: [`git rm ${shellQuote(path)}`, `git status --short -- ${shellQuote(path)}`],
        evidence: [`\`git status --short -- ${path}\` showing it deleted`],
      };
    default:
      // The rules cannot write the change itself: the operator edits, the diff is the evidence.
      return {
        title: `edit ${path}: ${goal}`,
        commands: [`"\${EDITOR:-vi}" ${shellQuote(path)}`, `git diff -- ${shellQuote(path)}`],
        evidence: [`\`git diff -- ${path}\` output`],
      };
  }
}

/** A hint becomes a command when it is one, or updates a named file with what the block created. */
function hintStep(hint: { flow_id: string; hint: string }, created: Array<{ path: string; title: string }>): OpsStep {
  const commands = commandsIn(hint.hint);
  if (commands.length > 0)
    return {
      title: `hint ${hint.flow_id}: ${hint.hint}`,
      commands,
      evidence: commands.map((c) => `Output of \`${c}\``),
    };
  const target = /\b(update|add to|edit|append to|link (?:it |them )?(?:in|from))\b/i.test(hint.hint)
    ? pathsIn(hint.hint)[0]
    : undefined;
  if (target && created.length > 0) {
    const links = created.map((c) => `- [${c.title}](${c.path})`);
    return {
      title: `hint ${hint.flow_id}: ${hint.hint}`,
      commands: [
        `printf '%s\\n' ${links.map(shellQuote).join(" ")} >> ${shellQuote(target)}`,
        `git diff -- ${shellQuote(target)}`,
      ],
      evidence: [`\`git diff -- ${target}\` showing the link to ${created.map((c) => c.path).join(", ")}`],
    };
  }
  return {
    title: `hint ${hint.flow_id}: ${hint.hint}`,
    commands: [],
    evidence: [`Confirmation of the ${hint.flow_id} hint: ${hint.hint}`],
  };
}

/** The steps that do the goal, then the hints that apply to it. Empty when nothing can be derived. */
export function planGoal(
  goal: string,
  refs: readonly string[],
  hints: ReadonlyArray<{ flow_id: string; hint: string }>,
): OpsStep[] {
  const verb = goalVerb(goal);
  const steps: OpsStep[] = [];
  const created: Array<{ path: string; title: string }> = [];
  const paths = pathsIn(goal);
  if (verb !== null && paths.length > 0) {
    for (const p of paths) {
      steps.push(fileStep(verb, p, goal, refs));
      if (verb === "create") created.push({ path: p, title: posix.basename(p) });
    }
  } else if (verb === "create") {
    const doc = impliedDocument(goal, refs);
    if (doc) {
      steps.push(createStep(doc.path, doc.title, goal, refs));
      created.push(doc);
    }
  }
  const goalCommands = commandsIn(goal);
  if (goalCommands.length > 0)
    steps.push({
      title: `run: ${goal}`,
      commands: goalCommands,
      evidence: goalCommands.map((c) => `Output of \`${c}\``),
    });
  for (const h of hints) steps.push(hintStep(h, created));
  return steps;
}
