import { Option, type Command } from "commander";
import type { Project } from "../config/index.js";
import { findRole } from "../config/index.js";
import { UsageError } from "../core/index.js";
import { PROPOSAL_STATUSES, ProposalStore, roleEnvironment, type EnvironmentProposal, type ProposalStatus } from "../lattice/index.js";
import type { Store } from "../store/index.js";
import { withStore } from "./context.js";
import { formatOption, pageOptions, print, printPage, type Format, type PageOpts } from "./output.js";

function proposals(p: Project, store: Store): ProposalStore {
  return new ProposalStore({ store, projectId: p.config.project_id, humans: p.config.humans });
}

function line(e: EnvironmentProposal): string {
  const decided = e.decided_by ? `  (${e.status} by ${e.decided_by} at ${e.decided_at})` : "";
  return `${e.id}  ${e.status}  ${e.role}  ${e.adjustment_type} ${JSON.stringify(e.details)}  ×${e.count}  [${e.observed_failure.phase}, exit ${e.observed_failure.exit_code}]${decided}`;
}

/** Deciding needs an explicit identity: defaulting to a human would make the check meaningless. */
function decider(opts: { as?: string }): string {
  const actor = opts.as ?? process.env.PMAGENT_ACTOR;
  if (!actor) throw new UsageError("actor_required", "say who decides: pass --as NAME (a human listed in the config's humans) or set PMAGENT_ACTOR");
  return actor;
}

export function registerEnv(program: Command): void {
  const env = program.command("env").description("environment proposals from sprites: list them, accept or reject them (humans only)");

  pageOptions(env.command("list"), "newest")
    .description("list environment proposals by when they were last seen, a page at a time")
    .addOption(new Option("--status <status>", "only this status").choices([...PROPOSAL_STATUSES]))
    .option("--role <role>", "only proposals from this role's runs")
    .addOption(formatOption())
    .action(async (opts: PageOpts & { status?: ProposalStatus; role?: string; format: Format }, cmd: Command) => {
      await withStore(cmd, async (p, store) => {
        const page = await proposals(p, store).page({ status: opts.status, role: opts.role }, { limit: opts.limit, order: opts.order, cursor: opts.cursor });
        printPage(opts.format, page, line, "no environment proposals");
      });
    });

  for (const [name, verb] of [
    ["accept", "accept: its adjustment becomes part of the role's environment for later runs"],
    ["reject", "reject: later runs do not use it"],
  ] as const) {
    env
      .command(name)
      .description(`${verb}`)
      .argument("<id>", "proposal id (see `pmagent env list`)")
      .option("--as <actor>", "who decides (must be one of the config's humans; default $PMAGENT_ACTOR)")
      .addOption(formatOption())
      .action(async (id: string, opts: { as?: string; format: Format }, cmd: Command) => {
        const actor = decider(opts);
        await withStore(cmd, async (p, store) => {
          const ps = proposals(p, store);
          const decided = name === "accept" ? await ps.accept(id, actor) : await ps.reject(id, actor);
          print(opts.format, decided, () => `${decided.id} ${decided.status} by ${decided.decided_by}: ${decided.role} ${decided.adjustment_type} ${JSON.stringify(decided.details)}`);
        });
      });
  }

  env
    .command("show")
    .description("the environment accepted proposals give a role's later runs: pre-install steps and variables")
    .argument("<role>", "a configured role")
    .addOption(formatOption())
    .action(async (role: string, opts: { format: Format }, cmd: Command) => {
      await withStore(cmd, async (p, store) => {
        findRole(p.config, role);
        const e = await roleEnvironment(proposals(p, store), role);
        print(opts.format, e, () =>
          e.adjustments.length === 0
            ? `${role}: no accepted environment proposals`
            : [
                `${role}:`,
                ...e.preinstall.map((s) => `  pre-install (${s.proposal_id}): ${s.command}`),
                ...Object.entries(e.env).filter(([k]) => k !== "PMAGENT_ENVIRONMENT").map(([k, v]) => `  ${k}=${v}`),
              ].join("\n"),
        );
      });
    });
}
