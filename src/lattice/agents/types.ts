/**
 * What pmagent needs to know to run one coding-agent CLI as a sprite. Each agent (agent-codex.ts,
 * agent-claude.ts, agent-gemini.ts…) is the same few parts: where its CLI is, how it is configured and told
 * the protocol (its home and instructions file), its non-interactive argv for a new session and
 * for resuming one, and how a line of its JSON stream maps to Lattice events.
 */
import type { EventType, PayloadInputOf } from "../protocol/index.js";

export const AGENT_NAMES = ["codex", "claude", "gemini"] as const;
export type AgentName = (typeof AGENT_NAMES)[number];

/** One Lattice event the agent's stream maps to. */
export interface MappedEvent<T extends EventType = EventType> {
  type: T;
  payload: PayloadInputOf<T>;
}

/** What the stream said so far (the runner decides the run's last event from it). */
export interface StreamState {
  sessionId: string | null;
  /** The model the stream says it uses (else the configured one): what its usage reports are priced by. */
  model: string | null;
  lastMessage: string | null;
  /** The turn or the CLI reported a failure: its message. */
  failure: string | null;
  /** Paths the agent's own file-change items reported (relative to the workspace or absolute). */
  changedFiles: Set<string>;
  turnFinished: boolean;
  /** Assistant text streamed in deltas, not yet reported. */
  text: string;
  /** Tool calls seen, by id, until their result comes (agents that report the two apart). */
  tools: Map<string, { name: string; input: Record<string, unknown> }>;
  /** Error results by tool call id (Claude names its permission denials only at the end of the turn). */
  toolErrors: Map<string, string>;
  /** Tool calls the agent CLI itself refused (its policy, a permission rule, its command-injection check), with its reason. */
  refused: Refusal[];
}

export interface Refusal {
  tool: string;
  /** The shell command, for a refused command. */
  command: string | null;
  /** The CLI's own words. */
  reason: string;
  /** The tool call's id, when the CLI gives one. */
  callId?: string;
}

export function newStreamState(): StreamState {
  return {
    sessionId: null,
    model: null,
    lastMessage: null,
    failure: null,
    changedFiles: new Set(),
    turnFinished: false,
    text: "",
    tools: new Map(),
    toolErrors: new Map(),
    refused: [],
  };
}

/** What one stdout line of the CLI becomes. `passthrough`: LATTICE_EVENT lines found in command output, printed as they are. */
export interface LineResult {
  events: MappedEvent[];
  passthrough: string[];
}

export interface AgentSettings {
  model: string | undefined;
  /** The model API's base URL (…/v1); default the vendor's. */
  baseUrl: string | undefined;
  /** The model key, read from the supervisor's stdin (never an argument or a file). */
  apiKey: string | undefined;
  /** Extra CLI arguments (config `runner.args`). */
  args: string[];
  workspace: string;
  /** The agent's private home (the sprite's HOME): its config, sessions and instructions file. */
  home: string;
}

export interface AgentDriver {
  name: AgentName;
  /** The npm package of its CLI (resolved from pmagent's own node_modules, else the PATH). */
  packageName: string;
  /** The CLI's bin (in the package's package.json `bin`, or on the PATH). */
  binName: string;
  /** The credential its key is read from when the runner names none. */
  defaultKeyCredential: string;
  /** The variable a user of this CLI sets for the endpoint (passed on as the default base URL). */
  baseUrlEnv: string;
  /** Whether config `model.base_url` (an OpenAI-compatible endpoint) is its default endpoint. */
  openaiEndpoint: boolean;
  /** Variables its process gets unless the sprite's environment (config `runner.env`) sets them. */
  envDefaults?: Record<string, string>;
  /**
   * Write its configuration and the protocol instructions under `settings.home`; return the
   * variables its process needs (its home, the key in the variable its config names).
   */
  prepare(settings: AgentSettings, instructions: string): Record<string, string>;
  /** argv after the CLI's path: a new session, or resuming `sessionId`; the task comes on its stdin. */
  argv(settings: AgentSettings, sessionId: string | null): string[];
  /** Map one stdout line (already parsed JSON) onto events, updating `state`. */
  mapLine(line: Record<string, unknown>, state: StreamState): LineResult;
  /** Events in one line of its stderr (passed on as it is): what its JSON stream leaves out. */
  mapStderr?(line: string, state: StreamState): MappedEvent[];
}
