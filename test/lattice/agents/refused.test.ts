/**
 * A command the agent CLI refused is a refused command, not a success: through the real CLIs
 * against local servers answering in each API's streaming format. Gemini CLI refuses `$(…)` in a
 * shell command as command injection (its tool_result still says "success"); Claude Code refuses
 * a command or a file a deny rule of the repository's .claude/settings.json names; Codex refuses
 * `rm -f` by its default execution policy (and says so only in its log). Each refusal is an INFO of kind `refused` with the CLI's own reason; a run
 * whose only work was refused ends failed with that reason, one that changed a file anyway succeeds.
 */
import { describe, expect, it } from "vitest";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { availableStoreKinds } from "../../helpers/stores.js";
import { startFakeAnthropic } from "../../helpers/fake-anthropic.js";
import { startFakeGemini } from "../../helpers/fake-gemini.js";
import { startFakeOpenAI } from "../../helpers/fake-openai.js";
import { agentProject, payloads } from "./helpers.js";

// How an agent run ends does not depend on the store: SQLite only.
const sqlite = (await availableStoreKinds()).find((k) => k.name === "sqlite")!;

const GEMINI_BLOCKED =
  "Blocked: command substitution detected in shell command. (Gemini CLI refuses $(…), backticks, <() and >() in shell commands as command injection)";

describe("Gemini CLI refuses a command", () => {
  it(
    "with $(…) as command injection: the command is reported refused, and the run, which did nothing else, fails with Gemini's reason",
    { timeout: 240_000 },
    async () => {
      const ts = await sqlite.open();
      const fake = await startFakeGemini();
      const tp = agentProject(ts, { agent: "gemini", model: "gemini-test", base_url: fake.baseURL }, [
        "GEMINI_API_KEY",
      ]);
      try {
        fake.reply(
          { call: { name: "run_shell_command", args: { command: "echo $(date) > stamp.txt" } } },
          { text: "The command was blocked, so I could not write stamp.txt." },
        );
        const sup = tp.supervisor(undefined, { env: { ...process.env, GEMINI_API_KEY: "refused-test-key" } });
        const run = await sup.startRun({ role: "Builder" });
        const events = await sup.runs.events(run.id);
        expect(run.state).toBe("failed");
        expect(run.reason).toBe(
          `ERROR: gemini refused $ echo $(date) > stamp.txt: ${GEMINI_BLOCKED}; the agent changed no file and did not complete on its own; its last message: The command was blocked, so I could not write stamp.txt.`,
        );
        const refused = payloads(events, "INFO").filter((p) => p.kind === "refused");
        expect(refused).toEqual([
          {
            message: `gemini refused $ echo $(date) > stamp.txt: ${GEMINI_BLOCKED}`,
            kind: "refused",
            metadata: {
              agent: "gemini",
              tool: "run_shell_command",
              command: "echo $(date) > stamp.txt",
              reason: GEMINI_BLOCKED,
            },
          },
        ]);
        // Not a command that ran: no "completed" command event.
        expect(payloads(events, "INFO").filter((p) => p.kind === "command")).toEqual([]);
        expect(payloads(events, "ERROR")).toEqual([
          {
            message: run.reason!.slice("ERROR: ".length),
            details: {
              agent: "gemini",
              refused: [{ tool: "run_shell_command", command: "echo $(date) > stamp.txt", reason: GEMINI_BLOCKED }],
            },
          },
        ]);
        expect(events.some((e) => e.event_type === "COMPLETED")).toBe(false);
        expect(existsSync(join(run.workspace, "stamp.txt"))).toBe(false);
        // The model was told Gemini's own words.
        expect(JSON.stringify(fake.requests[1]!.body)).toContain("Command injection detected");
      } finally {
        await fake.close();
        tp.cleanup();
        await ts.cleanup();
      }
    },
  );

  it(
    "refused, then the agent did the work another way: the refusal is reported and the run succeeds",
    { timeout: 240_000 },
    async () => {
      const ts = await sqlite.open();
      const fake = await startFakeGemini();
      const tp = agentProject(ts, { agent: "gemini", model: "gemini-test", base_url: fake.baseURL }, [
        "GEMINI_API_KEY",
      ]);
      try {
        fake.reply(
          { call: { name: "run_shell_command", args: { command: "echo $(date) > stamp.txt" } } },
          { call: { name: "run_shell_command", args: { command: "date > stamp.txt" } } },
          { text: "Wrote stamp.txt without command substitution." },
        );
        const sup = tp.supervisor(undefined, { env: { ...process.env, GEMINI_API_KEY: "refused-test-key" } });
        const run = await sup.startRun({ role: "Builder" });
        const events = await sup.runs.events(run.id);
        expect(run.state, run.reason ?? "").toBe("succeeded");
        const infos = payloads(events, "INFO");
        expect(
          infos.filter((p) => p.kind === "refused").map((p) => (p.metadata as { command: string }).command),
        ).toEqual(["echo $(date) > stamp.txt"]);
        expect(
          infos
            .filter((p) => p.kind === "command")
            .map((p) => p.metadata as { command: string; status: string })
            .map((m) => [m.command, m.status]),
        ).toEqual([["date > stamp.txt", "completed"]]);
        expect(payloads(events, "ARTIFACT")).toEqual([
          { kind: "file", ref: "stamp.txt", metadata: { agent: "gemini", path: "stamp.txt" } },
        ]);
        expect(payloads(events, "COMPLETED")).toEqual([
          { status: "success", summary: "Wrote stamp.txt without command substitution." },
        ]);
      } finally {
        await fake.close();
        tp.cleanup();
        await ts.cleanup();
      }
    },
  );
});

describe("Claude Code refuses a command", () => {
  it(
    "a deny rule of the repository's settings: the command is reported refused with Claude's text, a denied Write is no changed file, and the run fails with the reason",
    { timeout: 240_000 },
    async () => {
      const ts = await sqlite.open();
      const fake = await startFakeAnthropic();
      const tp = agentProject(ts, { agent: "claude", model: "claude-test", base_url: fake.baseURL }, [
        "ANTHROPIC_API_KEY",
      ]);
      try {
        // The repository's own Claude settings (committed, so the run's clone has them); an Edit rule covers Write too.
        mkdirSync(join(tp.root, ".claude"));
        writeFileSync(
          join(tp.root, ".claude/settings.json"),
          JSON.stringify({ permissions: { deny: ["Bash(rm:*)", "Edit(notes.md)"] } }),
        );
        execFileSync(
          "sh",
          ["-c", "git add .claude && git -c user.name=t -c user.email=t@example.invalid commit -qm 'claude settings'"],
          { cwd: tp.root, stdio: "ignore" },
        );
        fake.reply(
          { tool: { name: "Bash", input: { command: "rm -rf build" } } },
          { tool: { name: "Write", input: { file_path: "notes.md", content: "x\n" } } },
          { text: "Both were denied." },
        );
        const sup = tp.supervisor(undefined, { env: { ...process.env, ANTHROPIC_API_KEY: "refused-test-key" } });
        const run = await sup.startRun({ role: "Builder" });
        const events = await sup.runs.events(run.id);
        expect(run.state, JSON.stringify(events.map((e) => [e.event_type, e.event.payload]))).toBe("failed");
        expect(run.reason).toBe(
          "ERROR: claude refused $ rm -rf build: Permission to use Bash with command rm -rf build has been denied. (and 1 more refused); the agent changed no file and did not complete on its own; its last message: Both were denied.",
        );
        const refused = payloads(events, "INFO").filter((p) => p.kind === "refused");
        expect(refused.map((p) => p.metadata)).toEqual([
          {
            agent: "claude",
            tool: "Bash",
            command: "rm -rf build",
            reason: "Permission to use Bash with command rm -rf build has been denied.",
          },
          {
            agent: "claude",
            tool: "Write",
            command: null,
            reason: "File is in a directory that is denied by your permission settings.",
          },
        ]);
        // Not a command that ran and failed.
        expect(payloads(events, "INFO").filter((p) => p.kind === "command")).toEqual([]);
        // The denied Write wrote nothing: no ARTIFACT for it.
        expect(payloads(events, "ARTIFACT")).toEqual([]);
        expect(events.some((e) => e.event_type === "COMPLETED")).toBe(false);
      } finally {
        await fake.close();
        tp.cleanup();
        await ts.cleanup();
      }
    },
  );
});

describe("Codex refuses a command", () => {
  it(
    "by its execution policy (rm -f): reported refused with Codex's reason from its log, and the run fails with it",
    { timeout: 240_000 },
    async () => {
      const ts = await sqlite.open();
      const fake = await startFakeOpenAI();
      const tp = agentProject(ts, { agent: "codex", model: "codex-test", base_url: fake.baseURL }, ["OPENAI_API_KEY"]);
      try {
        fake.reply(
          { calls: [{ name: "exec_command", arguments: { cmd: "rm -f notes.md" } }] },
          { text: "Codex would not remove it." },
        );
        const sup = tp.supervisor(undefined, { env: { ...process.env, OPENAI_API_KEY: "refused-test-key" } });
        const run = await sup.startRun({ role: "Builder" });
        const events = await sup.runs.events(run.id);
        expect(run.state).toBe("failed");
        expect(run.reason).toBe(
          "ERROR: codex refused $ rm -f notes.md: rm -f style commands are not permitted. Use a safer approach; the agent changed no file and did not complete on its own; its last message: Codex would not remove it.",
        );
        expect(payloads(events, "INFO").filter((p) => p.kind === "refused")).toEqual([
          {
            message: "codex refused $ rm -f notes.md: rm -f style commands are not permitted. Use a safer approach",
            kind: "refused",
            metadata: {
              agent: "codex",
              tool: "exec_command",
              command: "rm -f notes.md",
              reason: "rm -f style commands are not permitted. Use a safer approach",
            },
          },
        ]);
        expect(events.some((e) => e.event_type === "COMPLETED")).toBe(false);
        // The model was told the same.
        expect(JSON.stringify(fake.requests[1]!.body)).toContain("rm -f style commands are not permitted");
      } finally {
        await fake.close();
        tp.cleanup();
        await ts.cleanup();
      }
    },
  );
});
