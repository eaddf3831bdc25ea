import type { Command } from "commander";
import { type RunRecord, type Supervisor } from "../lattice/index.js";
import { projectSupervisor } from "../app/index.js";
import type { Project } from "../config/index.js";
import type { Store } from "../store/index.js";
import { withStore } from "./context.js";
import { plural } from "../core/index.js";
import { formatOption, intOption, paint, print, stateStyle, type Format } from "./output.js";

/** The supervisor of a CLI process, with the actions, proposals and role environments wired in. */
export function supervisorFor(p: Project, store: Store): Supervisor {
  return projectSupervisor({ store, project: p });
}

/** One line for a run; its state in colour when `stream` (where the line goes) takes colour. */
export function runLine(r: RunRecord, stream?: NodeJS.WriteStream): string {
  const entry = r.entry_id ? `, entry ${r.entry_id}` : "";
  const why = r.reason ? `: ${r.reason}` : r.state === "waiting" && r.waiting ? `: ${r.waiting.reason} (checkpoint ${r.waiting.checkpoint_id})` : "";
  const style = stateStyle(r.state);
  const state = stream && style ? paint(stream, style, r.state) : r.state;
  return `${r.id}  ${state}  ${r.role}${entry}  ${plural(r.event_count, "event")}${why}`;
}

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

export function registerRun(program: Command): void {
  program
    .command("run")
    .description("run one sprite for ROLE (its runner.command, or the COMMAND after --) and supervise it until it finishes or waits")
    .requiredOption("--role <role>", "the role the sprite acts as")
    .option("--entry <id>", "the blackboard entry (work item) to work on")
    .option("--workspace <dir>", "workspace directory inside the project (default .pmagent/workspaces/<run id>)")
    .option("--timeout <s>", "stop the sprite after S seconds (default: runner.timeout_s)", intOption("--timeout", 1))
    .argument("[command...]", "the sprite's argv, after --")
    .addOption(formatOption())
    .action(async (command: string[], opts: { role: string; entry?: string; workspace?: string; timeout?: number; format: Format }, cmd: Command) => {
      await withStore(cmd, async (p, store) => {
        const sup = supervisorFor(p, store);
        let current: string | null = null;
        const release = cancelOnSignals(sup, () => current);
        try {
          const run = await sup.startRun({ role: opts.role, entryId: opts.entry, command, workspace: opts.workspace, timeoutS: opts.timeout, onStarted: (id) => (current = id) });
          print(opts.format, run, () => runLine(run));
          if (run.state !== "succeeded" && run.state !== "waiting") process.exitCode = 1;
        } finally {
          release();
        }
      });
    });
}
