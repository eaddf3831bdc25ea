/**
 * The real Claude Code CLI (@anthropic-ai/claude-code 2.1.197, a dev dependency: the last version
 * that allows Node 20) as a sprite, against a scripted local Messages API server on 127.0.0.1:
 * the script makes the agent run a Bash command that emits a Lattice event with `pmagent emit`
 * and writes a file, then answer; the same checks as Codex's.
 */
import { describe, expect, it } from "vitest";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { findAgentCli } from "../../../src/lattice/index.js";
import { availableStoreKinds } from "../../helpers/stores.js";
import { startFakeAnthropic } from "../../helpers/fake-anthropic.js";
import { agentProject, databaseText, payloads } from "./helpers.js";

const kinds = await availableStoreKinds();
const KEY = "claude-model-key/Wq27+local";

describe("the Claude Code CLI is installed as a dev dependency", () => {
  it("is found beside pmagent, its native binary run directly", () => {
    expect(findAgentCli("@anthropic-ai/claude-code", "claude", "")?.[0]).toMatch(
      /node_modules\/@anthropic-ai\/claude-code\/bin\/claude\.exe$/,
    );
  });
});

describe.each(kinds)("Claude Code as a sprite, on $name", (kind) => {
  it(
    "runs the entry as its task: its Bash command's event stored once, its stream mapped, the file an ARTIFACT, the key nowhere",
    { timeout: 240_000 },
    async () => {
      const ts = await kind.open();
      const fake = await startFakeAnthropic();
      const tp = agentProject(ts, { agent: "claude", model: "claude-test", base_url: fake.baseURL }, [
        "ANTHROPIC_API_KEY",
      ]);
      try {
        fake.reply(
          {
            tool: {
              name: "Bash",
              input: {
                command:
                  "pmagent emit INFO --message 'hello from claude' --kind progress && printf 'claude was here\\n' > notes.md",
                description: "emit and write",
              },
            },
          },
          { text: "Wrote notes.md." },
        );
        const sup = tp.supervisor(undefined, { env: { ...process.env, ANTHROPIC_API_KEY: KEY } });
        await sup.board.post("Human", {
          id: "e-1",
          to: "Builder",
          kind: "build_request",
          payload: { summary: "Write notes.md" },
          target_docs: ["notes.md"],
        });
        const run = await sup.startRun({ role: "Builder", entryId: "e-1" });
        const events = await sup.runs.events(run.id);
        expect(run.state, `${run.reason} ${JSON.stringify(events.map((e) => [e.event_type, e.event.payload]))}`).toBe(
          "succeeded",
        );
        const infos = payloads(events, "INFO");
        expect(infos.find((p) => p.kind === "agent_session")?.metadata).toMatchObject({
          agent: "claude",
          session_id: expect.any(String),
        });
        expect(infos.filter((p) => p.message === "hello from claude")).toEqual([
          { message: "hello from claude", kind: "progress" },
        ]);
        expect(infos.find((p) => p.kind === "command")?.metadata).toMatchObject({
          agent: "claude",
          status: "completed",
          command: expect.stringContaining("pmagent emit INFO"),
        });
        expect(infos.find((p) => p.kind === "agent_message")?.message).toBe("Wrote notes.md.");
        expect(infos.find((p) => p.kind === "token_usage")?.metadata).toMatchObject({ agent: "claude" });
        expect(payloads(events, "PHASE_STARTED")).toEqual([{ phase: "agent_turn" }]);
        expect(payloads(events, "PHASE_FINISHED")).toEqual([{ phase: "agent_turn", success: true }]);
        expect(payloads(events, "ARTIFACT")).toEqual([
          { kind: "file", ref: "notes.md", metadata: { agent: "claude", path: "notes.md" } },
        ]);
        expect(payloads(events, "COMPLETED")).toEqual([{ status: "success", summary: "Wrote notes.md." }]);
        expect(readFileSync(join(run.workspace, "notes.md"), "utf8")).toBe("claude was here\n");
        expect((await sup.board.get("e-1")).entry.status).toBe("done");

        expect(fake.requests.length).toBe(2);
        expect(fake.requests[0]!.headers["x-api-key"]).toBe(KEY);
        const sent = JSON.stringify(fake.requests[0]!.body);
        expect(sent).toContain("Lattice sprite protocol (v1)");
        expect(sent).toContain(run.sprite_id);
        expect(sent).toContain("Summary: Write notes.md");
        expect(sent).not.toContain(KEY);
        expect(JSON.stringify(fake.requests[1]!.body)).toContain("tool_result");
        expect(await databaseText(ts)).not.toContain(KEY);
        expect(existsSync(join(run.workspace, "CLAUDE.md"))).toBe(false);
      } finally {
        await fake.close();
        tp.cleanup();
        await ts.cleanup();
      }
    },
  );

  it(
    "waits on the agent's WAITING; a resume continues the same Claude session (--resume) with the inputs",
    { timeout: 240_000 },
    async () => {
      const ts = await kind.open();
      const fake = await startFakeAnthropic();
      const tp = agentProject(ts, { agent: "claude", model: "claude-test", base_url: fake.baseURL }, [
        "ANTHROPIC_API_KEY",
      ]);
      try {
        fake.reply(
          {
            tool: {
              name: "Bash",
              input: {
                command:
                  'chk=$(pmagent checkpoint create) && pmagent emit WAITING --reason "which colour?" --checkpoint "$chk" --expect colour=string',
              },
            },
          },
          { text: "Waiting for the colour." },
        );
        const sup = tp.supervisor(undefined, { env: { ...process.env, ANTHROPIC_API_KEY: KEY } });
        const run = await sup.startRun({ role: "Builder" });
        expect(run.state, run.reason ?? "").toBe("waiting");
        fake.reply({ text: "Blue it is." });
        const done = await (await sup.resumeRun(run.id, { inputs: { colour: "blue" } })).finished;
        expect(done.state, done.reason ?? "").toBe("succeeded");
        const events = await sup.runs.events(run.id);
        const sessions = payloads(events, "INFO")
          .filter((p) => p.kind === "agent_session")
          .map((p) => (p.metadata as { session_id: string }).session_id);
        expect(sessions).toHaveLength(2);
        expect(sessions[1]).toBe(sessions[0]);
        expect(payloads(events, "COMPLETED")).toEqual([{ status: "success", summary: "Blue it is." }]);
        const third = JSON.stringify(fake.requests[2]!.body);
        expect(third).toContain("Waiting for the colour.");
        expect(third).toContain("Lattice resumed you from checkpoint");
      } finally {
        await fake.close();
        tp.cleanup();
        await ts.cleanup();
      }
    },
  );
});

/** Every regular file under `dir`, as text. */
function filesText(dir: string): string {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => readFileSync(join(e.parentPath, e.name), "latin1"))
    .join("\n");
}

describe.runIf(kinds.some((k) => k.name === "sqlite"))(
  "Claude Code running `env` (its key is in its commands' environment)",
  () => {
    it(
      "leaves the key out of the outbox, the run's output and Claude's own session files",
      { timeout: 240_000 },
      async () => {
        const ts = await kinds.find((k) => k.name === "sqlite")!.open();
        const fake = await startFakeAnthropic();
        const tp = agentProject(ts, { agent: "claude", model: "claude-test", base_url: fake.baseURL }, [
          "ANTHROPIC_API_KEY",
        ]);
        try {
          fake.reply(
            {
              tool: {
                name: "Bash",
                input: { command: 'env; pmagent emit INFO --message "$(env | grep ANTHROPIC_API)"' },
              },
            },
            { text: "Printed the environment." },
          );
          const sup = tp.supervisor(undefined, { env: { ...process.env, ANTHROPIC_API_KEY: KEY } });
          const run = await sup.startRun({ role: "Builder" });
          expect(run.state, run.reason ?? "").toBe("succeeded");
          const infos = payloads(await sup.runs.events(run.id), "INFO");
          // The command really saw the key: its output is there, with the key redacted.
          expect(infos.find((p) => String(p.message).startsWith("ANTHROPIC_API_KEY="))?.message).toBe(
            "ANTHROPIC_API_KEY=[REDACTED]",
          );
          const outbox = readFileSync(join(run.workspace, ".lattice", "outbox.jsonl"), "utf8");
          expect(outbox).toContain("ANTHROPIC_API_KEY=[REDACTED]");
          expect(outbox).not.toContain(KEY);
          const home = join(run.run_dir, "home");
          expect(filesText(home)).toContain("ANTHROPIC_API_KEY=[REDACTED]"); // the transcript holds the command's output
          expect(filesText(home)).not.toContain(KEY);
          expect(await databaseText(ts)).not.toContain(KEY);
        } finally {
          await fake.close();
          tp.cleanup();
          await ts.cleanup();
        }
      },
    );
  },
);
