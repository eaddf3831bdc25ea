import { Option, type Command } from "commander";
import type { LocalPullRequest } from "../forge/index.js";
import { withStore } from "./context.js";
import { formatOption, pageOptions, printPage, type Format, type PageOpts } from "./output.js";

const STATES = ["open", "closed", "merged", "all"] as const;

export function registerPrs(program: Command): void {
  pageOptions(program.command("prs"), "oldest")
    .description("pull requests of the local forge (projects without GitHub): opened by sprites through OPEN_PR")
    .addOption(new Option("--state <state>", "only this state").choices([...STATES]).default("all"))
    .addOption(formatOption())
    .action(async (opts: PageOpts & { state: (typeof STATES)[number]; format: Format }, cmd: Command) => {
      await withStore(cmd, async (p, _store, o) => {
        const forge = await o.localForge();
        const page = await forge.page(opts.state === "all" ? {} : { state: opts.state as LocalPullRequest["state"] }, { limit: opts.limit, order: opts.order, cursor: opts.cursor });
        const none = p.config.github?.repo ? `no local pull requests (this project opens them on GitHub: ${p.config.github.repo})` : "no pull requests";
        printPage(opts.format, page, (r) => `#${r.number}  ${r.state}  ${r.head} → ${r.base}  ${r.head_sha.slice(0, 12)}  ${r.title}`, none);
      });
    });
}
