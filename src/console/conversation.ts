/// <reference lib="dom" />
/**
 * A run's conversation: what its agent said, thought, ran and called, as it happens, from the
 * run's events (the INFO kinds the agent runners record: agent_message, reasoning, command,
 * tool_call, file_change, refused, follow_up…; ARTIFACT files; WAITING, COMPLETED, ERROR). Messages
 * go through the safe Markdown renderer; command output and tool results are folded. Everything
 * else stays in the timeline.
 */
import { badge, h, time, type Json } from "./dom.js";
import { renderMarkdown } from "./markdown.js";

export interface ConversationEvent {
  seq: number;
  event_type: string;
  event: { timestamp?: string; payload: Json };
  received_at: string;
}

export interface Conversation {
  element: HTMLElement;
  /** Show one stored event (each seq once; a reconnect sends events again). */
  add(e: ConversationEvent): void;
}

interface Tally {
  messages: number;
  commands: number;
  failed: number;
  tools: number;
  files: Set<string>;
  tokens: number;
}

const meta = (p: Json): Json => (p.metadata && typeof p.metadata === "object" ? (p.metadata as Json) : {});
const str = (v: unknown): string =>
  typeof v === "string" ? v : v === null || v === undefined ? "" : JSON.stringify(v);

function folded(label: string, text: string, attrs: Record<string, string> = {}): HTMLElement {
  return h("details", { class: "fold", ...attrs }, h("summary", {}, label), h("pre", {}, text));
}

/** How many lines a command printed (a last newline ends a line, it starts none). */
function lines(text: string): string {
  const n = text.replace(/\n$/, "").split("\n").length;
  return `${n} ${n === 1 ? "line" : "lines"}`;
}

function exitBadge(code: unknown, status: string): HTMLElement {
  if (typeof code === "number") return badge(`exit ${code}`, code === 0 ? "green" : "red");
  return badge(status || "no exit code", status === "failed" ? "red" : "");
}

/** One turn of the conversation for an event, or null when the event is not part of it. */
function turn(e: ConversationEvent, tally: Tally): HTMLElement | null {
  const p = e.event.payload ?? {};
  const m = meta(p);
  const at = time(e.event.timestamp ?? e.received_at);
  const who = (label: string, kind: string, ...body: Array<Node | string>) =>
    h(
      "li",
      { class: `turn ${kind}`, "data-kind": kind, "data-seq": String(e.seq) },
      h("div", { class: "who" }, label, " ", at),
      ...body,
    );
  const agent = str(m.agent) || "agent";
  if (e.event_type === "INFO") {
    switch (p.kind) {
      case "agent_message":
        tally.messages++;
        return who(agent, "message", renderMarkdown(str(p.message)));
      case "follow_up":
        return who("you", "follow-up", renderMarkdown(str(p.message)));
      case "reasoning":
        return who(`${agent} thought`, "reasoning", renderMarkdown(str(p.message)));
      case "command": {
        tally.commands++;
        const failed = typeof m.exit_code === "number" ? m.exit_code !== 0 : m.status === "failed";
        if (failed) tally.failed++;
        const output = str(m.output);
        return who(
          `${agent} ran`,
          "command",
          h(
            "div",
            { class: "cmd" },
            h("code", {}, `$ ${str(m.command) || str(p.message)}`),
            " ",
            exitBadge(m.exit_code, str(m.status)),
          ),
          output
            ? folded(`output (${lines(output)})`, output, { "data-output": "" })
            : h("p", { class: "muted" }, "no output"),
        );
      }
      case "tool_call": {
        tally.tools++;
        const name = m.server ? `${str(m.server)}.${str(m.tool)}` : str(m.tool);
        const status = str(m.status);
        return who(
          `${agent} called a tool`,
          "tool",
          h(
            "div",
            { class: "cmd" },
            h("code", {}, name || str(p.message)),
            status ? " " : "",
            status ? badge(status, status === "failed" ? "red" : status === "completed" ? "green" : "") : "",
          ),
          m.input !== undefined ? folded("arguments", str(m.input)) : "",
          m.output ? folded("result", str(m.output)) : "",
          m.error ? h("p", { class: "error" }, str(m.error)) : "",
        );
      }
      case "file_change": {
        const changes = Array.isArray(m.changes) ? (m.changes as Array<{ path?: unknown; kind?: unknown }>) : [];
        for (const c of changes) if (typeof c.path === "string") tally.files.add(c.path);
        return who(
          `${agent} changed files`,
          "files",
          h(
            "ul",
            {},
            ...changes.map((c) => h("li", {}, h("code", {}, str(c.path)), c.kind ? ` (${str(c.kind)})` : "")),
          ),
        );
      }
      case "refused":
        return who(`${agent} was refused`, "refused", h("p", { class: "error" }, str(p.message)));
      case "agent_warning":
      case "agent_error":
        return who(agent, "warning", h("p", { class: p.kind === "agent_error" ? "error" : "muted" }, str(p.message)));
      case "token_usage":
        tally.tokens += typeof m.total_tokens === "number" ? m.total_tokens : 0;
        return null;
      default:
        return null;
    }
  }
  if (e.event_type === "ARTIFACT" && p.kind === "file") {
    const path = str(m.path) || str(p.ref);
    tally.files.add(path);
    return who("file", "files", h("code", {}, path));
  }
  if (e.event_type === "WAITING") return who("waiting", "waiting", h("p", {}, h("strong", {}, str(p.reason))));
  if (e.event_type === "COMPLETED")
    return who(
      `completed: ${str(p.status)}`,
      p.status === "success" ? "end" : "error",
      p.summary ? renderMarkdown(str(p.summary)) : "",
    );
  if (e.event_type === "ERROR") return who("error", "error", h("p", { class: "error" }, str(p.message)));
  return null;
}

function summaryText(t: Tally): string {
  const n = (k: number, one: string, many = `${one}s`) => `${k} ${k === 1 ? one : many}`;
  const failed = t.failed ? ` (${t.failed} failed)` : "";
  return `${n(t.messages, "message")} · ${n(t.commands, "command")}${failed} · ${n(t.tools, "tool call")} · ${n(t.files.size, "file")} changed · ${t.tokens.toLocaleString("en-US")} tokens so far`;
}

export function conversationView(): Conversation {
  const list = h("ol", { class: "conversation", id: "conversation", "aria-live": "polite" });
  const summary = h("p", { class: "muted", id: "conversation-summary" });
  const empty = h("p", { class: "muted", id: "conversation-empty" }, "the agent has said nothing yet");
  const tally: Tally = { messages: 0, commands: 0, failed: 0, tools: 0, files: new Set(), tokens: 0 };
  const seen = new Set<number>();
  summary.textContent = summaryText(tally);
  return {
    element: h("div", {}, summary, empty, list),
    add(e) {
      if (seen.has(e.seq)) return;
      seen.add(e.seq);
      const li = turn(e, tally);
      summary.textContent = summaryText(tally);
      if (!li) return;
      empty.remove();
      list.append(li);
    },
  };
}
