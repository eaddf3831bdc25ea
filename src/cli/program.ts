import { Command, CommanderError } from "commander";
import { readFileSync } from "node:fs";
import { PmagentError, exitCodeFor } from "../core/index.js";
import { registerInit } from "./init.js";
import { registerBb } from "./bb.js";
import { registerDemo } from "./demo.js";
import { registerPrompt } from "./prompt.js";
import { registerOa, registerBoot } from "./oa.js";
import { registerKai } from "./kai.js";
import { registerEmit } from "./emit.js";
import { registerCheckpoint } from "./checkpoint.js";
import { registerResumeInfo } from "./resume-info.js";
import { registerRun } from "./run.js";
import { registerRuns } from "./runs.js";
import { registerResume } from "./resume.js";
import { registerWorker } from "./worker.js";
import { registerEnv } from "./env.js";
import { registerPrs } from "./prs.js";
import { registerServe } from "./serve.js";
import { registerMcp } from "./mcp.js";

const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };

export const EXIT_CODES_HELP = `
Exit codes:
  0  success
  1  refused or failed (a rule refused the change, something was not found, a dependency failed)
  2  usage error (bad flag, bad input file, invalid config)
  3  pmagent boot oa: the kernel is BLOCKED`;

/** Command groups register themselves here, one file per group. */
const groups: Array<(program: Command) => void> = [registerInit, registerDemo, registerBb, registerPrompt, registerOa, registerBoot, registerKai, registerEmit, registerCheckpoint, registerResumeInfo, registerRun, registerRuns, registerResume, registerWorker, registerEnv, registerPrs, registerServe, registerMcp];

export function buildProgram(): Command {
  const program = new Command("pmagent")
    .description("Control plane for teams of AI agents working on a repository: blackboard, Lattice supervisor, prompt contract, OA and Kai.")
    .version(pkg.version)
    .option("--config <file>", "pmagent.config.json to use (default: found by walking up from the working directory)")
    .showHelpAfterError()
    .addHelpText("after", EXIT_CODES_HELP);
  for (const register of groups) register(program);
  // Every subcommand reports usage errors with exit 2 and documents the exit codes.
  const visit = (cmd: Command) => {
    cmd.exitOverride();
    for (const sub of cmd.commands) {
      sub.addHelpText("after", EXIT_CODES_HELP);
      visit(sub);
    }
  };
  visit(program);
  return program;
}

export function reportError(err: unknown): number {
  if (err instanceof CommanderError) {
    // Help and version are not errors; commander has already printed what it had to.
    if (err.code === "commander.helpDisplayed" || err.code === "commander.version" || err.code === "commander.help") return 0;
    return 2;
  }
  if (err instanceof PmagentError) {
    process.stderr.write(`pmagent: ${err.message} [${err.code}]\n`);
    return exitCodeFor(err);
  }
  process.stderr.write(`pmagent: unexpected error: ${(err as Error)?.stack ?? String(err)}\n`);
  return 1;
}

export async function main(argv: string[]): Promise<number> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv, { from: "user" });
    return typeof process.exitCode === "number" ? process.exitCode : 0;
  } catch (err) {
    return reportError(err);
  }
}
