import { Command, CommanderError } from "commander";
import { readFileSync } from "node:fs";
import { PmagentError, exitCodeFor } from "../core/index.js";
const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };

export const EXIT_CODES_HELP = `
Exit codes:
  0  success
  1  refused or failed (a rule refused the change, something was not found, a dependency failed)
  2  usage error (bad flag, bad input file, invalid config)
  3  pmagent boot oa: the kernel is BLOCKED`;

type Register = (program: Command) => void;

/**
 * Command name → the group (one file each) that defines it. A group is loaded only when its
 * command runs, so `pmagent emit` from a shell sprite does not load the supervisor, the HTTP server
 * or the model client; help and unknown commands load them all.
 */
export const groups: Readonly<Record<string, () => Promise<Register>>> = {
  init: async () => (await import("./init.js")).registerInit,
  demo: async () => (await import("./demo.js")).registerDemo,
  bb: async () => (await import("./bb.js")).registerBb,
  prompt: async () => (await import("./prompt.js")).registerPrompt,
  agent: async () => (await import("./agent.js")).registerAgent,
  oa: async () => (await import("./oa.js")).registerOa,
  boot: async () => (await import("./oa.js")).registerBoot,
  kai: async () => (await import("./kai.js")).registerKai,
  emit: async () => (await import("./emit.js")).registerEmit,
  checkpoint: async () => (await import("./checkpoint.js")).registerCheckpoint,
  "resume-info": async () => (await import("./resume-info.js")).registerResumeInfo,
  run: async () => (await import("./run.js")).registerRun,
  runs: async () => (await import("./runs.js")).registerRuns,
  resume: async () => (await import("./resume.js")).registerResume,
  worker: async () => (await import("./worker.js")).registerWorker,
  env: async () => (await import("./env.js")).registerEnv,
  prs: async () => (await import("./prs.js")).registerPrs,
  "lane-sprite": async () => (await import("./lane.js")).registerLane,
  serve: async () => (await import("./serve.js")).registerServe,
  mcp: async () => (await import("./mcp.js")).registerMcp,
};

/** The command an argv names (after global options; `help X` names X), if any. */
export function commandOf(argv: readonly string[]): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "--config") {
      i++;
      continue;
    }
    if (a.startsWith("-")) continue;
    return a === "help" ? argv[i + 1] : a;
  }
  return undefined;
}

export async function buildProgram(argv: readonly string[] = []): Promise<Command> {
  const program = new Command("pmagent")
    .description("Control plane for teams of AI agents working on a repository: blackboard, Lattice supervisor, prompt contract, OA and Kai.")
    .version(pkg.version)
    .option("--config <file>", "pmagent.config.json to use (default: found by walking up from the working directory)")
    .showHelpAfterError()
    .addHelpText("after", EXIT_CODES_HELP);
  const name = commandOf(argv);
  const loaders = name !== undefined && Object.hasOwn(groups, name) ? [groups[name]!] : [...new Set(Object.values(groups))];
  for (const register of new Set(await Promise.all(loaders.map((load) => load())))) register(program);
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
  const program = await buildProgram(argv);
  try {
    await program.parseAsync(argv, { from: "user" });
    return typeof process.exitCode === "number" ? process.exitCode : 0;
  } catch (err) {
    return reportError(err);
  }
}
