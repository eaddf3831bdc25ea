import type { Command } from "./commander.js";
import {
  AGENT_NAMES,
  agentCommand,
  defaultEndpoint,
  isAgentName,
  summarizeUsage,
  usageText,
  type RunBudget,
  type Supervisor,
} from "../lattice/index.js";
import { findRole, type Project } from "../config/index.js";
import { UsageError } from "../core/index.js";
import { withStore } from "./context.js";
import { formatOption, intOption, print, type Format } from "./output.js";
import { runLine } from "./run-line.js";

/** Stop the run when the user interrupts the CLI: the sprite's process group gets SIGTERM. */
export function cancelOnSignals(sup: Supervisor, runId: () => string | null): () => void {
  const handler = (signal: NodeJS.Signals) => {
    const id = runId();
    if (id) void sup.cancel(id, `interrupted (${signal})`).catch(() => undefined);
  };
  process.on("SIGINT", handler);
  process.on("SIGTERM", handler);
  return () => {
    process.off("SIGINT", handler);
    process.off("SIGTERM", handler);
  };
}

/** `--agent NAME --prompt TEXT`: the agent run's argv, with the role runner's model, endpoint and key credential when it names the same agent. */
function agentArgv(p: Project, roleName: string, agent: string, prompt: string | undefined, extra: string[]): string[] {
  if (!isAgentName(agent))
    throw new UsageError("invalid_option", `--agent must be one of ${AGENT_NAMES.join(", ")}, got "${agent}"`);
  if (extra.length > 0)
    throw new UsageError("invalid_option", "--agent runs the agent's CLI: give no command after --");
  const runner = findRole(p.config, roleName).role.runner;
  const same = runner?.agent === agent ? runner : undefined;
  return agentCommand({
    agent,
    prompt,
    model: same?.model,
    baseUrl: same?.base_url ?? defaultEndpoint(agent, p.config),
    keyCredential: same?.key_credential,
    args: same?.args,
  });
}

/** `--max-cost X`: a positive amount in the price table's currency. */
function costOption(value: string): number {
  const n = Number(value);
  if (!/^\d+(\.\d+)?$/.test(value.trim()) || !(n > 0))
    throw new UsageError("invalid_option", `--max-cost expects a positive amount (e.g. 2.50), got "${value}"`);
  return n;
}

export function registerRun(program: Command): void {
  program
    .command("run")
    .description(
      "run one sprite for ROLE (its runner.command, or the COMMAND after --) and supervise it until it finishes or waits",
    )
    .requiredOption("--role <role>", "the role the sprite acts as")
    .option("--entry <id>", "the blackboard entry (work item) to work on")
    .option("--workspace <dir>", "workspace directory inside the project (default .pmagent/workspaces/<run id>)")
    .option("--timeout <s>", "stop the sprite after S seconds (default: runner.timeout_s)", intOption("--timeout", 1))
    .option(
      "--agent <agent>",
      `run a coding agent's CLI as the sprite: ${AGENT_NAMES.join(", ")} (model and key: the role's runner, else the agent's defaults)`,
    )
    .option("--prompt <text>", "with --agent: the task (before the entry's, with --entry)")
    .option(
      "--max-tokens <n>",
      "fail the run, its sprite stopped, once it reports more tokens than N (in place of the role's budget.max_tokens)",
      intOption("--max-tokens", 1),
    )
    .option(
      "--max-cost <amount>",
      "fail the run once its tokens cost more than AMOUNT by the config's prices (in place of the role's budget.max_cost)",
      costOption,
    )
    .argument("[command...]", "the sprite's argv, after --")
    .addOption(formatOption())
    .action(
      async (
        command: string[],
        opts: {
          role: string;
          entry?: string;
          workspace?: string;
          timeout?: number;
          agent?: string;
          prompt?: string;
          maxTokens?: number;
          maxCost?: number;
          format: Format;
        },
        cmd: Command,
      ) => {
        await withStore(cmd, async (p, _store, o) => {
          if (opts.agent !== undefined) command = agentArgv(p, opts.role, opts.agent, opts.prompt, command);
          else if (opts.prompt !== undefined)
            throw new UsageError("invalid_option", "--prompt goes with --agent: give the agent to run");
          const sup = await o.supervisor();
          let current: string | null = null;
          const release = cancelOnSignals(sup, () => current);
          try {
            const budget: RunBudget | undefined =
              opts.maxTokens !== undefined || opts.maxCost !== undefined
                ? {
                    ...(opts.maxTokens !== undefined ? { max_tokens: opts.maxTokens } : {}),
                    ...(opts.maxCost !== undefined ? { max_cost: opts.maxCost } : {}),
                  }
                : undefined;
            const run = await sup.startRun({
              role: opts.role,
              entryId: opts.entry,
              command,
              workspace: opts.workspace,
              timeoutS: opts.timeout,
              budget,
              onStarted: (id) => (current = id),
            });
            const usage = summarizeUsage(await sup.runs.usage(run.id), p.config.prices);
            print(opts.format, { ...run, usage }, () =>
              usage.total_tokens > 0 ? `${runLine(run)}\nusage: ${usageText(usage)}` : runLine(run),
            );
            if (run.state !== "succeeded" && run.state !== "waiting") process.exitCode = 1;
          } finally {
            release();
          }
        });
      },
    );
}
