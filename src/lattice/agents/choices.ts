/**
 * The agents a person may pick for a role's runs (a hosted worker's agent, "run again with another
 * agent"): each coding-agent CLI some role of the config runs, with that role's runner settings
 * (model, endpoint, key credential, arguments). A role running the agent itself uses its own.
 */
import { allRoles, type Config, type RoleConfig, type RunnerConfig } from "../../config/index.js";
import { RefusedError, UsageError } from "../../core/index.js";
import { agentOfCommand, runnerArgv } from "./agents.js";
import type { AgentName } from "./types.js";

export interface ConfiguredAgent {
  name: AgentName;
  /** The role whose runner gives its settings (the first role of the config running it). */
  role: string;
  model: string | null;
}

/** The agents the config's roles run, once each, in config order. */
export function configuredAgents(config: Config): ConfiguredAgent[] {
  const seen = new Map<AgentName, ConfiguredAgent>();
  for (const { role } of allRoles(config)) {
    const agent = role.runner?.agent;
    if (agent && !seen.has(agent)) seen.set(agent, { name: agent, role: role.name, model: role.runner?.model ?? null });
  }
  return [...seen.values()];
}

function runnerOf(config: Config, name: AgentName): RunnerConfig {
  return allRoles(config).find(({ role }) => role.runner?.agent === name)!.role.runner!;
}

/**
 * The sprite argv of a run of `role` by `agent` (its own runner when the agent is left out or is
 * the one it runs). Refused when the agent is not configured, or when the role may not receive
 * its model key (so no run is started only to fail on it).
 */
export function agentArgv(config: Config, role: RoleConfig, agent: string | undefined): string[] | undefined {
  if (agent === undefined || agent === role.runner?.agent) return runnerArgv(role.runner, config);
  const known = configuredAgents(config);
  const found = known.find((a) => a.name === agent);
  if (!found) {
    throw new UsageError(
      "unknown_agent",
      known.length === 0
        ? `agent "${agent}" is not configured: no role of pmagent.config.json runs an agent (runner.agent); leave the agent out to run the role's own runner`
        : `agent "${agent}" is not configured: pick one of ${known.map((a) => `${a.name} (as role ${a.role} runs it)`).join(", ")}, or leave it out to run ${role.name}'s own runner`,
      { agent },
    );
  }
  const argv = runnerArgv(runnerOf(config, found.name), config)!;
  const key = agentOfCommand(argv)!.keyCredential;
  if (!role.credentials.includes(key)) {
    throw new RefusedError(
      "agent_key_not_allowed",
      `role ${role.name} may not run agent ${agent}: its model key ${key} is not among the role's credentials; add "${key}" to ${role.name}'s "credentials" in pmagent.config.json`,
      { agent, role: role.name },
    );
  }
  return argv;
}
