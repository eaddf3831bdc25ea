import { Option, type Command } from "./commander.js";
import {
  decidePullRequest,
  localPullRequestDiff,
  type LocalPullRequest,
  type PullComment,
  type PullRequestDecision,
} from "../forge/index.js";
import { UsageError } from "../core/index.js";
import { decider } from "./actor.js";
import { withStore } from "./context.js";
import { formatOption, intOption, pageOptions, print, printPage, type Format, type PageOpts } from "./output.js";

const STATES = ["open", "closed", "merged", "all"] as const;

function numberArg(value: string): number {
  if (!/^#?\d+$/.test(value) || Number(value.replace("#", "")) < 1)
    throw new UsageError("invalid_argument", `expected a pull request number (1 or more), got "${value}"`);
  return Number(value.replace("#", ""));
}

/** The subcommands print in the `--format` of `prs` (commander gives a flag the parent knows to the parent, wherever it stands). */
const formatOf = (cmd: Command) => ({ format: cmd.optsWithGlobals<{ format: Format }>().format });

const commentLine = (c: PullComment) =>
  `  ${c.created_at} ${c.author}${c.path ? ` on ${c.path}${c.line ? `:${c.line}` : ""}` : ""}: ${c.body}`;
const line = (r: LocalPullRequest) =>
  `#${r.number}  ${r.state}  ${r.head} → ${r.base}  ${r.head_sha.slice(0, 12)}  ${r.title}`;

export function registerPrs(program: Command): void {
  const prs = pageOptions(program.command("prs"), "oldest")
    .description(
      "pull requests of the local forge (projects without GitHub): opened by sprites through OPEN_PR; show, diff, merge or close one",
    )
    .addOption(new Option("--state <state>", "only this state").choices([...STATES]).default("all"))
    .addOption(formatOption())
    .action(async (opts: PageOpts & { state: (typeof STATES)[number]; format: Format }, cmd: Command) => {
      await withStore(cmd, async (p, _store, o) => {
        const page = await (
          await o.localForge()
        ).page(opts.state === "all" ? {} : { state: opts.state as LocalPullRequest["state"] }, {
          limit: opts.limit,
          order: opts.order,
          cursor: opts.cursor,
        });
        const none = p.config.github?.repo
          ? `no local pull requests (this project opens them on GitHub: ${p.config.github.repo})`
          : "no pull requests";
        printPage(opts.format, page, line, none);
      });
    });

  prs
    .command("show")
    .description("one pull request: its branches, state, description and the files it changes")
    .argument("<number>", "pull request number", numberArg)
    .action(async (number: number, _opts: unknown, cmd: Command) => {
      const opts = formatOf(cmd);
      await withStore(cmd, async (p, _store, o) => {
        const d = await localPullRequestDiff(await o.localForge(), number);
        const comments = await (await o.pullComments()).list(number);
        print(opts.format, { ...d.pull, stat: d.stat, comments }, () =>
          [
            line(d.pull),
            `opened:  ${d.pull.created_at}`,
            ...(d.pull.body ? ["", d.pull.body] : []),
            "",
            d.stat.trimEnd() || "(no changes)",
            ...(comments.length ? ["", `comments (${comments.length}):`, ...comments.map(commentLine)] : []),
          ].join("\n"),
        );
      });
    });

  prs
    .command("diff")
    .description(
      "a pull request's diff against its base (git diff base...head; for a merged one, the base it was merged into)",
    )
    .argument("<number>", "pull request number", numberArg)
    .action(async (number: number, _opts: unknown, cmd: Command) => {
      const opts = formatOf(cmd);
      await withStore(cmd, async (p, _store, o) => {
        const d = await localPullRequestDiff(await o.localForge(), number);
        print(opts.format, d, () => `${d.diff}${d.truncated ? "\n[diff cut at 512 KiB]" : ""}`);
      });
    });

  prs
    .command("comment")
    .description(
      "add a review comment to a pull request: on the whole change, or with --path (and --line) on one file's line",
    )
    .argument("<number>", "pull request number", numberArg)
    .requiredOption("--body <text>", "what the comment says")
    .option("--path <file>", "the file of the change it is about (relative to the repository)")
    .option("--line <n>", "the line of that file in the change's new version", intOption("--line", 1))
    .option("--as <actor>", "who comments (default $PMAGENT_ACTOR)")
    .action(async (number: number, own: { body: string; path?: string; line?: number; as?: string }, cmd: Command) => {
      const actor = own.as ?? process.env.PMAGENT_ACTOR;
      if (!actor) throw new UsageError("actor_required", "say who comments: pass --as NAME or set PMAGENT_ACTOR");
      const opts = formatOf(cmd);
      await withStore(cmd, async (_p, _store, o) => {
        const c = await (
          await o.pullComments()
        ).add(actor, number, { body: own.body, path: own.path ?? null, line: own.line ?? null });
        print(opts.format, c, () => `commented on #${number} (${c.id})`);
      });
    });

  const decide = (decision: PullRequestDecision, description: string) =>
    prs
      .command(decision)
      .description(description)
      .argument("<number>", "pull request number", numberArg)
      .option("--as <actor>", "who decides (must be one of the config's humans; default $PMAGENT_ACTOR)")
      .action(async (number: number, own: { as?: string }, cmd: Command) => {
        const actor = decider(own);
        const opts = formatOf(cmd);
        await withStore(cmd, async (p, _store, o) => {
          const d = await decidePullRequest(await o.localForge(), p.config.humans, actor, number, decision);
          print(opts.format, d, () =>
            decision === "merge"
              ? `merged #${number} into ${d.pull.base} (now ${d.sha?.slice(0, 12)}) in the forge ${p.config.forge.bare_repo}`
              : `closed #${number}`,
          );
        });
      });
  decide(
    "merge",
    "merge an open pull request into its base branch in the forge's repository (fast-forward, else a merge commit naming who merged; nothing is merged on a conflict)",
  );
  decide("close", "close an open pull request without merging it");
}
