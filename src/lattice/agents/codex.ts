/**
 * Codex CLI (`@openai/codex`) as a sprite: `codex exec --json` in the workspace, resumed with
 * `codex exec resume <thread id>`. Its home (CODEX_HOME) is under the sprite's private HOME: a
 * config.toml naming one model provider (the configured base URL, Responses API, the key in
 * PMAGENT_CODEX_API_KEY) and the Lattice protocol as the global AGENTS.md, which Codex sends with
 * every session (the workspace's own AGENTS.md files still apply, and the repository is not touched).
 * Codex's own sandbox is bypassed: it needs kernel features (landlock, seccomp, user namespaces)
 * that are not there inside pmagent's bubblewrap sandbox, which is the sprite's containment.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { agentMessage, clip, commandEvents, MESSAGE_CHARS, OUTPUT_CHARS, refusedEvent } from "./events.js";
import { codexUsage } from "./usage.js";
import type { AgentDriver, AgentSettings, LineResult, MappedEvent, StreamState } from "./types.js";

const KEY_ENV = "PMAGENT_CODEX_API_KEY";
const DEFAULT_BASE_URL = "https://api.openai.com/v1";
/** Codex's own retries of a failed model request (its default is 4 and 5, and endless for a refused connection). */
const RETRIES = 1;
/** Codex's text for an HTTP 500 (and an overloaded server): it drops the server's own message. */
const HIGH_DEMAND = /currently experiencing high demand/;

/** Codex's error message, saying what its HTTP 500 text hides. */
function codexError(message: string): string {
  return HIGH_DEMAND.test(message)
    ? `${message} (Codex's text for an HTTP 500 or an overloaded server; it does not pass the server's own message on)`
    : message;
}

const toml = (s: string) => JSON.stringify(s);

function configToml(settings: AgentSettings): string {
  const lines = [
    `model_provider = "pmagent"`,
    ...(settings.model ? [`model = ${toml(settings.model)}`] : []),
    // No update checks, no telemetry from a sprite.
    `check_for_update_on_startup = false`,
    // A login shell would read /etc/profile, which resets PATH: the shims and pmagent would be gone.
    `allow_login_shell = false`,
    ``,
    `[model_providers.pmagent]`,
    `name = "pmagent"`,
    `base_url = ${toml(settings.baseUrl ?? DEFAULT_BASE_URL)}`,
    `wire_api = "responses"`,
    `env_key = ${toml(KEY_ENV)}`,
    // One retry, then the turn fails with Codex's own error (runner.args "-c model_providers.pmagent.request_max_retries=N" for more).
    `request_max_retries = ${RETRIES}`,
    `stream_max_retries = ${RETRIES}`,
    ``,
    // Without this, an unreachable endpoint is retried forever ("Reconnecting... waiting for network").
    `[features]`,
    `unbounded_connection_retries = false`,
    ``,
    // The key stays out of the agent's commands (Codex also drops *KEY* names by default).
    `[shell_environment_policy]`,
    `exclude = [${toml(KEY_ENV)}]`,
    ``,
    `[analytics]`,
    `enabled = false`,
  ];
  return `${lines.join("\n")}\n`;
}

/**
 * A command Codex's execution policy refused (its rules, default ones included: `rm -f` is
 * refused): `codex exec --json` prints no item for it, only this line of its log on stderr:
 * …error=exec_command failed: CreateProcess { message: "Rejected(\"`/bin/bash -c 'rm -f x'` rejected: <reason>\")" }
 */
const REJECTED = /Rejected\(\\"`(.*?)` rejected: (.*?)\\"\)/;
/** Undo one level of Rust's Debug quoting (the log quotes the error, which quotes the command). */
const unquote = (s: string) => s.replace(/\\(.)/gs, (_, c: string) => (c === "n" ? "\n" : c));
/** A command as Codex shows it, wrapped in its shell: `/bin/bash -c '…'`, or `-c "…"` when it holds a single quote. */
const SHELL_WRAPPED = /^\S*\/(?:ba|z)?sh -l?c (?:'([^']*)'|"((?:[^"\\]|\\.)*)")$/s;

/** The command as the agent gave it (Codex's shell wrapper taken off). */
function agentCommand(shown: string): string {
  const m = SHELL_WRAPPED.exec(shown);
  if (!m) return shown;
  // In double quotes the shell takes a backslash off only before $ ` " \ and a newline.
  return m[1] ?? m[2]!.replace(/\\([$`"\\\n])/g, "$1");
}

/** What an MCP tool call answered: the text of its content blocks, else its structured content as JSON. */
function toolResult(result: unknown): string {
  if (result === null || typeof result !== "object") return "";
  const r = result as { content?: unknown; structured_content?: unknown };
  const texts = Array.isArray(r.content)
    ? r.content.map((c: { text?: unknown }) => (typeof c?.text === "string" ? c.text : "")).filter((t) => t !== "")
    : [];
  if (texts.length > 0) return texts.join("\n");
  return r.structured_content === undefined || r.structured_content === null
    ? ""
    : JSON.stringify(r.structured_content);
}

type Item = Record<string, unknown> & { type?: string; id?: string };

function mapItem(item: Item, state: StreamState): LineResult {
  const events: MappedEvent[] = [];
  const passthrough: string[] = [];
  switch (item.type) {
    case "agent_message": {
      const text = String(item.text ?? "");
      state.lastMessage = text;
      events.push(agentMessage("codex", text));
      break;
    }
    case "reasoning":
      events.push({
        type: "INFO",
        payload: { message: String(item.text ?? ""), kind: "reasoning", metadata: { agent: "codex" } },
      });
      break;
    case "command_execution": {
      // "declined": Codex did not run it (an approval it declined); not a command that ran and failed.
      if (item.status === "declined") {
        events.push(
          refusedEvent("codex", state, {
            tool: "command_execution",
            command: String(item.command ?? ""),
            reason: String(item.aggregated_output ?? "") || "declined by Codex",
          }),
        );
        break;
      }
      const mapped = commandEvents(
        "codex",
        agentCommand(String(item.command ?? "")),
        typeof item.exit_code === "number" ? item.exit_code : null,
        String(item.status ?? ""),
        String(item.aggregated_output ?? ""),
      );
      events.push(...mapped.events);
      passthrough.push(...mapped.passthrough);
      break;
    }
    case "file_change":
      for (const c of (item.changes as Array<{ path?: string; kind?: string }> | undefined) ?? []) {
        if (typeof c.path === "string") state.changedFiles.add(c.path);
      }
      events.push({
        type: "INFO",
        payload: {
          message: `files changed: ${((item.changes as Array<{ path?: string }> | undefined) ?? []).map((c) => c.path).join(", ")}`,
          kind: "file_change",
          metadata: { agent: "codex", status: item.status ?? null, changes: item.changes ?? [] },
        },
      });
      break;
    case "mcp_tool_call": {
      const error = (item.error as { message?: unknown } | null | undefined)?.message;
      events.push({
        type: "INFO",
        payload: {
          message: `tool ${String(item.server)}.${String(item.tool)}: ${String(item.status)}`,
          kind: "tool_call",
          metadata: {
            agent: "codex",
            server: item.server ?? null,
            tool: item.tool ?? null,
            status: item.status ?? null,
            input: clip(JSON.stringify(item.arguments ?? {}), MESSAGE_CHARS),
            output: clip(toolResult(item.result), OUTPUT_CHARS),
            error: error === undefined || error === null ? null : clip(String(error), MESSAGE_CHARS),
          },
        },
      });
      break;
    }
    case "web_search":
      events.push({
        type: "INFO",
        payload: {
          message: `web search: ${String(item.query ?? "")}`,
          kind: "web_search",
          metadata: { agent: "codex" },
        },
      });
      break;
    case "todo_list":
      events.push({
        type: "INFO",
        payload: { message: "plan updated", kind: "plan", metadata: { agent: "codex", items: item.items ?? [] } },
      });
      break;
    case "error":
      events.push({
        type: "INFO",
        payload: { message: String(item.message ?? "error"), kind: "agent_warning", metadata: { agent: "codex" } },
      });
      break;
    default:
      events.push({
        type: "INFO",
        payload: {
          message: `codex item ${String(item.type)}`,
          kind: "agent_item",
          metadata: { agent: "codex", item_type: item.type ?? null },
        },
      });
  }
  return { events, passthrough };
}

export const codex: AgentDriver = {
  name: "codex",
  packageName: "@openai/codex",
  binName: "codex",
  defaultKeyCredential: "OPENAI_API_KEY",
  baseUrlEnv: "OPENAI_BASE_URL",
  openaiEndpoint: true,

  prepare(settings, instructions) {
    const home = join(settings.home, ".codex");
    mkdirSync(home, { recursive: true, mode: 0o700 });
    writeFileSync(join(home, "config.toml"), configToml(settings), { mode: 0o600 });
    writeFileSync(join(home, "AGENTS.md"), instructions, { mode: 0o600 });
    return { CODEX_HOME: home, ...(settings.apiKey ? { [KEY_ENV]: settings.apiKey } : {}) };
  },

  argv(settings, sessionId) {
    const common = [
      "--json",
      "--skip-git-repo-check",
      "--dangerously-bypass-approvals-and-sandbox",
      ...(settings.model ? ["-m", settings.model] : []),
      ...settings.args,
    ];
    // `-`: the prompt is read from stdin. `exec resume` takes no --cd: it runs in its working directory, the workspace.
    if (sessionId) return ["exec", "resume", ...common, sessionId, "-"];
    return ["exec", ...common, "-C", settings.workspace, "-"];
  },

  mapStderr(line, state) {
    const m = REJECTED.exec(line);
    if (!m) return [];
    const shown = unquote(unquote(m[1]!));
    return [
      refusedEvent("codex", state, {
        tool: "exec_command",
        command: agentCommand(shown),
        reason: unquote(unquote(m[2]!)),
      }),
    ];
  },

  mapLine(line, state) {
    switch (line.type) {
      case "thread.started":
        state.sessionId = String(line.thread_id ?? "") || null;
        return {
          events: [
            {
              type: "INFO",
              payload: {
                message: `codex session ${state.sessionId}`,
                kind: "agent_session",
                metadata: { agent: "codex", session_id: state.sessionId },
              },
            },
          ],
          passthrough: [],
        };
      case "turn.started":
        state.turnFinished = false;
        return { events: [{ type: "PHASE_STARTED", payload: { phase: "agent_turn" } }], passthrough: [] };
      case "turn.completed":
        state.turnFinished = true;
        return {
          events: [
            codexUsage((line.usage as Record<string, unknown> | undefined) ?? {}, state),
            { type: "PHASE_FINISHED", payload: { phase: "agent_turn", success: true } },
          ],
          passthrough: [],
        };
      case "turn.failed": {
        state.turnFinished = true;
        state.failure = codexError(
          String((line.error as { message?: unknown } | undefined)?.message ?? "the turn failed"),
        );
        return {
          events: [{ type: "PHASE_FINISHED", payload: { phase: "agent_turn", success: false } }],
          passthrough: [],
        };
      }
      case "error":
        state.failure = codexError(String(line.message ?? "error"));
        return {
          events: [
            { type: "INFO", payload: { message: state.failure, kind: "agent_error", metadata: { agent: "codex" } } },
          ],
          passthrough: [],
        };
      case "item.completed":
        return mapItem((line.item as Item | undefined) ?? {}, state);
      default:
        // item.started / item.updated: the completed item carries everything.
        return { events: [], passthrough: [] };
    }
  },
};
