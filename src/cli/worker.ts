import type { Command } from "./commander.js";
import { plural, UsageError } from "../core/index.js";
import type { Config } from "../config/index.js";
import { Worker, type RunRecord } from "../lattice/index.js";
import { project, withStore } from "./context.js";
import { formatOption, intOption, paint, type Format } from "./output.js";
import { runLine } from "./run-line.js";
import { StatusLine } from "./status-line.js";

interface WorkerFlags {
  role: string[];
  workerId?: string;
  pollMs?: number;
  once?: boolean;
  concurrency: number;
  format: Format;
}

function configuredRoles(config: Config): string[] {
  return config.lanes.flatMap((l) => l.roles.map((r) => r.name));
}

/** "3 runs (2 succeeded, 1 failed)" */
function tally(done: Map<string, number>): string {
  const total = [...done.values()].reduce((a, b) => a + b, 0);
  return total === 0
    ? "no runs"
    : `${plural(total, "run")} (${[...done].map(([state, n]) => `${n} ${state}`).join(", ")})`;
}

const clock = () => new Date().toTimeString().slice(0, 8);
const seconds = (since: number) => `${Math.round((Date.now() - since) / 1000)}s`;

export function registerWorker(program: Command): void {
  program
    .command("worker")
    .description(
      "claim open entries for the given roles (pick rule, leases) and run each role's runner.command, until SIGINT/SIGTERM; a run under way is stopped and its entry left for another worker. " +
        "Results (one line per finished run) go to stdout; what the worker does goes to stderr, with a live status line on a terminal",
    )
    // Not requiredOption: with a default of [] commander would count it as given.
    .option(
      "--role <role>",
      "a role to serve (repeatable; at least one)",
      (v: string, acc: string[]) => [...acc, v],
      [] as string[],
    )
    .option("--worker-id <id>", "claimer identity (default worker@host:pid)")
    .option("--poll-ms <ms>", "how often to look for work when nothing wakes the worker", intOption("--poll-ms", 10))
    .option("--once", "stop when no entry is open instead of waiting for more")
    .option(
      "--concurrency <n>",
      "how many runs at once in this one process (each claims on its own)",
      intOption("--concurrency", 1, 64),
      1,
    )
    .addOption(formatOption())
    .action(async (opts: WorkerFlags, cmd: Command) => {
      if (opts.role.length === 0) {
        const roles = configuredRoles((await project(cmd)).config);
        throw new UsageError(
          "missing_role",
          roles.length === 0
            ? "worker needs at least one --role, and pmagent.config.json configures none: add lanes[].roles to it"
            : `worker needs at least one --role ROLE (repeatable); the configured roles are ${roles.join(", ")}: e.g. pmagent worker --role ${roles[0]}`,
        );
      }
      await withStore(cmd, async (p, store, o) => {
        const err = process.stderr;
        const done = new Map<string, number>();
        // What each slot is doing, by the entry it claimed.
        const doing = new Map<string, { text: string; since: number }>();
        let idle = false;
        const status = new StatusLine(() => {
          if (doing.size === 0) return `waiting for open entries for ${opts.role.join(", ")} · ${tally(done)}`;
          const [first] = doing.values();
          return doing.size === 1
            ? `${first!.text} · ${seconds(first!.since)}`
            : `${doing.size} runs under way (${first!.text} · ${seconds(first!.since)}, …) · ${tally(done)}`;
        });
        const say = (text: string) => status.line(`${clock()} ${text}`);
        const finished = (run: RunRecord) => {
          done.set(run.state, (done.get(run.state) ?? 0) + 1);
          if (run.entry_id !== null) doing.delete(run.entry_id);
          if (opts.format === "json") status.line(JSON.stringify(run), process.stdout);
          else status.line(runLine(run, process.stdout), process.stdout);
        };
        const worker = new Worker({
          supervisor: await o.supervisor(),
          roles: opts.role,
          id: opts.workerId,
          pollMs: opts.pollMs,
          once: opts.once,
          concurrency: opts.concurrency,
          onClaimed: (role, s) => {
            idle = false;
            doing.set(s.entry.id, { text: `${role}: claimed ${s.entry.id}`, since: Date.now() });
            say(`claimed ${s.entry.id} (${s.entry.kind}) for ${role}`);
          },
          onStarted: (id, role, entryId) => {
            doing.set(entryId, { text: `${role}: running ${id} on ${entryId}`, since: Date.now() });
            say(`${paint(err, "cyan", "running")} ${id}: ${role} on ${entryId}`);
          },
          onIdle: () => {
            if (!idle) say(`waiting for open entries for ${opts.role.join(", ")}`);
            idle = true;
            status.draw();
          },
          onRun: finished,
        });
        const stop = new AbortController();
        let stoppedBy: string | undefined;
        const onSignal = (signal: NodeJS.Signals) => {
          stoppedBy = signal;
          stop.abort();
        };
        process.once("SIGINT", onSignal);
        process.once("SIGTERM", onSignal);
        say(
          `worker ${worker.id} serves ${opts.role.join(", ")}${opts.concurrency > 1 ? `, ${opts.concurrency} runs at once` : ""} (store ${store.location})${opts.once ? "; it stops when nothing is open" : "; SIGINT (Ctrl-C) or SIGTERM stops it"}`,
        );
        try {
          await worker.run(stop.signal);
        } finally {
          process.off("SIGINT", onSignal);
          process.off("SIGTERM", onSignal);
          status.stop();
        }
        say(`stopped (${stoppedBy ?? "nothing open"}): ${tally(done)}`);
      });
    });
}
