/**
 * The real Codex CLI (@openai/codex, a dev dependency) as a sprite, against a scripted local
 * Responses API server on 127.0.0.1: the script makes the agent run a shell command that emits a
 * Lattice event with `pmagent emit` and writes a file, then answer. The run's events, artifact,
 * state, the requests Codex sent (the protocol instructions in them, the key only in the
 * Authorization header) and the store (the key nowhere in it) are checked.
 */
import { describe, expect, it } from "vitest";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { findAgentCli, type StoredEvent } from "../../src/lattice/index.js";
import { availableStoreKinds, type TestStore } from "../helpers/stores.js";
import { startFakeOpenAI } from "../helpers/fake-openai.js";
import { gitInit, testProject } from "./helpers.js";

const kinds = await availableStoreKinds();
// Not token-shaped: only the supervisor's known-value redaction could catch it.
const KEY = "codex-model-key/Zq81+local";

async function databaseText(ts: TestStore): Promise<string> {
  const tables = ts.file
    ? await ts.store.all<{ name: string }>(`SELECT name FROM sqlite_master WHERE type = 'table'`)
    : await ts.store.all<{ name: string }>(`SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema()`);
  const parts: string[] = [];
  for (const { name } of tables) parts.push(JSON.stringify(await ts.store.all(`SELECT * FROM ${name}`)));
  return parts.join("\n");
}

function agentProject(ts: TestStore, baseURL: string, runner: Record<string, unknown> = {}, credentials = ["OPENAI_API_KEY"]) {
  const tp = testProject(ts, {
    model: { base_url: baseURL },
    lanes: [
      {
        layer: "test",
        name: "build",
        roles: [
          { name: "Builder", allowed_kinds: ["build_request"], runner: { agent: "codex", model: "gpt-test", timeout_s: 120, ...runner }, credentials, next: { to: "Reviewer", kind: "review_request", id_suffix: "-review" } },
          { name: "Reviewer", allowed_kinds: ["review_request"] },
        ],
      },
    ],
  });
  gitInit(tp.root);
  return tp;
}

const payloads = (events: StoredEvent[], type: string) => events.filter((e) => e.event_type === type).map((e) => e.event.payload as Record<string, unknown>);

describe("the Codex CLI is installed as a dev dependency", () => {
  it("is found beside pmagent (node_modules), not only on PATH", () => {
    const cli = findAgentCli("@openai/codex", "codex", "");
    expect(cli?.[1]).toMatch(/node_modules\/@openai\/codex\/bin\/codex\.js$/);
  });
});

describe.each(kinds)("Codex as a sprite, on $name", (kind) => {
  it("runs the entry as its task: its command's event stored once, its stream mapped, the file it wrote an ARTIFACT, the key nowhere", { timeout: 180_000 }, async () => {
    const ts = await kind.open();
    const fake = await startFakeOpenAI();
    const tp = agentProject(ts, fake.baseURL);
    try {
      fake.reply(
        { calls: [{ name: "exec_command", arguments: { cmd: "pmagent emit INFO --message 'hello from the agent' --kind progress && printf 'agent was here\\n' > notes.md" } }] },
        { text: "Wrote notes.md." },
      );
      const sup = tp.supervisor(undefined, { env: { ...process.env, OPENAI_API_KEY: KEY } });
      await sup.board.post("Human", { id: "e-1", to: "Builder", kind: "build_request", payload: { summary: "Write notes.md", details: "one line" }, target_docs: ["notes.md"] });
      const run = await sup.startRun({ role: "Builder", entryId: "e-1" });
      const events = await sup.runs.events(run.id);
      expect(run.state, `${run.reason} ${JSON.stringify(events.map((e) => [e.event_type, e.event.payload]))}`).toBe("succeeded");
      expect(run.command.slice(0, 3)).toEqual(["pmagent", "agent-run", "codex"]);

      const types = events.map((e) => e.event_type);
      expect(types[0]).toBe("INFO"); // the session
      expect(types.indexOf("PHASE_STARTED")).toBeLessThan(types.indexOf("PHASE_FINISHED"));
      expect(types.at(-1)).toBe("COMPLETED");
      const infos = payloads(events, "INFO");
      expect(infos.find((p) => p.kind === "agent_session")?.metadata).toMatchObject({ agent: "codex", session_id: expect.any(String) });
      // Its own event: in the outbox and in the command's output, stored once.
      expect(infos.filter((p) => p.message === "hello from the agent")).toEqual([{ message: "hello from the agent", kind: "progress" }]);
      const command = infos.find((p) => p.kind === "command");
      expect(command?.metadata).toMatchObject({ agent: "codex", exit_code: 0, status: "completed" });
      expect(String((command?.metadata as { command: string }).command)).toContain("pmagent emit INFO");
      expect(infos.find((p) => p.kind === "agent_message")?.message).toBe("Wrote notes.md.");
      expect(infos.find((p) => p.kind === "token_usage")?.metadata).toMatchObject({ agent: "codex", input_tokens: expect.any(Number), output_tokens: expect.any(Number) });
      expect(payloads(events, "PHASE_FINISHED")).toEqual([{ phase: "agent_turn", success: true }]);
      expect(payloads(events, "ARTIFACT")).toEqual([{ kind: "file", ref: join(run.workspace, "notes.md"), metadata: { agent: "codex", path: "notes.md" } }]);
      expect(payloads(events, "COMPLETED")).toEqual([{ status: "success", summary: "Wrote notes.md." }]);
      expect(readFileSync(join(run.workspace, "notes.md"), "utf8")).toBe("agent was here\n");

      // The entry is done and the next role's entry references the file.
      expect((await sup.board.get("e-1")).entry.status).toBe("done");
      const next = await sup.board.get("e-1-review");
      expect(JSON.stringify(next.entry.payload)).toContain(join(run.workspace, "notes.md"));

      // What Codex sent: the protocol in its instructions, the entry as the task, the key only as the bearer token.
      expect(fake.requests.length).toBe(2);
      const first = fake.requests[0]!;
      expect(first.headers.authorization).toBe(`Bearer ${KEY}`);
      const sent = JSON.stringify(first.body);
      expect(sent).toContain("Lattice sprite protocol (v1)");
      expect(sent).toContain(run.sprite_id);
      expect(sent).toContain("pmagent checkpoint create");
      expect(sent).toContain(`${run.workspace} (also mounted at /workspace)`);
      expect(sent).toContain("Summary: Write notes.md");
      expect(sent).not.toContain(KEY);
      // The command's result went back to the model.
      expect(JSON.stringify(fake.requests[1]!.body)).toContain("function_call_output");

      expect(await databaseText(ts)).not.toContain(KEY);
      expect(existsSync(join(run.workspace, "AGENTS.md")), "the protocol goes to Codex's own home, not into the repository").toBe(false);
    } finally {
      await fake.close();
      tp.cleanup();
      await ts.cleanup();
    }
  });
});
