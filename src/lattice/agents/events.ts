/** Event shapes shared by every agent's stream mapping (messages, commands, token usage). */
import { EVENT_PREFIX } from "../protocol/index.js";
import type { AgentName, MappedEvent } from "./types.js";

/** Texts kept in an event (messages, command output): their ends, so an event stays small. */
export const MESSAGE_CHARS = 4000;
export const OUTPUT_CHARS = 2000;

export const clip = (s: string, n: number) => (s.length <= n ? s : `${s.slice(0, n)}… (${s.length - n} more characters)`);
const tail = (s: string, n: number) => (s.length <= n ? s : `(${s.length - n} characters before) …${s.slice(-n)}`);

export function agentMessage(agent: AgentName, text: string): MappedEvent<"INFO"> {
  return { type: "INFO", payload: { message: clip(text, MESSAGE_CHARS) || "(empty message)", kind: "agent_message", metadata: { agent } } };
}

/**
 * A command the agent ran: an INFO with the command, its exit code and the end of its output.
 * Lines of the output that are Lattice events (`pmagent emit` prints them) are handed back to be
 * printed as they are: the supervisor stores each once, beside its outbox copy.
 */
export function commandEvents(agent: AgentName, command: string, exitCode: number | null, status: string, output: string): { events: MappedEvent[]; passthrough: string[] } {
  const passthrough = output.split("\n").filter((l) => l.startsWith(EVENT_PREFIX));
  const shown = output
    .split("\n")
    .filter((l) => !l.startsWith(EVENT_PREFIX))
    .join("\n");
  const event: MappedEvent<"INFO"> = {
    type: "INFO",
    payload: {
      message: clip(`$ ${command}${exitCode === null ? "" : ` (exit ${exitCode})`}`, MESSAGE_CHARS),
      kind: "command",
      metadata: { agent, command: clip(command, MESSAGE_CHARS), exit_code: exitCode, status, output: tail(shown, OUTPUT_CHARS) },
    },
  };
  return { events: [event], passthrough };
}
