/**
 * Watching an agent work and talking back, with the real Codex CLI against the scripted Responses
 * server: its message, its MCP tool call (with arguments and result) and its command (as it gave it, with the exit code and output) appear in the run's
 * events while the turn is still under way (the next model request is held until they are seen),
 * and a follow-up message given with the resume reaches the same Codex session in its next request.
 */
import { describe, expect, it } from "vitest";
import { fileURLToPath } from "node:url";
import { followRunEvents, type StoredEvent } from "../../../src/lattice/index.js";
import { availableStoreKinds } from "../../helpers/stores.js";
import { startFakeOpenAI } from "../../helpers/fake-openai.js";
import { runCli } from "../../helpers/proc.js";
import { agentProject, payloads } from "./helpers.js";

const kinds = await availableStoreKinds();
const KEY = "codex-conversation-key/local";
/** A stdio MCP server whose tool `echo` the agent calls. */
const MCP_ECHO = fileURLToPath(new URL("./fixtures/mcp-echo.mjs", import.meta.url));

/** Follow the run's events until `seen` holds for what is stored so far; returns them. */
async function eventsUntil(
  sup: { runs: Parameters<typeof followRunEvents>[0] },
  runId: string,
  seen: (events: StoredEvent[]) => boolean,
): Promise<StoredEvent[]> {
  const all: StoredEvent[] = [];
  for await (const batch of followRunEvents(sup.runs, runId, {})) {
    all.push(...batch);
    if (seen(all)) return all;
  }
  throw new Error(
    `run ${runId} ended before the events looked for: ${JSON.stringify(all.map((e) => [e.event_type, e.event.payload]))}`,
  );
}

describe.each(kinds)("an agent's conversation, on $name", (kind) => {
  it(
    "its message, tool call (an MCP server's) and command with exit code and output are stored while its turn goes on",
    { timeout: 180_000 },
    async () => {
      const ts = await kind.open();
      const fake = await startFakeOpenAI();
      const tp = agentProject(
        ts,
        {
          agent: "codex",
          model: "gpt-test",
          args: [
            "-c",
            `mcp_servers.echo.command=${JSON.stringify(process.execPath)}`,
            "-c",
            `mcp_servers.echo.args=[${JSON.stringify(MCP_ECHO)}]`,
          ],
        },
        ["OPENAI_API_KEY"],
        fake.baseURL,
      );
      let release!: () => void;
      const held = new Promise<void>((r) => (release = r));
      try {
        fake.reply(
          {
            text: "I will count the **files** first.",
            calls: [
              { namespace: "mcp__echo", name: "echo", arguments: { text: "hello <b>tool</b>" } },
              { name: "exec_command", arguments: { cmd: "printf 'three files\\n'; exit 3" } },
            ],
          },
          { until: held, then: { text: "There are three files." } },
        );
        const sup = tp.supervisor(undefined, { env: { ...process.env, OPENAI_API_KEY: KEY } });
        let started!: (id: string) => void;
        const recorded = new Promise<string>((r) => (started = r));
        const finished = sup.startRun({ role: "Builder", onStarted: (id) => started(id) });
        const runId = await Promise.race([
          recorded,
          finished.then((r) => Promise.reject(new Error(`the run ended before it was seen: ${r.state} ${r.reason}`))),
        ]);
        const isCommand = (e: StoredEvent) =>
          e.event_type === "INFO" && (e.event.payload as { kind?: string }).kind === "command";
        const seen = await eventsUntil(sup, runId, (all) => all.some(isCommand));
        // Mid-turn: the model's next request is held, so the run is still going. Codex may print the
        // command's item before it sends that request: wait for the request, not for a moment.
        await fake.requested(2);
        expect((await sup.runs.get(runId)).state).toBe("running");
        expect(fake.requests.length).toBe(2);
        const infos = payloads(seen, "INFO");
        expect(infos.find((p) => p.kind === "agent_message")).toMatchObject({
          message: "I will count the **files** first.",
          metadata: { agent: "codex" },
        });
        // The MCP tool it called, with what it sent and what the tool answered.
        expect(infos.find((p) => p.kind === "tool_call")).toMatchObject({
          message: "tool echo.echo: completed",
          metadata: {
            agent: "codex",
            server: "echo",
            tool: "echo",
            status: "completed",
            input: '{"text":"hello <b>tool</b>"}',
            output: "echo: hello <b>tool</b>",
            error: null,
          },
        });
        const command = infos.find((p) => p.kind === "command");
        expect(command?.message).toBe("$ printf 'three files\\n'; exit 3 (exit 3)");
        expect(command?.metadata).toMatchObject({ agent: "codex", exit_code: 3, status: "failed" });
        expect(String((command?.metadata as { output: string }).output)).toContain("three files");

        release();
        const run = await finished;
        expect(run.state, run.reason ?? "").toBe("succeeded");
        expect(payloads(await sup.runs.events(run.id), "COMPLETED")).toEqual([
          { status: "success", summary: "There are three files." },
        ]);
      } finally {
        release();
        await fake.close();
        tp.cleanup();
        await ts.cleanup();
      }
    },
  );

  it(
    "a follow-up message given with the resume reaches the same Codex session; an empty one, or one to a run not waiting, is refused",
    { timeout: 180_000 },
    async () => {
      const ts = await kind.open();
      const fake = await startFakeOpenAI();
      const tp = agentProject(ts, { agent: "codex", model: "gpt-test" }, ["OPENAI_API_KEY"], fake.baseURL);
      try {
        fake.reply(
          {
            calls: [
              {
                name: "exec_command",
                arguments: {
                  cmd: 'chk=$(pmagent checkpoint create) && pmagent emit WAITING --reason "which colour?" --checkpoint "$chk" --expect colour=string',
                },
              },
            ],
          },
          { text: "Waiting for the colour." },
        );
        const sup = tp.supervisor(undefined, { env: { ...process.env, OPENAI_API_KEY: KEY } });
        const run = await sup.startRun({ role: "Builder" });
        expect(run.state, run.reason ?? "").toBe("waiting");

        await expect(sup.resumeRun(run.id, { inputs: { colour: "blue" }, message: "  \n" })).rejects.toThrow(
          "the follow-up message is empty: write what the agent should be told, or give no message",
        );
        await expect(
          sup.resumeRun(run.id, { inputs: { colour: "blue" }, message: "x", context: { message: "y" } }),
        ).rejects.toThrow("the follow-up message is given both as the message and as context.message: give it once");
        await expect(sup.queueResume(run.id, { inputs: { colour: "blue" }, message: "" })).rejects.toThrow(
          "the follow-up message is empty",
        );
        await expect(
          sup.resumeRun(run.id, { inputs: { colour: "blue" }, message: "x".repeat(20_001) }),
        ).rejects.toThrow(
          "the follow-up message has 20001 characters, over the limit of 20000: shorten it, or put the long text in a file of the workspace and say where",
        );
        expect((await sup.runs.get(run.id)).state).toBe("waiting");

        fake.reply(
          { calls: [{ name: "exec_command", arguments: { cmd: "printf BLUE > colour.txt" } }] },
          { text: "Painted it BLUE, in capitals as asked." },
        );
        const resumed = await sup.resumeRun(run.id, {
          inputs: { colour: "blue" },
          message: "Write the colour in capitals, please.",
        });
        const done = await resumed.finished;
        expect(done.state, done.reason ?? "").toBe("succeeded");
        // The third request is the resumed session: the first turn, then the person's message and the inputs.
        expect(fake.requests.length).toBe(4);
        const third = JSON.stringify(fake.requests[2]!.body);
        expect(third).toContain("Waiting for the colour.");
        expect(third).toContain("A person answered you with this message:\\n\\nWrite the colour in capitals, please.");
        expect(third).toContain('\\"colour\\": \\"blue\\"');
        // The message is in the conversation, as the agent heard it.
        expect(payloads(await sup.runs.events(run.id), "INFO").filter((p) => p.kind === "follow_up")).toEqual([
          { message: "Write the colour in capitals, please.", kind: "follow_up", metadata: { agent: "codex" } },
        ]);
        const sessions = payloads(await sup.runs.events(run.id), "INFO").filter((p) => p.kind === "agent_session");
        expect(new Set(sessions.map((p) => (p.metadata as { session_id: string }).session_id)).size).toBe(1);

        // The run no longer waits: a message to it is refused, through the CLI as through the supervisor.
        await expect(sup.resumeRun(run.id, { inputs: {}, message: "one more thing" })).rejects.toThrow(
          `run ${run.id} is succeeded, not waiting: only a waiting run can be resumed`,
        );
        const env = { ...process.env, ...ts.env, OPENAI_API_KEY: KEY };
        const late = await runCli(["resume", run.id, "--message", "one more thing"], { cwd: tp.root, env });
        expect(late.stderr).toContain(`run ${run.id} is succeeded, not waiting: only a waiting run can be resumed`);
        expect(late.code).toBe(1);
        const empty = await runCli(["resume", run.id, "--message", ""], { cwd: tp.root, env });
        expect(empty.stderr).toContain(
          "the follow-up message is empty: write what the agent should be told, or give no message",
        );
        expect(empty.code).toBe(2);
        expect(fake.requests.length).toBe(4);
      } finally {
        await fake.close();
        tp.cleanup();
        await ts.cleanup();
      }
    },
  );
});
