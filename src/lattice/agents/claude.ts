/**
 * Claude Code (`@anthropic-ai/claude-code`) as a sprite: `claude -p --output-format stream-json
 * --verbose`, the task on stdin, resumed with `--resume <session id>`. Its configuration directory
 * (CLAUDE_CONFIG_DIR) is under the sprite's private HOME, with the Lattice protocol as its user
 * CLAUDE.md (the repository's own CLAUDE.md still applies, and the repository is not touched).
 * Permission prompts are skipped (`--dangerously-skip-permissions`; IS_SANDBOX=1 lets it do so
 * as root): pmagent's sandbox is the containment. Version 2.1.197 is the last that allows Node 20.
 * Limit: Claude Code passes its environment to the commands it runs, the key included (its
 * CLAUDE_CODE_SUBPROCESS_ENV_SCRUB would drop it, but then runs each command in its own bubblewrap
 * sandbox, which cannot be made inside pmagent's: every command fails). Redaction still keeps the
 * key out of events, the outbox and logs (every Sprite redacts the secrets of its environment,
 * `pmagent emit` in the agent's commands included), and `agent-run` scrubs it from Claude's
 * session files once Claude exits.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { agentMessage, clip, commandEvents, MESSAGE_CHARS, refusedEvent } from "./events.js";
import { claudeUsage } from "./usage.js";
import type { AgentDriver, LineResult, MappedEvent, StreamState } from "./types.js";

type Block = Record<string, unknown> & { type?: string };

const none = (): LineResult => ({ events: [], passthrough: [] });

/** Tools whose input names the file they write. */
const FILE_TOOLS = new Set(["Write", "Edit", "MultiEdit", "NotebookEdit"]);

function resultText(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content))
    return content.map((c: { text?: unknown }) => (typeof c?.text === "string" ? c.text : "")).join("\n");
  return "";
}

function assistant(blocks: Block[], state: StreamState): LineResult {
  const events: MappedEvent[] = [];
  for (const b of blocks) {
    if (b.type === "text") {
      state.lastMessage = String(b.text ?? "");
      events.push(agentMessage("claude", state.lastMessage));
    } else if (b.type === "thinking") {
      events.push({
        type: "INFO",
        payload: {
          message: clip(String(b.thinking ?? ""), MESSAGE_CHARS) || "(thinking)",
          kind: "reasoning",
          metadata: { agent: "claude" },
        },
      });
    } else if (b.type === "tool_use") {
      const name = String(b.name ?? "");
      const input = (b.input ?? {}) as Record<string, unknown>;
      state.tools.set(String(b.id), { name, input });
      // Bash is reported with its result (command, output); other tools as they are called.
      if (name !== "Bash")
        events.push({
          type: "INFO",
          payload: {
            message: `tool ${name}`,
            kind: "tool_call",
            metadata: { agent: "claude", tool: name, input: clip(JSON.stringify(input), MESSAGE_CHARS) },
          },
        });
    }
  }
  return { events, passthrough: [] };
}

/**
 * A tool result that is a refusal, in Claude Code's words: a permission rule's denial ("Permission
 * to use Bash with command … has been denied."; deny rules hold even with
 * --dangerously-skip-permissions), or a file tool's path a deny rule names ("File is in a
 * directory that is denied by your permission settings.").
 */
const DENIED = /^Permission to use .+ has been denied|denied by your permission settings/;
const TOOL_ERROR_TAGS = /<\/?tool_use_error>/g;

/**
 * The result event's `permission_denials` ({tool_name, tool_use_id, tool_input}) not reported
 * with their tool result: refused too, with the text their result gave the model.
 */
function denials(line: Record<string, unknown>, state: StreamState): MappedEvent[] {
  const list = Array.isArray(line.permission_denials)
    ? (line.permission_denials as Array<{
        tool_name?: unknown;
        tool_use_id?: unknown;
        tool_input?: Record<string, unknown>;
      }>)
    : [];
  const reported = new Set(state.refused.map((r) => r.callId));
  return list
    .filter((d) => !reported.has(String(d.tool_use_id ?? "")))
    .map((d) => {
      const tool = String(d.tool_name ?? "");
      const id = String(d.tool_use_id ?? "");
      return refusedEvent("claude", state, {
        tool,
        command: tool === "Bash" ? String(d.tool_input?.command ?? "") : null,
        reason: state.toolErrors.get(id) || `permission to use ${tool} denied`,
        callId: id,
      });
    });
}

function toolResults(blocks: Block[], state: StreamState): LineResult {
  const out: LineResult = { events: [], passthrough: [] };
  for (const b of blocks) {
    if (b.type !== "tool_result") continue;
    const id = String(b.tool_use_id);
    const call = state.tools.get(id);
    state.tools.delete(id);
    if (b.is_error === true) {
      const text = resultText(b.content).replace(TOOL_ERROR_TAGS, "").trim();
      if (call && DENIED.test(text)) {
        out.events.push(
          refusedEvent("claude", state, {
            tool: call.name,
            command: call.name === "Bash" ? String(call.input.command ?? "") : null,
            reason: text,
            callId: id,
          }),
        );
        continue;
      }
      state.toolErrors.set(id, text);
    }
    // A file tool's path counts once the write went through (not when it was denied or failed).
    const path = call?.input.file_path ?? call?.input.notebook_path;
    if (call && FILE_TOOLS.has(call.name) && b.is_error !== true && typeof path === "string")
      state.changedFiles.add(path);
    if (call?.name !== "Bash") continue;
    // Claude Code reports no exit code: a failed command is a result with is_error.
    const mapped = commandEvents(
      "claude",
      String(call.input.command ?? ""),
      null,
      b.is_error === true ? "failed" : "completed",
      resultText(b.content),
    );
    out.events.push(...mapped.events);
    out.passthrough.push(...mapped.passthrough);
  }
  return out;
}

export const claude: AgentDriver = {
  name: "claude",
  packageName: "@anthropic-ai/claude-code",
  binName: "claude",
  defaultKeyCredential: "ANTHROPIC_API_KEY",
  baseUrlEnv: "ANTHROPIC_BASE_URL",
  openaiEndpoint: false,
  // One retry of a failed API request (its default is 10, minutes of backoff); runner.env may set more.
  envDefaults: { CLAUDE_CODE_MAX_RETRIES: "1" },

  prepare(settings, instructions) {
    const dir = join(settings.home, ".claude");
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    writeFileSync(join(dir, "CLAUDE.md"), instructions, { mode: 0o600 });
    return {
      CLAUDE_CONFIG_DIR: dir,
      IS_SANDBOX: "1",
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      DISABLE_AUTOUPDATER: "1",
      ...(settings.baseUrl ? { ANTHROPIC_BASE_URL: settings.baseUrl } : {}),
      ...(settings.apiKey ? { ANTHROPIC_API_KEY: settings.apiKey } : {}),
    };
  },

  argv(settings, sessionId) {
    return [
      "-p",
      "--output-format",
      "stream-json",
      "--verbose",
      "--dangerously-skip-permissions",
      ...(settings.model ? ["--model", settings.model] : []),
      ...(sessionId ? ["--resume", sessionId] : []),
      ...settings.args,
    ];
  },

  mapLine(line, state) {
    const message = (line.message ?? {}) as { content?: unknown };
    const blocks = Array.isArray(message.content) ? (message.content as Block[]) : [];
    switch (line.type) {
      case "system":
        if (line.subtype !== "init") return none();
        state.sessionId = String(line.session_id ?? "") || null;
        if (typeof line.model === "string" && line.model) state.model = line.model;
        return {
          events: [
            {
              type: "INFO",
              payload: {
                message: `claude session ${state.sessionId}`,
                kind: "agent_session",
                metadata: { agent: "claude", session_id: state.sessionId, model: line.model ?? null },
              },
            },
            { type: "PHASE_STARTED", payload: { phase: "agent_turn" } },
          ],
          passthrough: [],
        };
      case "assistant":
        return assistant(blocks, state);
      case "user":
        return toolResults(blocks, state);
      case "result": {
        state.turnFinished = true;
        const ok = line.is_error !== true && line.subtype === "success";
        if (typeof line.result === "string" && line.result) state.lastMessage = line.result;
        if (!ok) state.failure = String(line.result || line.subtype || "the turn failed");
        const refused = denials(line, state);
        state.toolErrors.clear();
        return {
          events: [
            ...refused,
            ...claudeUsage(line, state),
            { type: "PHASE_FINISHED", payload: { phase: "agent_turn", success: ok } },
          ],
          passthrough: [],
        };
      }
      default:
        return none();
    }
  },
};
