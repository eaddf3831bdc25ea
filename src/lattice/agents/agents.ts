/**
 * Coding-agent CLIs as sprites. A role's runner `{"agent": "codex", "model": …, "args": […]}`
 * runs `pmagent agent-run codex …` (agent-runner.ts) in the sprite's sandbox; the supervisor sends it
 * the model key on stdin (agentStdin), read from the credential the role may receive.
 */
import type { Config, RoleConfig, RunnerConfig } from "../../config/index.js";
import { RefusedError, UsageError } from "../../core/index.js";
import { driverFor, isAgentName } from "./registry.js";
import type { AgentName } from "./types.js";

export {
  AGENT_NAMES,
  type AgentDriver,
  type AgentName,
  type AgentSettings,
  type MappedEvent,
  type StreamState,
} from "./types.js";
export { driverFor, isAgentName } from "./registry.js";
export { findAgentCli, runAgent, type AgentRunOptions } from "./runner.js";
export { protocolInstructions, resumeText, taskText } from "./instructions.js";

export interface AgentCommandInput {
  agent: AgentName;
  model?: string;
  baseUrl?: string;
  keyCredential?: string;
  prompt?: string;
  args?: string[];
}

/** The sprite argv of an agent run (the `pmagent` launcher is on every sprite's PATH). */
export function agentCommand(i: AgentCommandInput): string[] {
  driverFor(i.agent); // an agent without a driver is refused before a run exists
  return [
    "pmagent",
    "agent-run",
    i.agent,
    ...(i.model ? ["--model", i.model] : []),
    ...(i.baseUrl ? ["--base-url", i.baseUrl] : []),
    "--key-credential",
    i.keyCredential ?? driverFor(i.agent).defaultKeyCredential,
    ...(i.prompt ? ["--prompt", i.prompt] : []),
    ...(i.args?.length ? ["--", ...i.args] : []),
  ];
}

/** A role runner's argv: its command, or the agent run it names (endpoint default: config `model.base_url`). */
export function runnerArgv(runner: RunnerConfig | undefined, config: Pick<Config, "model">): string[] | undefined {
  if (!runner) return undefined;
  if (runner.command) return runner.command;
  if (!runner.agent) return undefined;
  return agentCommand({
    agent: runner.agent,
    model: runner.model,
    baseUrl: runner.base_url ?? defaultEndpoint(runner.agent, config),
    keyCredential: runner.key_credential,
    args: runner.args,
  });
}

/** Config `model.base_url` for an agent whose CLI speaks the OpenAI API (Codex); none for the others. */
export function defaultEndpoint(agent: AgentName, config: Pick<Config, "model">): string | undefined {
  return driverFor(agent).openaiEndpoint ? config.model?.base_url : undefined;
}

/** The agent and key credential of an agent run's argv (see agentCommand); null for any other sprite. */
export function agentOfCommand(command: readonly string[]): { agent: string; keyCredential: string } | null {
  if (command[0] !== "pmagent" || command[1] !== "agent-run" || !command[2]) return null;
  const end = command.indexOf("--");
  const flags = end === -1 ? command : command.slice(0, end);
  const at = flags.indexOf("--key-credential");
  const agent = command[2];
  const keyCredential =
    at !== -1 && flags[at + 1] ? flags[at + 1]! : isAgentName(agent) ? driverFor(agent).defaultKeyCredential : "";
  return { agent, keyCredential };
}

/**
 * What the supervisor writes on an agent run's stdin: the model key, read from the credential
 * the role may receive (config `credentials`), so it is in no argument, file or event. Null for
 * a sprite that is not an agent run.
 */
export function agentStdin(
  command: readonly string[],
  role: RoleConfig,
  credential: (name: string) => string,
): string | null {
  const a = agentOfCommand(command);
  if (!a) return null;
  if (!role.credentials.includes(a.keyCredential)) {
    throw new RefusedError(
      "agent_key_not_allowed",
      `role ${role.name} runs agent ${a.agent} with the model key ${a.keyCredential}, which the role may not receive: add "${a.keyCredential}" to its "credentials" in pmagent.config.json (or name another with runner.key_credential)`,
    );
  }
  let key: string;
  try {
    key = credential(a.keyCredential);
  } catch (err) {
    throw new UsageError(
      "agent_key_missing",
      `the model key ${a.keyCredential} for agent ${a.agent} is not set: ${(err as Error).message}`,
    );
  }
  return `${JSON.stringify({ api_key: key })}\n`;
}
