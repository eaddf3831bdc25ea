import { Option, type Command } from "./commander.js";
import { findRole } from "../config/index.js";
import { PmagentError } from "../core/index.js";
import {
  PROPOSAL_STATUSES,
  roleEnvironment,
  type EnvironmentChange,
  type EnvironmentProposal,
  type InstallPlan,
  type ProposalStatus,
} from "../lattice/index.js";
import { decider } from "./actor.js";
import { withProject, withStore } from "./context.js";
import { formatOption, pageOptions, print, printPage, type Format, type PageOpts } from "./output.js";

function line(e: EnvironmentProposal): string {
  const decided = e.decided_by ? `  (${e.status} by ${e.decided_by} at ${e.decided_at})` : "";
  return `${e.id}  ${e.status}  ${e.role}  ${e.adjustment_type} ${JSON.stringify(e.details)}  ×${e.count}  [${e.observed_failure.phase}, exit ${e.observed_failure.exit_code}]${decided}`;
}

/** A decided proposal in a line, as accept and reject print it. */
function decidedLine(d: EnvironmentProposal): string {
  return `${d.id} ${d.status} by ${d.decided_by}: ${d.role} ${d.adjustment_type} ${JSON.stringify(d.details)}`;
}

/** One change in a line: its state, what it installed, why it failed, who undid it. */
export function changeLine(c: EnvironmentChange): string {
  const scope = c.applies_to === "*" ? ", every role" : "";
  const tools = c.effect.installed.map((t) => `${t.source} ${t.package} → ${t.bin.join(", ")}`).join("; ");
  const why =
    c.status === "failed"
      ? `: ${c.reason ?? "no reason"}`
      : c.status === "undone"
        ? ` by ${c.undone_by ?? "?"} at ${c.undone_at ?? "?"}`
        : "";
  return `${c.id}  ${c.status}  ${c.adjustment_type} (proposal ${c.proposal_id}${scope})${tools ? `  ${tools}` : ""}${why}`;
}

/** What accepting a pending proposal runs, where and how (or why it is refused), as `env show` prints it. */
export function planLines(plan: InstallPlan): string[] {
  const head = `    ${plan.proposal_id}  ${plan.adjustment_type}`;
  if (plan.refused) return [`${head}: REFUSED: ${plan.refused}`];
  if (plan.steps.length === 0) return [`${head}: runs nothing (later runs get its variables)`];
  return [
    `${head}: runs ${plan.isolation}:`,
    ...plan.steps.map((s) => `      ${s.when ? `${s.when}: ` : ""}${s.command ?? s.what}`),
  ];
}

export function registerEnv(program: Command): void {
  const env = program
    .command("env")
    .description(
      "environment proposals from sprites: list them, accept (apply) or reject them, show a role's environment, undo a change (humans decide)",
    );

  pageOptions(env.command("list"), "newest")
    .description("list environment proposals by when they were last seen, a page at a time")
    .addOption(new Option("--status <status>", "only this status").choices([...PROPOSAL_STATUSES]))
    .option("--role <role>", "only proposals from this role's runs")
    .addOption(formatOption())
    .action(async (opts: PageOpts & { status?: ProposalStatus; role?: string; format: Format }, cmd: Command) => {
      await withProject(cmd, async (o) => {
        const page = await (
          await o.proposals()
        ).page({ status: opts.status, role: opts.role }, { limit: opts.limit, order: opts.order, cursor: opts.cursor });
        printPage(opts.format, page, line, "no environment proposals");
      });
    });

  env
    .command("accept")
    .description("accept: its change is applied now (tools installed for the role's runs) and later runs get it")
    .argument("<id>", "proposal id (see `pmagent env list`)")
    .option("--as <actor>", "who decides (must be one of the config's humans; default $PMAGENT_ACTOR)")
    .addOption(formatOption())
    .action(async (id: string, opts: { as?: string; format: Format }, cmd: Command) => {
      const actor = decider(opts);
      await withProject(cmd, async (o) => {
        const { proposal: d, change } = await (await o.environmentChanges()).accept(id, actor);
        print(opts.format, { ...d, change }, () => `${decidedLine(d)}\n  change ${changeLine(change)}`);
        if (change.status === "failed") {
          throw new PmagentError(
            "install_failed",
            `environment proposal ${d.id} is accepted but applying it failed, so later runs do not get it (change ${change.id}): ${change.reason ?? "no reason"}`,
            { kind: "unavailable" },
          );
        }
      });
    });

  env
    .command("reject")
    .description("reject: later runs do not use it")
    .argument("<id>", "proposal id (see `pmagent env list`)")
    .option("--as <actor>", "who decides (must be one of the config's humans; default $PMAGENT_ACTOR)")
    .addOption(formatOption())
    .action(async (id: string, opts: { as?: string; format: Format }, cmd: Command) => {
      const actor = decider(opts);
      await withProject(cmd, async (o) => {
        const d = await (await o.proposals()).reject(id, actor);
        print(opts.format, d, () => decidedLine(d));
      });
    });

  env
    .command("undo")
    .description("undo an applied change: its tools are removed and later runs no longer get it")
    .argument("<id>", "change id or its proposal's id (see `pmagent env show ROLE`)")
    .option("--as <actor>", "who undoes it (must be one of the config's humans; default $PMAGENT_ACTOR)")
    .addOption(formatOption())
    .action(async (id: string, opts: { as?: string; format: Format }, cmd: Command) => {
      const actor = decider(opts);
      await withProject(cmd, async (o) => {
        const c = await (await o.environmentChanges()).undo(id, actor);
        print(opts.format, c, () => changeLine(c));
      });
    });

  env
    .command("show")
    .description(
      "the environment accepted proposals give a role's later runs (pre-install steps, PATH, sandbox network, variables), the changes applied, failed or undone, and what accepting each pending proposal runs (or why it is refused)",
    )
    .argument("<role>", "a configured role")
    .addOption(formatOption())
    .action(async (role: string, opts: { format: Format }, cmd: Command) => {
      await withStore(cmd, async (p, _store, o) => {
        findRole(p.config, role);
        const ps = await o.proposals();
        const changes = await o.environmentChanges();
        const e = await roleEnvironment(ps, role, changes);
        const list = await changes.list(role);
        const pending = (await ps.list({ status: "pending" }))
          .filter((x) => x.role === role || x.scope === "global_candidate")
          .map((x) => changes.plan(x));
        const network = e.network ?? p.config.sandbox_network;
        print(opts.format, { ...e, network, changes: list, pending }, () =>
          [
            e.adjustments.length === 0 && list.length === 0 ? `${role}: no accepted environment proposals` : `${role}:`,
            ...e.preinstall.map((s) => `  pre-install (${s.proposal_id}): ${s.command}`),
            ...e.path.map((d) => `  PATH first: ${d}`),
            ...(e.network ? [`  sandbox network: ${network}`] : []),
            ...Object.entries(e.env)
              .filter(([k]) => k !== "PMAGENT_ENVIRONMENT")
              .map(([k, v]) => `  ${k}=${v}`),
            ...(list.length ? ["  changes:", ...list.map((c) => `    ${changeLine(c)}`)] : []),
            ...(pending.length
              ? ["  pending proposals (what accepting each runs):", ...pending.flatMap(planLines)]
              : []),
          ].join("\n"),
        );
      });
    });
}
