import type { Command } from "./commander.js";
import { DEFAULT_BLACKBOARD_TYPE } from "../blackboard/light/index.js";
// The GitHub side (client, sync, its zod report) loads only when `bb sync` runs, not for every `bb` command.
import type { SyncOptions, SyncReport } from "../blackboard/index.js";
import { hasCode, UsageError, type ErrorCode } from "../core/index.js";
import { withStore } from "./context.js";
import { formatOption, intOption, print, type Format } from "./output.js";

interface SyncOpts {
  repo?: string;
  issue?: number;
  apiUrl?: string;
  type: string;
  format: Format;
  watch?: boolean;
  interval: number;
}

/** Failures a watching sync reports and outlives (the next round may succeed); any other stops it. */
const PASSING: ErrorCode[] = ["github_unreachable", "github_rate_limited", "bb_sync_running"];

/** Resolve after `ms`, or at once when `signal` aborts: the watch waits on the signal, not in a sleep loop. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}

/**
 * `bb sync --watch`: sync, then wait `interval` seconds or for SIGINT/SIGTERM, and again. One
 * client throughout, so its ETags make an unchanged board cost no rate limit. A round under way
 * when the signal comes is finished (its writes are not cut in half); then the command exits 0.
 */
async function watch(options: SyncOptions, intervalS: number, format: Format): Promise<void> {
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  const { createGithubClient, syncBoard } = await import("../blackboard/index.js");
  const client = await createGithubClient(options);
  try {
    while (!stop.signal.aborted) {
      try {
        const report = await syncBoard({ ...options, client });
        if (format === "json") process.stdout.write(`${JSON.stringify(report)}\n`);
        else process.stdout.write(`${new Date().toISOString()} ${reportText(report)}\n`);
      } catch (err) {
        if (!hasCode(err, ...PASSING)) throw err;
        process.stderr.write(`${new Date().toISOString()} sync failed, retrying in ${intervalS} s: ${err.message}\n`);
      }
      await pause(intervalS * 1000, stop.signal);
    }
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
}

function reportText(r: SyncReport): string {
  const lines = [
    `synced ${r.repo}#${r.issue} (${r.comments} comments${r.projects.length > 1 ? `, projects ${r.projects.join(", ")}` : ""}): imported ${r.imported.length}, updated locally ${r.updated_locally.length}, written back ${r.written_back.length}, posted ${r.posted.length}, unchanged ${r.unchanged}, conflicts ${r.conflicts.length}, bad comments ${r.bad_comments.length}${r.refused.length ? `, refused by GitHub ${r.refused.length}` : ""}`,
  ];
  for (const [what, items] of [
    ["imported", r.imported],
    ["updated locally", r.updated_locally],
    ["written back", r.written_back],
    ["posted", r.posted],
  ] as const) {
    for (const i of items)
      lines.push(`  ${what}: ${i.entry_id}${i.project_id ? ` [${i.project_id}]` : ""} (comment ${i.comment_id})`);
  }
  for (const c of r.conflicts) lines.push(`  conflict: ${c.entry_id} (comment ${c.comment_id}): ${c.reason}`);
  for (const b of r.bad_comments) lines.push(`  bad comment ${b.comment_id} on #${b.issue}: ${b.reason}`);
  for (const f of r.refused)
    lines.push(
      `  refused by GitHub: ${f.entry_id}${f.comment_id === undefined ? "" : ` (comment ${f.comment_id})`}: ${f.reason}`,
    );
  return lines.join("\n");
}

/** `pmagent bb sync`: registered under the `bb` group. */
export function registerBbSync(bb: Command): void {
  bb.command("sync")
    .description(
      "two-way sync with a GitHub board issue: import its comments' entries (all pages), rewrite comments of entries changed locally, post new local entries; entries changed on both sides, bad comments and writes GitHub refuses are reported (exit 1), never overwritten. Token from $GITHUB_TOKEN (config github.token_env)",
    )
    .option("--repo <owner/name>", "repository of the board issue (default: config github.repo)")
    .option("--issue <n>", "the board issue number (default: config github.board_issue)", intOption("--issue", 1))
    .option("--api-url <url>", "GitHub API base URL (default: config github.api_url, else https://api.github.com)")
    .option("--type <type>", "blackboard type in the marker of newly posted comments", DEFAULT_BLACKBOARD_TYPE)
    .option(
      "--watch",
      "keep the board and the local store in step: sync every --interval seconds until SIGINT/SIGTERM (one report per round; JSON lines with --format json)",
    )
    .option("--interval <seconds>", "seconds between two rounds of --watch", intOption("--interval", 1), 60)
    .addOption(formatOption())
    .action(async (opts: SyncOpts, cmd: Command) => {
      await withStore(cmd, async (p, _store, o) => {
        const github = p.config.github;
        const repo = opts.repo ?? github?.repo;
        if (repo === undefined)
          throw new UsageError(
            "missing_option",
            "bb sync needs --repo OWNER/NAME (or github.repo in pmagent.config.json)",
          );
        const issue = opts.issue ?? github?.board_issue;
        if (issue === undefined)
          throw new UsageError(
            "missing_option",
            "bb sync needs --issue N (or github.board_issue in pmagent.config.json)",
          );
        const tokenEnv = github?.token_env ?? "GITHUB_TOKEN";
        const { githubToken, syncBoard } = await import("../blackboard/index.js");
        const options: SyncOptions = {
          board: await o.board(),
          repo,
          issue,
          apiUrl: opts.apiUrl ?? github?.api_url ?? "https://api.github.com",
          token: githubToken(tokenEnv),
          tokenEnv,
          type: opts.type,
        };
        if (opts.watch) return watch(options, opts.interval, opts.format);
        const report = await syncBoard(options);
        print(opts.format, report, () => reportText(report));
        if (report.conflicts.length > 0 || report.bad_comments.length > 0 || report.refused.length > 0)
          process.exitCode = 1;
      });
    });
}
