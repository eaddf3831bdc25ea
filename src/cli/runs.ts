import { Option, type Command } from "./commander.js";
import {
  RUN_STATES,
  RunStore,
  followRunEvents,
  followRunLogs,
  type RunLogLine,
  UNFINISHED_RUN_STATES,
  USAGE_GROUPINGS,
  groupUsage,
  sumTokens,
  summarizeUsage,
  usageText,
  type RunState,
  type StoredEvent,
  type UsageGrouping,
} from "../lattice/runs/index.js";
import { UsageError } from "../core/index.js";
import { withProject, withStore } from "./context.js";
import { formatOption, pageOptions, print, printPage, type Format, type PageOpts } from "./output.js";
import { runLine } from "./run-line.js";
import { localActor, type Project } from "../config/light/index.js";
import type { Store } from "../store/index.js";

/** The runs of the project: reading them needs the run store only, not a supervisor (and the app it wires). */
const runsOf = (p: Project, store: Store) => new RunStore(store, p.config.project_id);

/** A supervisor, for the commands that act on runs (loaded only by them: it pulls in the app, OA and the model client). */

function eventLine(e: StoredEvent): string {
  const p = e.event.payload as Record<string, unknown>;
  const what = p.message ?? p.phase ?? p.action ?? p.kind ?? p.reason ?? p.status ?? "";
  return `${String(e.seq).padStart(5)}  ${e.event_type.padEnd(20)} ${String(what)}  [${e.source}${e.outbox_line !== null ? ` line ${e.outbox_line}` : ""}]`;
}

function logLine(l: RunLogLine): string {
  return l.stream === "stdout" ? l.text : `[${l.stream}] ${l.text}`;
}

/** `--follow` reads forward from the start: paging flags that say otherwise are refused. */
function followable(opts: { order?: string; cursor?: string; limit?: number }): void {
  if (opts.limit !== undefined)
    throw new UsageError("invalid_option", "--follow prints every event: it takes no --limit");
  if (opts.cursor !== undefined)
    throw new UsageError("invalid_option", "--follow reads from the start: it takes no --cursor");
  if (opts.order === "newest")
    throw new UsageError("invalid_option", "--follow reads oldest first: it takes no --order newest");
}

/** Print what a follower yields as it comes: a line each in text, one JSON object a line (NDJSON) in json. */
async function printFollowing<T>(
  format: Format,
  batches: AsyncIterable<T[]>,
  line: (item: T) => string,
): Promise<void> {
  for await (const batch of batches) {
    const text = batch.map((item) => (format === "json" ? JSON.stringify(item) : line(item))).join("\n");
    process.stdout.write(`${text}\n`);
  }
}

export function registerRuns(program: Command): void {
  const runs = program
    .command("runs")
    .description("runs of sprites: list, show, usage, events, logs, cancel, retry, reconcile");

  pageOptions(runs.command("list"), "oldest")
    .description("list runs in creation order, a page at a time")
    .addOption(new Option("--state <state>", "only this state").choices([...RUN_STATES]))
    .option("--role <role>", "only this role")
    .option("--entry <id>", "only runs of this entry")
    .addOption(formatOption())
    .action(
      async (opts: PageOpts & { state?: RunState; role?: string; entry?: string; format: Format }, cmd: Command) => {
        await withStore(cmd, async (p, store) => {
          const rs = runsOf(p, store);
          const page = await rs.page(
            { state: opts.state, role: opts.role, entryId: opts.entry },
            { limit: opts.limit, order: opts.order, cursor: opts.cursor },
          );
          const usage = await rs.usageOf(page.items.map((r) => r.id));
          printPage(
            opts.format,
            page,
            (r) => runLine(r, process.stdout, sumTokens(usage.get(r.id) ?? []).total_tokens),
            "no runs",
          );
        });
      },
    );

  runs
    .command("show")
    .description("one run: its record, token usage and cost, protocol errors and hard-rule violations")
    .argument("<run>", "run id")
    .addOption(formatOption())
    .action(async (id: string, opts: { format: Format }, cmd: Command) => {
      await withStore(cmd, async (p, store) => {
        const rs = runsOf(p, store);
        const run = await rs.get(id);
        const usage = summarizeUsage(await rs.usage(id), p.config.prices);
        const detail = {
          ...run,
          usage,
          protocol_errors: await rs.protocolErrors(id),
          protocol_warnings: await rs.protocolWarnings(id),
          violations: await rs.violations(id),
        };
        print(opts.format, detail, () =>
          [
            runLine(run),
            `command:    ${run.command.join(" ")}`,
            `workspace:  ${run.workspace}`,
            `machine:    ${run.host}${run.worker ? `, worker ${run.worker}` : ""}`,
            `attempts:   ${run.attempt}${run.exit_code !== null ? `, last exit code ${run.exit_code}` : ""}`,
            ...(run.gate
              ? [
                  `gate:       ${run.gate.decision}${run.gate.reasoning ? ` (${run.gate.reasoning})` : ""}${run.gate.conditions.length ? `; conditions: ${run.gate.conditions.join("; ")}` : ""}`,
                ]
              : []),
            // A finished run keeps the wait it was resumed from in its record: only a waiting one shows it.
            ...(run.waiting && run.state === "waiting"
              ? [`waiting:    ${run.waiting.reason}; expected inputs ${JSON.stringify(run.waiting.expected_inputs)}`]
              : []),
            ...(run.waiting?.context && run.state === "waiting"
              ? [`held:       ${JSON.stringify(run.waiting.context)} (goes with the resume's context)`]
              : []),
            `created:    ${run.created_at}${run.finished_at ? `, finished ${run.finished_at}` : ""}`,
            `usage:      ${usageText(usage)}`,
            ...(usage.models.length > 1
              ? usage.models.map(
                  (m) =>
                    `  ${m.model || "(model not reported)"}: ${usageText({ ...m, unpriced: m.cost === null && Object.keys(p.config.prices).length > 0 ? [m.model || "(model not reported)"] : [] })}`,
                )
              : []),
            ...detail.protocol_errors.map(
              (e) => `protocol error (${e.source}${e.line_no !== null ? ` line ${e.line_no}` : ""}): ${e.reason}`,
            ),
            ...detail.protocol_warnings.map(
              (e) => `protocol warning (${e.source}${e.line_no !== null ? ` line ${e.line_no}` : ""}): ${e.reason}`,
            ),
            ...detail.violations.map((v) => `hard-rule violation ${v.rule}: ${v.detail}`),
          ].join("\n"),
        );
      });
    });

  runs
    .command("usage")
    .description("token usage and cost of runs, grouped by role, cycle, day or model")
    .addOption(new Option("--by <grouping>", "what to group by").choices([...USAGE_GROUPINGS]).default("role"))
    .option("--role <role>", "only runs of this role")
    .addOption(formatOption())
    .action(async (opts: { by: UsageGrouping; role?: string; format: Format }, cmd: Command) => {
      await withStore(cmd, async (p, store) => {
        const rs = runsOf(p, store);
        const all = await rs.list({ role: opts.role });
        const usage = await rs.usageOf(all.map((r) => r.id));
        const groups = groupUsage(p.config, all, usage, opts.by);
        const total = summarizeUsage([...usage.values()].flat(), p.config.prices);
        const { models: _models, ...totals } = total;
        print(opts.format, { by: opts.by, groups, total: totals }, () =>
          groups.length === 0
            ? "no usage reported"
            : [
                ...groups.map((g) => `${g.key}  ${g.runs} run${g.runs === 1 ? "" : "s"}  ${usageText(g)}`),
                `total  ${usageText(total)}`,
              ].join("\n"),
        );
      });
    });

  pageOptions(runs.command("events"), "oldest")
    .description("a run's events, each once, in the order they were stored, a page at a time")
    .argument("<run>", "run id")
    .option("--type <type>", "only this event type")
    .option(
      "--follow",
      "print every event, then new ones as they are stored, until the run ends (json: one event a line)",
    )
    .addOption(formatOption())
    .action(async (id: string, opts: PageOpts & { type?: string; follow?: boolean; format: Format }, cmd: Command) => {
      if (opts.follow) followable(opts);
      await withStore(cmd, async (p, store) => {
        if (opts.follow)
          return printFollowing(opts.format, followRunEvents(runsOf(p, store), id, { type: opts.type }), eventLine);
        const page = await runsOf(p, store).eventsPage(
          id,
          { type: opts.type },
          { limit: opts.limit, order: opts.order, cursor: opts.cursor },
        );
        printPage(opts.format, page, eventLine, "no events");
      });
    });

  runs
    .command("logs")
    .description("a run's non-event output (stdout and stderr, capped, secrets redacted)")
    .argument("<run>", "run id")
    .addOption(new Option("--stream <stream>", "only this stream").choices(["stdout", "stderr", "supervisor"]))
    .option(
      "--follow",
      "print the log, then new lines as they are stored, until the run ends (json: one line object a line)",
    )
    .addOption(formatOption())
    .action(async (id: string, opts: { stream?: string; follow?: boolean; format: Format }, cmd: Command) => {
      await withStore(cmd, async (p, store) => {
        if (opts.follow)
          return printFollowing(opts.format, followRunLogs(runsOf(p, store), id, { stream: opts.stream }), logLine);
        const logs = await runsOf(p, store).logs(id, { stream: opts.stream });
        print(opts.format, logs, () => logs.map(logLine).join("\n"));
      });
    });

  runs
    .command("cancel")
    .description("cancel a run: its sprite is stopped and its entry canceled")
    .argument("<run>", "run id")
    .option("--reason <text>", "why (kept on the run)", "canceled by a user")
    .addOption(formatOption())
    .action(async (id: string, opts: { reason: string; format: Format }, cmd: Command) => {
      await withProject(cmd, async (o) => {
        const run = await (await o.supervisor()).cancel(id, opts.reason);
        print(opts.format, run, () => `canceled: ${runLine(run)}`);
      });
    });

  runs
    .command("retry")
    .description(
      "run a finished run's entry again and wait for the new run: with the same command, or --agent another agent a role of the config runs; an entry already finished is re-opened as a new entry first",
    )
    .argument("<run>", "the finished run's id")
    .option(
      "--agent <name>",
      "another configured agent (codex, claude or gemini as a role of the config runs it; default: the run's own command)",
    )
    .option(
      "--as <actor>",
      "who asks (a human of the config; default: $PMAGENT_ACTOR, else the first configured human)",
    )
    .addOption(formatOption())
    .action(async (id: string, opts: { agent?: string; as?: string; format: Format }, cmd: Command) => {
      await withProject(cmd, async (o) => {
        const sup = await o.supervisor();
        const { rerun } = await import("../lattice/index.js");
        const again = await rerun(sup, id, { actor: localActor(o.config, opts.as), agent: opts.agent, where: "cli" });
        const runId = await again.recorded;
        process.stderr.write(
          `running ${runId} on entry ${again.entryId}${again.reopenedFrom ? ` (re-opened from ${again.reopenedFrom})` : ""}\n`,
        );
        const run = await again.finished;
        print(opts.format, { run, entry_id: again.entryId, reopened_from: again.reopenedFrom }, () =>
          runLine(run, process.stdout),
        );
        if (run.state !== "succeeded") process.exitCode = 1;
      });
    });

  runs
    .command("reconcile")
    .description(
      "after a supervisor crash or a store fault: take over this host's unfinished runs (re-attach live sprites, store what their outboxes hold) and wait for them; exits 1 if one is left unfinished again",
    )
    .addOption(formatOption())
    .action(async (opts: { format: Format }, cmd: Command) => {
      await withProject(cmd, async (o) => {
        const settled = await (await o.supervisor()).reconcile();
        print(opts.format, settled, () =>
          settled.length
            ? settled.map((r) => runLine(r, process.stdout)).join("\n")
            : "no unfinished runs to reconcile",
        );
        // A run still unfinished was left again (its events could not be stored: the reason says why).
        if (settled.some((r) => UNFINISHED_RUN_STATES.includes(r.state))) process.exitCode = 1;
      });
    });
}
