import type { Command } from "commander";
import { Worker } from "../lattice/index.js";
import { withStore } from "./context.js";
import { intOption } from "./output.js";
import { runLine, supervisorFor } from "./run.js";

export function registerWorker(program: Command): void {
  program
    .command("worker")
    .description("claim open entries for the given roles (pick rule, leases) and run each role's runner.command, until SIGINT/SIGTERM; a run under way is stopped and its entry left for another worker")
    .requiredOption("--role <role>", "a role to serve (repeatable)", (v: string, acc: string[]) => [...acc, v], [] as string[])
    .option("--worker-id <id>", "claimer identity (default worker@host:pid)")
    .option("--poll-ms <ms>", "how often to look for work when nothing wakes the worker", intOption("--poll-ms", 10))
    .option("--once", "stop when no entry is open instead of waiting for more")
    .action(async (opts: { role: string[]; workerId?: string; pollMs?: number; once?: boolean }, cmd: Command) => {
      await withStore(cmd, async (p, store) => {
        const worker = new Worker({
          supervisor: supervisorFor(p, store),
          roles: opts.role,
          id: opts.workerId,
          pollMs: opts.pollMs,
          once: opts.once,
          onRun: (run) => process.stdout.write(`${runLine(run)}\n`),
        });
        const stop = new AbortController();
        const onSignal = () => stop.abort();
        process.once("SIGINT", onSignal);
        process.once("SIGTERM", onSignal);
        try {
          await worker.run(stop.signal);
        } finally {
          process.off("SIGINT", onSignal);
          process.off("SIGTERM", onSignal);
        }
      });
    });
}
