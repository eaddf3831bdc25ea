/**
 * The Codex stream mapping on the item types the e2e script does not reach (file_change from its
 * patch tool, todo_list, mcp_tool_call, turn.failed, refusals), in the shapes `codex exec --json` prints,
 * the refusals of Gemini CLI and Claude Code the real-CLI tests do not reach,
 * and what a workspace's git says the agent changed (files, commits).
 */
import { describe, expect, it } from "vitest";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { driverFor } from "../../../src/lattice/index.js";
import { changedSince, gitSnapshot } from "../../../src/lattice/agents/workspace-changes.js";
import { newStreamState } from "../../../src/lattice/agents/types.js";
import { gitInit } from "../helpers.js";

const codex = driverFor("codex");

describe("the Codex stream mapping", () => {
  it("maps file changes, plans, tool calls and a failed turn; LATTICE_EVENT lines of a command's output pass through as they are", () => {
    const state = newStreamState();
    const map = (line: unknown) => codex.mapLine(line as Record<string, unknown>, state);
    expect(
      map({
        type: "item.completed",
        item: {
          id: "i1",
          type: "file_change",
          status: "completed",
          changes: [
            { path: "/ws/a.md", kind: "update" },
            { path: "b.md", kind: "add" },
          ],
        },
      }).events,
    ).toEqual([
      {
        type: "INFO",
        payload: {
          message: "files changed: /ws/a.md, b.md",
          kind: "file_change",
          metadata: {
            agent: "codex",
            status: "completed",
            changes: [
              { path: "/ws/a.md", kind: "update" },
              { path: "b.md", kind: "add" },
            ],
          },
        },
      },
    ]);
    expect([...state.changedFiles]).toEqual(["/ws/a.md", "b.md"]);
    expect(
      map({
        type: "item.completed",
        item: { id: "i2", type: "todo_list", items: [{ text: "write", completed: false }] },
      }).events[0],
    ).toEqual({
      type: "INFO",
      payload: {
        message: "plan updated",
        kind: "plan",
        metadata: { agent: "codex", items: [{ text: "write", completed: false }] },
      },
    });
    expect(
      map({
        type: "item.completed",
        item: {
          id: "i3",
          type: "mcp_tool_call",
          server: "docs",
          tool: "search",
          status: "failed",
          error: { message: "down" },
        },
      }).events[0]?.payload,
    ).toMatchObject({
      message: "tool docs.search: failed",
      kind: "tool_call",
    });
    const line = 'LATTICE_EVENT {"protocol_version":"v1","event_type":"INFO"}';
    const cmd = map({
      type: "item.completed",
      item: {
        id: "i4",
        type: "command_execution",
        command: "make",
        aggregated_output: `building\n${line}\ndone\n`,
        exit_code: 2,
        status: "failed",
      },
    });
    expect(cmd.passthrough).toEqual([line]);
    expect(cmd.events[0]?.payload).toEqual({
      message: "$ make (exit 2)",
      kind: "command",
      metadata: { agent: "codex", command: "make", exit_code: 2, status: "failed", output: "building\ndone\n" },
    });
    expect(map({ type: "item.started", item: { id: "i5", type: "command_execution" } })).toEqual({
      events: [],
      passthrough: [],
    });
    expect(map({ type: "turn.failed", error: { message: "stream disconnected" } }).events).toEqual([
      { type: "PHASE_FINISHED", payload: { phase: "agent_turn", success: false } },
    ]);
    expect(state.failure).toBe("stream disconnected");
  });

  it("a declined command and a command its policy rejected (a line of its log) are refused, with Codex's reason", () => {
    const state = newStreamState();
    expect(
      codex.mapLine(
        {
          type: "item.completed",
          item: {
            id: "i1",
            type: "command_execution",
            command: "git push",
            aggregated_output: "",
            exit_code: null,
            status: "declined",
          },
        },
        state,
      ).events,
    ).toEqual([
      {
        type: "INFO",
        payload: {
          message: "codex refused $ git push: declined by Codex",
          kind: "refused",
          metadata: { agent: "codex", tool: "command_execution", command: "git push", reason: "declined by Codex" },
        },
      },
    ]);
    // Codex's log quotes the error, which quotes the command: a command with quotes and a backslash.
    const log =
      String.raw`2026-11-28T01:04:50.740910Z ERROR codex_core::tools::router: error=exec_command failed: CreateProcess { message: "Rejected(\"` +
      "`" +
      String.raw`/bin/bash -c 'rm -f \\\"a b\\\" c\\\\d'` +
      "`" +
      String.raw` rejected: policy forbids commands starting with ` +
      "`rm`" +
      String.raw`\")" }`;
    expect(codex.mapStderr!(log, state)).toEqual([
      {
        type: "INFO",
        payload: {
          message: 'codex refused $ rm -f "a b" c\\d: policy forbids commands starting with `rm`',
          kind: "refused",
          metadata: {
            agent: "codex",
            tool: "exec_command",
            command: 'rm -f "a b" c\\d',
            reason: "policy forbids commands starting with `rm`",
          },
        },
      },
    ]);
    expect(codex.mapStderr!("2026-11-28T01:04:50Z WARN codex_core: something else", state)).toEqual([]);
    expect(state.refused.map((r) => r.command)).toEqual(["git push", 'rm -f "a b" c\\d']);
  });

  it("keeps a long message's start and a long output's end", () => {
    const state = newStreamState();
    const text = "m".repeat(5000);
    const msg = codex.mapLine({ type: "item.completed", item: { type: "agent_message", text } }, state).events[0]!
      .payload as { message: string };
    expect(msg.message.startsWith("m".repeat(4000))).toBe(true);
    expect(msg.message).toContain("(1000 more characters)");
    expect(state.lastMessage).toBe(text);
    const out = codex.mapLine(
      {
        type: "item.completed",
        item: {
          type: "command_execution",
          command: "x",
          aggregated_output: `${"a".repeat(3000)}END`,
          exit_code: 0,
          status: "completed",
        },
      },
      state,
    );
    expect(String((out.events[0]!.payload as unknown as { metadata: { output: string } }).metadata.output)).toMatch(
      /^\(1003 characters before\) …a+END$/,
    );
  });
});

describe("refusals in the Gemini CLI and Claude Code streams (shapes their bundles print)", () => {
  it("Gemini: a policy violation is refused with its message; a file tool's path counts only once its write succeeded", () => {
    const gemini = driverFor("gemini");
    const state = newStreamState();
    const map = (line: unknown) => gemini.mapLine(line as Record<string, unknown>, state);
    map({
      type: "tool_use",
      tool_name: "write_file",
      tool_id: "t1",
      parameters: { file_path: "/ws/denied.md", content: "x" },
    });
    expect(
      map({
        type: "tool_result",
        tool_id: "t1",
        status: "error",
        output: "",
        error: { type: "policy_violation", message: "Tool execution denied by policy. no writes here" },
      }).events,
    ).toEqual([
      {
        type: "INFO",
        payload: {
          message: "gemini refused tool write_file: Tool execution denied by policy. no writes here",
          kind: "refused",
          metadata: {
            agent: "gemini",
            tool: "write_file",
            command: null,
            reason: "Tool execution denied by policy. no writes here",
          },
        },
      },
    ]);
    map({
      type: "tool_use",
      tool_name: "write_file",
      tool_id: "t2",
      parameters: { file_path: "/ws/failed.md", content: "x" },
    });
    map({
      type: "tool_result",
      tool_id: "t2",
      status: "error",
      error: { type: "file_write_failure", message: "EACCES" },
    });
    map({ type: "tool_use", tool_name: "replace", tool_id: "t3", parameters: { file_path: "/ws/written.md" } });
    map({ type: "tool_result", tool_id: "t3", status: "success", output: "ok" });
    expect([...state.changedFiles]).toEqual(["/ws/written.md"]);
    // A shell command that ran and failed is a failed command, not a refusal.
    map({ type: "tool_use", tool_name: "run_shell_command", tool_id: "t4", parameters: { command: "false" } });
    expect(
      map({
        type: "tool_result",
        tool_id: "t4",
        status: "error",
        output: "",
        error: { type: "shell_execute_error", message: "exit 1" },
      }).events[0]?.payload,
    ).toMatchObject({ kind: "command", metadata: { status: "failed" } });
    expect(state.refused.map((r) => r.tool)).toEqual(["write_file"]);
  });

  it("Claude: a denial named only in the result's permission_denials is refused with its tool result's text, once", () => {
    const claude = driverFor("claude");
    const state = newStreamState();
    const map = (line: unknown) => claude.mapLine(line as Record<string, unknown>, state);
    map({
      type: "assistant",
      message: {
        content: [{ type: "tool_use", id: "u1", name: "WebFetch", input: { url: "https://example.invalid" } }],
      },
    });
    // A text this mapping does not know as a denial: kept until the result says it was one.
    expect(
      map({
        type: "user",
        message: {
          content: [
            {
              type: "tool_result",
              tool_use_id: "u1",
              is_error: true,
              content: [{ type: "text", text: "Blocked by a hook: no fetching" }],
            },
          ],
        },
      }).events,
    ).toEqual([]);
    map({
      type: "assistant",
      message: { content: [{ type: "tool_use", id: "u2", name: "Bash", input: { command: "rm -rf /" } }] },
    });
    expect(
      map({
        type: "user",
        message: {
          content: [
            {
              type: "tool_result",
              tool_use_id: "u2",
              is_error: true,
              content: "Permission to use Bash with command rm -rf / has been denied.",
            },
          ],
        },
      }).events.map((e) => e.payload),
    ).toEqual([
      {
        message: "claude refused $ rm -rf /: Permission to use Bash with command rm -rf / has been denied.",
        kind: "refused",
        metadata: {
          agent: "claude",
          tool: "Bash",
          command: "rm -rf /",
          reason: "Permission to use Bash with command rm -rf / has been denied.",
        },
      },
    ]);
    const end = map({
      type: "result",
      subtype: "success",
      is_error: false,
      result: "done",
      permission_denials: [
        { tool_name: "WebFetch", tool_use_id: "u1", tool_input: { url: "https://example.invalid" } },
        { tool_name: "Bash", tool_use_id: "u2", tool_input: { command: "rm -rf /" } },
      ],
    });
    expect(end.events.filter((e) => (e.payload as { kind?: string }).kind === "refused").map((e) => e.payload)).toEqual(
      [
        {
          message: "claude refused tool WebFetch: Blocked by a hook: no fetching",
          kind: "refused",
          metadata: { agent: "claude", tool: "WebFetch", command: null, reason: "Blocked by a hook: no fetching" },
        },
      ],
    );
    expect(state.refused.map((r) => r.tool)).toEqual(["Bash", "WebFetch"]);
  });
});

describe("what the agent changed in a git workspace", () => {
  it("reports files changed, added or committed since the snapshot (not those dirty before and untouched, not .lattice/), and the commits", () => {
    const ws = mkdtempSync(join(tmpdir(), "pmagent-agent-ws-"));
    try {
      writeFileSync(join(ws, "kept.md"), "a\n");
      writeFileSync(join(ws, "edited.md"), "a\n");
      gitInit(ws);
      writeFileSync(join(ws, "dirty-before.md"), "x\n");
      const before = gitSnapshot(ws);
      writeFileSync(join(ws, "edited.md"), "b\n");
      writeFileSync(join(ws, "new.md"), "n\n");
      execFileSync(
        "sh",
        [
          "-c",
          "mkdir -p .lattice && echo {} > .lattice/outbox.jsonl && echo c > committed.md && git add committed.md && git -c user.name=t -c user.email=t@example.invalid commit -qm c",
        ],
        { cwd: ws },
      );
      const head = execFileSync("git", ["rev-parse", "HEAD"], { cwd: ws, encoding: "utf8" }).trim();
      expect(changedSince(ws, before, ["reported.md", join(ws, "abs.md"), "/elsewhere/x.md"])).toEqual([
        { kind: "file", path: "abs.md", ref: "abs.md" },
        { kind: "file", path: "committed.md", ref: "committed.md" },
        { kind: "file", path: "edited.md", ref: "edited.md" },
        { kind: "file", path: "new.md", ref: "new.md" },
        { kind: "file", path: "reported.md", ref: "reported.md" },
        { kind: "commit", ref: head },
      ]);
      expect(gitSnapshot(tmpdir())).toBeNull();
    } finally {
      rmSync(ws, { recursive: true, force: true });
    }
  });
});
