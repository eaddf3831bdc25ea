import { readFileSync } from "node:fs";
import type { Command } from "./commander.js";
import { parseJsonText, UsageError } from "../core/index.js";
import { isAgentName, runAgent, AGENT_NAMES, type AgentName } from "../lattice/index.js";

/** The model key: one JSON line `{"api_key": …}` the supervisor writes on stdin; by hand, the credential's variable. */
function readKey(credential: string | undefined): string | undefined {
  if (!process.stdin.isTTY) {
    let text = "";
    try {
      text = readFileSync(0, "utf8");
    } catch {
      // no stdin
    }
    if (text.trim() !== "") {
      const value = parseJsonText(text, "stdin", "invalid_agent_input") as { api_key?: unknown } | null;
      if (typeof value?.api_key !== "string")
        throw new UsageError(
          "invalid_agent_input",
          `stdin must be a JSON object with a string "api_key" (the supervisor writes it); got something else`,
        );
      return value.api_key;
    }
  }
  return credential ? process.env[credential] : undefined;
}

export function registerAgentRun(program: Command): void {
  program
    .command("agent-run")
    .description(
      "run a coding agent's CLI as this sprite (started by the supervisor for a role whose runner names an agent): its stream becomes Lattice events",
    )
    .argument("<agent>", `the agent: ${AGENT_NAMES.join(", ")}`)
    .argument("[args...]", "extra arguments for the agent's CLI, after --")
    .option("--model <model>", "the agent's model")
    .option(
      "--base-url <url>",
      "the model endpoint (…/v1); default the CLI's variable (e.g. OPENAI_BASE_URL), else the vendor's",
    )
    .option(
      "--key-credential <name>",
      "the credential holding the model key (by hand: read from this environment variable)",
    )
    .option("--prompt <text>", "the task, before the entry's (PMAGENT_ENTRY_FILE)")
    .action(
      async (
        agent: string,
        args: string[],
        opts: { model?: string; baseUrl?: string; keyCredential?: string; prompt?: string },
      ) => {
        if (!isAgentName(agent))
          throw new UsageError(
            "agent_unsupported",
            `unknown agent "${agent}" (expected one of ${AGENT_NAMES.join(", ")})`,
          );
        const apiKey = readKey(opts.keyCredential);
        process.exitCode = await runAgent({
          agent: agent as AgentName,
          model: opts.model,
          baseUrl: opts.baseUrl,
          prompt: opts.prompt,
          args,
          apiKey,
        });
      },
    );
}
