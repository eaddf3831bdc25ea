/** The agents pmagent can run, by name. A new agent is one more agent-<name>.ts driver and one line here. */
import { UsageError } from "../../core/index.js";
import { claude } from "./claude.js";
import { codex } from "./codex.js";
import { gemini } from "./gemini.js";
import { AGENT_NAMES, type AgentDriver, type AgentName } from "./types.js";

const DRIVERS: Partial<Record<AgentName, AgentDriver>> = { codex, claude, gemini };

export function isAgentName(name: string): name is AgentName {
  return (AGENT_NAMES as readonly string[]).includes(name);
}

export function driverFor(name: string): AgentDriver {
  const driver = isAgentName(name) ? DRIVERS[name] : undefined;
  if (!driver) {
    const ready = Object.keys(DRIVERS).join(", ");
    throw new UsageError(
      "agent_unsupported",
      isAgentName(name)
        ? `agent ${name} is not supported yet (supported: ${ready})`
        : `unknown agent "${name}" (expected one of ${ready})`,
    );
  }
  return driver;
}
