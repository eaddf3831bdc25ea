import { readFileSync } from "node:fs";
import { Command, CommanderError } from "./commander.js";
const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };

export const EXIT_CODES_HELP = `
Exit codes:
  0  success
  1  refused or failed (a rule refused the change, something was not found, a dependency failed)
  2  usage error (bad flag, bad input file, invalid config)
  3  pmagent boot oa: the kernel is BLOCKED`;

type Register = (program: Command) => void;

export interface Group {
  /** The one line `pmagent --help` lists the command with (the group is not loaded for it). */
  summary: string;
  load: () => Promise<Register>;
}

/**
 * Command name → the group (one file each) that defines it. A group is loaded only when its
 * command runs or its help is asked for, so `pmagent emit` from a shell sprite does not load the
 * supervisor, the HTTP server or the model client, and `pmagent --help`, `--version` and an
 * unknown command load none (the help lists the commands from `summary`).
 */
export const groups: Readonly<Record<string, Group>> = {
  init: {
    summary: "write pmagent.config.json, create the store and add .pmagent/ to .gitignore",
    load: async () => (await import("./init.js")).registerInit,
  },
  demo: {
    summary: "run one whole doc_update lane cycle in a fresh temporary repository",
    load: async () => (await import("./demo.js")).registerDemo,
  },
  bb: {
    summary: "the blackboard: post, claim, update and inspect entries; sync with GitHub",
    load: async () => (await import("./bb.js")).registerBb,
  },
  prompt: {
    summary: "the chat-codex prompt contract: build a role agent's Responses API request",
    load: async () => (await import("./prompt.js")).registerPrompt,
  },
  agent: {
    summary: "the LLM role agent, run as a sprite: answer a work item through the model",
    load: async () => (await import("./agent.js")).registerAgent,
  },
  "agent-run": {
    summary: "run a coding agent's CLI (codex, claude, gemini) as a sprite, its stream mapped to Lattice events",
    load: async () => (await import("./agent-run.js")).registerAgentRun,
  },
  oa: {
    summary: "Orchestrator Assistant: kernel surfaces, coherence guards, reasoning programs",
    load: async () => (await import("./oa.js")).registerOa,
  },
  boot: { summary: "boot an assistant session", load: async () => (await import("./oa.js")).registerBoot },
  kai: { summary: "Kai: lane status and what changed", load: async () => (await import("./kai.js")).registerKai },
  emit: {
    summary: "emit a Lattice event from a sprite (stdout and the outbox)",
    load: async () => (await import("./emit.js")).registerEmit,
  },
  checkpoint: {
    summary: "content-addressed snapshots of a sprite's workspace",
    load: async () => (await import("./checkpoint.js")).registerCheckpoint,
  },
  "resume-info": {
    summary: "for sprites: print .lattice/resume.json and whether it is a replay",
    load: async () => (await import("./resume-info.js")).registerResumeInfo,
  },
  run: {
    summary: "run one sprite for a role and supervise it until it finishes or waits",
    load: async () => (await import("./run.js")).registerRun,
  },
  runs: {
    summary: "runs of sprites: list, show, usage, events, logs, cancel, retry, reconcile",
    load: async () => (await import("./runs.js")).registerRuns,
  },
  resume: {
    summary: "resume a waiting run with its inputs",
    load: async () => (await import("./resume.js")).registerResume,
  },
  worker: {
    summary: "claim open entries for roles and run their sprites until stopped",
    load: async () => (await import("./worker.js")).registerWorker,
  },
  env: {
    summary:
      "environment proposals from sprites: list, accept (apply), reject; show a role's environment, undo a change",
    load: async () => (await import("./env.js")).registerEnv,
  },
  prs: {
    summary: "pull requests of the local forge (projects without GitHub)",
    load: async () => (await import("./prs.js")).registerPrs,
  },
  "lane-sprite": {
    summary: "run a built-in doc_update lane sprite (aya, sho, tsugu, gen, hana)",
    load: async () => (await import("./lane.js")).registerLane,
  },
  serve: {
    summary: "HTTP API, live run events (SSE), MCP and the web console",
    load: async () => (await import("./serve.js")).registerServe,
  },
  mcp: { summary: "Model Context Protocol server on stdio", load: async () => (await import("./mcp.js")).registerMcp },
  completion: {
    summary: "print a shell completion script: pmagent completion bash|zsh|fish",
    load: async () => (await import("./completion.js")).registerCompletion(groups),
  },
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
    .description(
      "Control plane for teams of AI agents working on a repository: blackboard, Lattice supervisor, prompt contract, OA and Kai.",
    )
    .version(pkg.version)
    .option("--config <file>", "pmagent.config.json to use (default: found by walking up from the working directory)")
    .showHelpAfterError()
    .addHelpText("after", EXIT_CODES_HELP);
  const name = commandOf(argv);
  if (name !== undefined && Object.hasOwn(groups, name)) {
    (await groups[name]!.load())(program);
  } else {
    // Help, version, no command or an unknown one: the commands are listed (and suggested) by name only.
    for (const [command, group] of Object.entries(groups)) {
      program
        .command(command)
        .summary(group.summary)
        .allowUnknownOption()
        .allowExcessArguments()
        .action(() => {
          throw new Error(
            `command ${command} was parsed without its group loaded (argv: ${argv.join(" ")}); this is a bug in pmagent`,
          );
        });
    }
  }
  // Every subcommand reports usage errors with exit 2 and documents the exit codes. Under
  // --format json, commander prints nothing: reportError prints the error as JSON.
  const json = jsonErrors(argv);
  const visit = (cmd: Command) => {
    cmd.exitOverride();
    if (json) cmd.showHelpAfterError(false).configureOutput({ outputError: () => undefined });
    for (const sub of cmd.commands) {
      sub.addHelpText("after", EXIT_CODES_HELP);
      visit(sub);
    }
  };
  visit(program);
  return program;
}

/**
 * Whether errors are printed as JSON: the command line asks for `--format json` (before a `--`
 * that starts a sprite's argv). Read from argv, not from the parsed options, so that a flag
 * commander refuses before any option is parsed is reported as JSON too.
 */
export function jsonErrors(argv: readonly string[]): boolean {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "--") return false;
    if (a === "--format=json" || (a === "--format" && argv[i + 1] === "json")) return true;
  }
  return false;
}

/** `commander.unknownOption` → `unknown_option`: commander's codes in the project's snake_case. */
function commanderCode(code: string): string {
  return code.replace(/^commander\./, "").replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

/** Print an error (JSON on stderr under --format json) and return the exit code it maps to. */
export async function reportError(err: unknown, argv: readonly string[] = []): Promise<number> {
  const json = jsonErrors(argv);
  const write = (error: { code: string; message: string; details?: Record<string, unknown> }) =>
    process.stderr.write(`${JSON.stringify({ error })}\n`);
  if (err instanceof CommanderError) {
    // Help and version are not errors; commander has already printed what it had to. A command
    // given without its subcommand gets its help on stderr (exit code 1 from commander): usage.
    if (err.code === "commander.helpDisplayed" || err.code === "commander.version") return 0;
    if (err.code === "commander.help" && err.exitCode === 0) return 0;
    if (json)
      write({
        code: commanderCode(err.code),
        message:
          err.code === "commander.help" ? "a subcommand is required (see --help)" : err.message.replace(/^error: /, ""),
      });
    return 2;
  }
  // Loaded here, not up front: `--version` and `--help` need neither core nor its zod and pino
  // (a command that ran has loaded it already).
  const { PmagentError, exitCodeFor } = await import("../core/index.js");
  if (err instanceof PmagentError) {
    if (json) write(err.toJSON());
    else {
      const { paint } = await import("./output.js");
      process.stderr.write(`${paint(process.stderr, "red", "pmagent:")} ${err.message} [${err.code}]\n`);
    }
    return exitCodeFor(err);
  }
  // Not raised on purpose: a bug, reported with its stack (the message only, under JSON).
  if (json) write({ code: "internal_error", message: (err as Error)?.message ?? String(err) });
  else process.stderr.write(`pmagent: unexpected error: ${(err as Error)?.stack ?? String(err)}\n`);
  return 1;
}

export async function main(argv: string[]): Promise<number> {
  const program = await buildProgram(argv);
  try {
    await program.parseAsync(argv, { from: "user" });
    return typeof process.exitCode === "number" ? process.exitCode : 0;
  } catch (err) {
    return await reportError(err, argv);
  }
}
