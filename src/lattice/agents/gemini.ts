/**
 * Gemini CLI (`@google/gemini-cli`) as a sprite: `gemini --output-format stream-json --yolo`, the
 * task on stdin (`-p ""` makes it headless), resumed with `--resume <session id>`. Its settings
 * and the Lattice protocol as its global GEMINI.md live in ~/.gemini under the sprite's private
 * HOME (API-key auth, no folder-trust prompt, no usage statistics). Tool calls are approved
 * without asking (`--yolo`): pmagent's sandbox is the containment.
 * The key is redacted from the environment of the commands it runs (security.environmentVariableRedaction).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { agentMessage, clip, commandEvents, MESSAGE_CHARS, refusedEvent } from "./events.js";
import { geminiUsage } from "./usage.js";
import type { AgentDriver, LineResult, MappedEvent, StreamState } from "./types.js";

const SHELL_TOOL = "run_shell_command";
const FILE_TOOLS = new Set(["write_file", "replace"]);
/**
 * Gemini CLI refuses a shell command with `$(…)`, backticks, `<()` or `>()` as command injection,
 * yet reports it as a tool_result of status "success" whose output is this text (the model is
 * told "Command injection detected…").
 */
const SUBSTITUTION_BLOCKED = /^Blocked: command substitution detected/;
/** A tool call its policy engine (or a hook) refused: an error of this type. */
const POLICY_VIOLATION = "policy_violation";

/** The CLI's reason when it refused this tool result, else null. */
function refusal(name: string, line: Record<string, unknown>): string | null {
  const error = line.error as { type?: unknown; message?: unknown } | undefined;
  if (line.status === "error" && error?.type === POLICY_VIOLATION) return String(error.message ?? "denied by policy");
  if (name === SHELL_TOOL && typeof line.output === "string" && SUBSTITUTION_BLOCKED.test(line.output)) {
    return `${line.output} (Gemini CLI refuses $(…), backticks, <() and >() in shell commands as command injection)`;
  }
  return null;
}

/** Assistant text arrives in deltas: one message event once the text is whole (the next event or the end). */
function flush(state: StreamState, events: MappedEvent[]): void {
  if (state.text === "") return;
  state.lastMessage = state.text;
  events.push(agentMessage("gemini", state.text));
  state.text = "";
}

export const gemini: AgentDriver = {
  name: "gemini",
  packageName: "@google/gemini-cli",
  binName: "gemini",
  defaultKeyCredential: "GEMINI_API_KEY",
  baseUrlEnv: "GOOGLE_GEMINI_BASE_URL",
  openaiEndpoint: false,

  prepare(settings, instructions) {
    const dir = join(settings.home, ".gemini");
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    // The key is redacted from the environment of the commands it runs.
    // general.maxAttempts: one retry of a failed request (its default is 10, with growing backoff).
    const config = {
      general: { maxAttempts: 2 },
      security: {
        auth: { selectedType: "gemini-api-key" },
        folderTrust: { enabled: false },
        environmentVariableRedaction: { enabled: true, blocked: ["GEMINI_API_KEY", "GOOGLE_API_KEY"] },
      },
      privacy: { usageStatisticsEnabled: false },
      telemetry: { enabled: false },
    };
    writeFileSync(join(dir, "settings.json"), `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
    writeFileSync(join(dir, "GEMINI.md"), instructions, { mode: 0o600 });
    return {
      // No relaunch of itself in a child node process: one process for the supervisor to stop.
      GEMINI_CLI_NO_RELAUNCH: "true",
      ...(settings.baseUrl ? { GOOGLE_GEMINI_BASE_URL: settings.baseUrl } : {}),
      ...(settings.apiKey ? { GEMINI_API_KEY: settings.apiKey } : {}),
    };
  },

  argv(settings, sessionId) {
    return [
      "-p",
      "",
      "--output-format",
      "stream-json",
      "--yolo",
      ...(settings.model ? ["-m", settings.model] : []),
      ...(sessionId ? ["--resume", sessionId] : []),
      ...settings.args,
    ];
  },

  mapLine(line, state) {
    const events: MappedEvent[] = [];
    const passthrough: string[] = [];
    if (!(line.type === "message" && line.role === "assistant")) flush(state, events);
    switch (line.type) {
      case "init":
        state.sessionId = String(line.session_id ?? "") || null;
        if (typeof line.model === "string" && line.model) state.model = line.model;
        events.push({
          type: "INFO",
          payload: {
            message: `gemini session ${state.sessionId}`,
            kind: "agent_session",
            metadata: { agent: "gemini", session_id: state.sessionId, model: line.model ?? null },
          },
        });
        events.push({ type: "PHASE_STARTED", payload: { phase: "agent_turn" } });
        break;
      case "message":
        if (line.role === "assistant") state.text += String(line.content ?? "");
        break;
      case "tool_use": {
        const name = String(line.tool_name ?? "");
        const input = (line.parameters ?? {}) as Record<string, unknown>;
        state.tools.set(String(line.tool_id), { name, input });
        if (name !== SHELL_TOOL)
          events.push({
            type: "INFO",
            payload: {
              message: `tool ${name}`,
              kind: "tool_call",
              metadata: { agent: "gemini", tool: name, input: clip(JSON.stringify(input), MESSAGE_CHARS) },
            },
          });
        break;
      }
      case "tool_result": {
        const call = state.tools.get(String(line.tool_id));
        state.tools.delete(String(line.tool_id));
        if (!call) break;
        const why = refusal(call.name, line);
        if (why !== null) {
          events.push(
            refusedEvent("gemini", state, {
              tool: call.name,
              command: call.name === SHELL_TOOL ? String(call.input.command ?? "") : null,
              reason: why,
            }),
          );
          break;
        }
        // A file tool's path counts once the write went through (not when it was refused or failed).
        if (FILE_TOOLS.has(call.name) && line.status === "success" && typeof call.input.file_path === "string")
          state.changedFiles.add(call.input.file_path);
        if (call.name !== SHELL_TOOL) break;
        const mapped = commandEvents(
          "gemini",
          String(call.input.command ?? ""),
          null,
          line.status === "success" ? "completed" : "failed",
          String(line.output ?? (line.error as { message?: string } | undefined)?.message ?? ""),
        );
        events.push(...mapped.events);
        passthrough.push(...mapped.passthrough);
        break;
      }
      case "error":
        events.push({
          type: "INFO",
          payload: {
            message: String(line.message ?? "error"),
            kind: "agent_warning",
            metadata: { agent: "gemini", severity: line.severity ?? null },
          },
        });
        break;
      case "result": {
        state.turnFinished = true;
        const ok = line.status === "success";
        if (!ok) state.failure = String((line.error as { message?: string } | undefined)?.message ?? "the turn failed");
        events.push(...geminiUsage((line.stats ?? {}) as Record<string, unknown>, state), {
          type: "PHASE_FINISHED",
          payload: { phase: "agent_turn", success: ok },
        });
        break;
      }
      default:
        break;
    }
    return { events, passthrough } satisfies LineResult;
  },
};
