/** Event shapes shared by every agent's stream mapping (messages, commands, token usage). */
import { EVENT_PREFIX } from "../protocol/index.js";
import type { AgentName, MappedEvent, Refusal, StreamState } from "./types.js";

/** Texts kept in an event (messages, command output): their ends, so an event stays small. */
export const MESSAGE_CHARS = 4000;
export const OUTPUT_CHARS = 2000;

export const clip = (s: string, n: number) =>
  s.length <= n ? s : `${s.slice(0, n)}… (${s.length - n} more characters)`;
const tail = (s: string, n: number) => (s.length <= n ? s : `(${s.length - n} characters before) …${s.slice(-n)}`);

export function agentMessage(agent: AgentName, text: string): MappedEvent<"INFO"> {
  return {
    type: "INFO",
    payload: { message: clip(text, MESSAGE_CHARS) || "(empty message)", kind: "agent_message", metadata: { agent } },
  };
}

/**
 * A command the agent ran: an INFO with the command, its exit code and the end of its output.
 * Lines of the output that are Lattice events (`pmagent emit` prints them) are handed back to be
 * printed as they are: the supervisor stores each once, beside its outbox copy.
 */
export function commandEvents(
  agent: AgentName,
  command: string,
  exitCode: number | null,
  status: string,
  output: string,
): { events: MappedEvent[]; passthrough: string[] } {
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
      metadata: {
        agent,
        command: clip(command, MESSAGE_CHARS),
        exit_code: exitCode,
        status,
        output: tail(shown, OUTPUT_CHARS),
      },
    },
  };
  return { events: [event], passthrough };
}

const refusedWhat = (r: Refusal) => (r.command === null ? `tool ${r.tool}` : `$ ${r.command}`);

/**
 * A tool call the agent CLI refused to run (not a command that ran and failed): an INFO of kind
 * `refused` with the CLI's own reason, kept in `state` for the run's end (see refusalReason).
 */
export function refusedEvent(agent: AgentName, state: StreamState, refusal: Refusal): MappedEvent<"INFO"> {
  state.refused.push(refusal);
  return {
    type: "INFO",
    payload: {
      message: clip(`${agent} refused ${refusedWhat(refusal)}: ${refusal.reason}`, MESSAGE_CHARS),
      kind: "refused",
      metadata: {
        agent,
        tool: refusal.tool,
        command: refusal.command === null ? null : clip(refusal.command, MESSAGE_CHARS),
        reason: clip(refusal.reason, MESSAGE_CHARS),
      },
    },
  };
}

/** Why a run whose only work was refused ends in ERROR: the first refusal in the CLI's words, how many more, and the agent's last message. */
export function refusalReason(agent: AgentName, refused: Refusal[], lastMessage: string | null): string {
  const first = refused[0]!;
  const more = refused.length > 1 ? ` (and ${refused.length - 1} more refused)` : "";
  const last = lastMessage ? `; its last message: ${lastMessage}` : "";
  return `${agent} refused ${refusedWhat(first)}: ${first.reason}${more}; the agent changed no file and did not complete on its own${last}`;
}
