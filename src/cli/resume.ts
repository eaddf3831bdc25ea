import type { Command } from "./commander.js";
import { UsageError, parseJsonText } from "../core/index.js";
import { formatInputType, parseInputType } from "../lattice/index.js";
import { withProject } from "./context.js";
import { formatOption, print, readInput, type Format } from "./output.js";
import { cancelOnSignals } from "./run.js";
import { runLine } from "./run-line.js";

/** `--input key=value` values, parsed per the WAITING event's expected type (integer, boolean, map/array as JSON). */
export function parseInputFlags(pairs: string[], expected: Record<string, string>): Record<string, unknown> {
  const inputs: Record<string, unknown> = {};
  const names = Object.keys(expected);
  for (const pair of pairs) {
    const eq = pair.indexOf("=");
    if (eq <= 0) throw new UsageError("invalid_option", `--input expects key=value, got "${pair}"`);
    const key = pair.slice(0, eq);
    const text = pair.slice(eq + 1);
    const typeName = expected[key];
    if (typeName === undefined)
      throw new UsageError(
        "invalid_option",
        `--input ${key}: not in the run's expected_inputs (expected ${names.length ? names.join(", ") : "no inputs"})`,
      );
    if (key in inputs) throw new UsageError("invalid_option", `--input ${key} is given twice`);
    const parsed = parseInputType(typeName);
    const type = parsed.ok ? parsed.type : { kind: "string" as const };
    if (type.kind === "string") inputs[key] = text;
    else if (type.kind === "integer") {
      if (!/^-?\d+$/.test(text))
        throw new UsageError("invalid_option", `--input ${key} expects an integer, got "${text}"`);
      inputs[key] = Number(text);
    } else if (type.kind === "boolean") {
      if (text !== "true" && text !== "false")
        throw new UsageError("invalid_option", `--input ${key} expects true or false, got "${text}"`);
      inputs[key] = text === "true";
    } else inputs[key] = parseJsonText(text, `--input ${key} (${formatInputType(type)}, as JSON)`, "invalid_option");
  }
  return inputs;
}

export function registerResume(program: Command): void {
  program
    .command("resume")
    .description(
      "resume a waiting run: inputs checked against its expected_inputs, checkpoint restored, resume.json written, sprite relaunched (the same resume twice is a no-op)",
    )
    .argument("<run>", "run id")
    .option(
      "--input <key=value>",
      "one input (repeatable); parsed per its expected type",
      (v: string, acc: string[]) => [...acc, v],
      [] as string[],
    )
    .option("--inputs-file <file>", "all inputs as one JSON object (- for standard input)")
    .option("--context-json <json>", "the resume context, a JSON object")
    .option(
      "--message <text>",
      "a follow-up message to the agent, beside the inputs: it reaches the agent's resumed session (resume.json context.message)",
    )
    .option(
      "--queue",
      "check the inputs and leave the resume to a worker of the run's role, on any machine (pmagent worker), instead of running the sprite here",
    )
    .addOption(formatOption())
    .action(
      async (
        id: string,
        opts: {
          input: string[];
          inputsFile?: string;
          contextJson?: string;
          message?: string;
          queue?: boolean;
          format: Format;
        },
        cmd: Command,
      ) => {
        if (opts.input.length > 0 && opts.inputsFile)
          throw new UsageError("invalid_option", "give the inputs either with --input or with --inputs-file, not both");
        let context: Record<string, unknown> | undefined;
        if (opts.contextJson !== undefined) {
          const c = parseJsonText(opts.contextJson, "--context-json", "invalid_option");
          if (c === null || typeof c !== "object" || Array.isArray(c))
            throw new UsageError("invalid_option", "--context-json expects a JSON object");
          context = c as Record<string, unknown>;
        }
        let fileInputs: Record<string, unknown> | undefined;
        if (opts.inputsFile) {
          const source = opts.inputsFile === "-" ? "standard input" : opts.inputsFile;
          const v = parseJsonText(await readInput(opts.inputsFile), source, "invalid_input");
          if (v === null || typeof v !== "object" || Array.isArray(v))
            throw new UsageError("invalid_input", `${source} must hold one JSON object of inputs`);
          fileInputs = v as Record<string, unknown>;
        }
        await withProject(cmd, async (o) => {
          const sup = await o.supervisor();
          const run = await sup.runs.get(id);
          const inputs = fileInputs ?? parseInputFlags(opts.input, run.waiting?.expected_inputs ?? {});
          if (opts.queue) {
            const queued = await sup.queueResume(id, { inputs, context, message: opts.message });
            print(
              opts.format,
              { queued: true, noop: queued.noop, run: queued.run },
              () =>
                `${queued.noop ? "queued already with these inputs" : "queued"}: a worker of ${queued.run.role} resumes it (pmagent worker --role ${queued.run.role}, on any machine)\n${runLine(queued.run)}`,
            );
            return;
          }
          const release = cancelOnSignals(sup, () => id);
          try {
            const result = await sup.resumeRun(id, { inputs, context, message: opts.message });
            if (result.noop) {
              print(
                opts.format,
                { noop: true, run: result.run },
                () => `already resumed with this checkpoint and payload: nothing done (${runLine(result.run)})`,
              );
              return;
            }
            const done = await result.finished;
            print(opts.format, { noop: false, run: done }, () => runLine(done));
            if (done.state !== "succeeded" && done.state !== "waiting") process.exitCode = 1;
          } finally {
            release();
          }
        });
      },
    );
}
