/**
 * The real Codex CLI (@openai/codex, a dev dependency) as a sprite, against a scripted local
 * Responses API server on 127.0.0.1: the script makes the agent run a shell command that emits a
 * Lattice event with `pmagent emit` and writes a file, then answer. The run's events, artifact,
 * state, the requests Codex sent (the protocol instructions in them, the key only in the
 * Authorization header) and the store (the key nowhere in it) are checked.
 */
import { describe, expect, it } from "vitest";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { findAgentCli } from "../../../src/lattice/index.js";
import { availableStoreKinds, type TestStore } from "../../helpers/stores.js";
import { startFakeOpenAI } from "../../helpers/fake-openai.js";
import { spawn } from "node:child_process";
import { CLI, runCli } from "../../helpers/proc.js";
import { parseConfig } from "../../../src/config/index.js";
import { agentProject as sharedAgentProject, databaseText, payloads } from "./helpers.js";

const kinds = await availableStoreKinds();
// Not token-shaped: only the supervisor's known-value redaction could catch it.
const KEY = "codex-model-key/Zq81+local";

function agentProject(
  ts: TestStore,
  baseURL: string,
  runner: Record<string, unknown> = {},
  credentials = ["OPENAI_API_KEY"],
) {
  return sharedAgentProject(ts, { agent: "codex", model: "gpt-test", ...runner }, credentials, baseURL);
}

/** A project directory with one role R (no runner). */
function testProjectDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "pmagent-agent-cli-"));
  writeFileSync(
    join(dir, "pmagent.config.json"),
    JSON.stringify({
      project_id: "p",
      lanes: [{ layer: "l", name: "n", roles: [{ name: "R", allowed_kinds: ["k"] }] }],
    }),
  );
  return dir;
}

describe("the Codex CLI is installed as a dev dependency", () => {
  it("is found beside pmagent (node_modules), not only on PATH", () => {
    const cli = findAgentCli("@openai/codex", "codex", "");
    expect(cli?.[1]).toMatch(/node_modules\/@openai\/codex\/bin\/codex\.js$/);
  });
});

describe.each(kinds)("Codex as a sprite, on $name", (kind) => {
  it(
    "runs the entry as its task: its command's event stored once, its stream mapped, the file it wrote an ARTIFACT, the key nowhere",
    { timeout: 180_000 },
    async () => {
      const ts = await kind.open();
      const fake = await startFakeOpenAI();
      const tp = agentProject(ts, fake.baseURL);
      try {
        fake.reply(
          {
            calls: [
              {
                name: "exec_command",
                arguments: {
                  cmd: "pmagent emit INFO --message 'hello from the agent' --kind progress && printf 'agent was here\\n' > notes.md && pmagent emit ARTIFACT --kind file --ref \"$LATTICE_WORKSPACE/notes.md\"",
                },
              },
            ],
          },
          { text: "Wrote notes.md." },
        );
        const sup = tp.supervisor(undefined, { env: { ...process.env, OPENAI_API_KEY: KEY } });
        await sup.board.post("Human", {
          id: "e-1",
          to: "Builder",
          kind: "build_request",
          payload: { summary: "Write notes.md", details: "one line" },
          target_docs: ["notes.md"],
        });
        const run = await sup.startRun({ role: "Builder", entryId: "e-1" });
        const events = await sup.runs.events(run.id);
        expect(run.state, `${run.reason} ${JSON.stringify(events.map((e) => [e.event_type, e.event.payload]))}`).toBe(
          "succeeded",
        );
        expect(run.command.slice(0, 3)).toEqual(["pmagent", "agent-run", "codex"]);

        const types = events.map((e) => e.event_type);
        expect(types[0]).toBe("INFO"); // the session
        expect(types.indexOf("PHASE_STARTED")).toBeLessThan(types.indexOf("PHASE_FINISHED"));
        expect(types.at(-1)).toBe("COMPLETED");
        const infos = payloads(events, "INFO");
        expect(infos.find((p) => p.kind === "agent_session")?.metadata).toMatchObject({
          agent: "codex",
          session_id: expect.any(String),
        });
        // Its own event: in the outbox and in the command's output, stored once.
        expect(infos.filter((p) => p.message === "hello from the agent")).toEqual([
          { message: "hello from the agent", kind: "progress" },
        ]);
        const command = infos.find((p) => p.kind === "command");
        expect(command?.metadata).toMatchObject({ agent: "codex", exit_code: 0, status: "completed" });
        expect(String((command?.metadata as { command: string }).command)).toContain("pmagent emit INFO");
        expect(infos.find((p) => p.kind === "agent_message")?.message).toBe("Wrote notes.md.");
        expect(infos.find((p) => p.kind === "token_usage")?.metadata).toMatchObject({
          agent: "codex",
          input_tokens: expect.any(Number),
          output_tokens: expect.any(Number),
        });
        expect(payloads(events, "PHASE_FINISHED")).toEqual([{ phase: "agent_turn", success: true }]);
        // The file once: the agent declared it itself (an absolute path), so the detected change is not listed again.
        expect(payloads(events, "ARTIFACT")).toEqual([{ kind: "file", ref: join(run.workspace, "notes.md") }]);
        expect(payloads(events, "COMPLETED")).toEqual([{ status: "success", summary: "Wrote notes.md." }]);
        expect(readFileSync(join(run.workspace, "notes.md"), "utf8")).toBe("agent was here\n");

        // The entry is done and the next role's entry references the file.
        expect((await sup.board.get("e-1")).entry.status).toBe("done");
        const next = await sup.board.get("e-1-review");
        // By its repository path, once.
        expect((next.entry.payload.refs as { file: string }).file).toBe("notes.md");
        expect((next.entry.payload.refs as { artifacts: Array<{ ref: string }> }).artifacts.map((a) => a.ref)).toEqual([
          "notes.md",
        ]);
        expect(JSON.stringify(next.entry.payload)).not.toContain(run.workspace);

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
        expect(
          existsSync(join(run.workspace, "AGENTS.md")),
          "the protocol goes to Codex's own home, not into the repository",
        ).toBe(false);
      } finally {
        await fake.close();
        tp.cleanup();
        await ts.cleanup();
      }
    },
  );

  it(
    "waits when the agent emits WAITING, and a resume continues the same Codex session with the inputs (a second resume is a no-op)",
    { timeout: 180_000 },
    async () => {
      const ts = await kind.open();
      const fake = await startFakeOpenAI();
      const tp = agentProject(ts, fake.baseURL);
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
        expect(run.waiting).toMatchObject({ reason: "which colour?", expected_inputs: { colour: "string" } });
        const first = await sup.runs.events(run.id);
        const session = payloads(first, "INFO").find((p) => p.kind === "agent_session")?.metadata as {
          session_id: string;
        };
        expect(payloads(first, "COMPLETED")).toEqual([]);

        fake.reply(
          { calls: [{ name: "exec_command", arguments: { cmd: "printf blue > colour.txt" } }] },
          { text: "Painted it blue." },
        );
        const resumed = await sup.resumeRun(run.id, { inputs: { colour: "blue" } });
        const done = await resumed.finished;
        expect(done.state, done.reason ?? "").toBe("succeeded");
        expect(done.attempt).toBe(2);
        const events = await sup.runs.events(run.id);
        const sessions = payloads(events, "INFO").filter((p) => p.kind === "agent_session");
        expect(sessions.map((p) => (p.metadata as { session_id: string }).session_id)).toEqual([
          session.session_id,
          session.session_id,
        ]);
        expect(payloads(events, "COMPLETED")).toEqual([{ status: "success", summary: "Painted it blue." }]);
        expect(payloads(events, "ARTIFACT").map((p) => (p.metadata as { path: string }).path)).toEqual(["colour.txt"]);

        // The same session: the third request carries the first turn and the resume's inputs.
        expect(fake.requests.length).toBe(4);
        const third = JSON.stringify(fake.requests[2]!.body);
        expect(third).toContain("Waiting for the colour.");
        expect(third).toContain("Lattice resumed you from checkpoint");
        expect(third).toContain('\\"colour\\": \\"blue\\"');

        const again = await sup.resumeRun(run.id, { inputs: { colour: "blue" } });
        expect(again.noop).toBe(true);
        expect(fake.requests.length).toBe(4);
        expect(await databaseText(ts)).not.toContain(KEY);
      } finally {
        await fake.close();
        tp.cleanup();
        await ts.cleanup();
      }
    },
  );

  it(
    "fails the run with ERROR when the model API refuses the request (the CLI's own error as the reason)",
    { timeout: 180_000 },
    async () => {
      const ts = await kind.open();
      const fake = await startFakeOpenAI();
      const tp = agentProject(ts, fake.baseURL);
      try {
        fake.reply({ status: 400, message: "The model gpt-test does not exist" });
        const sup = tp.supervisor(undefined, { env: { ...process.env, OPENAI_API_KEY: KEY } });
        const run = await sup.startRun({ role: "Builder", command: undefined });
        expect(run.state).toBe("failed");
        expect(run.reason).toContain("The model gpt-test does not exist");
        const events = await sup.runs.events(run.id);
        expect(events.at(-1)?.event_type).toBe("ERROR");
        expect((events.at(-1)?.event.payload as { details: unknown }).details).toMatchObject({ agent: "codex" });
      } finally {
        await fake.close();
        tp.cleanup();
        await ts.cleanup();
      }
    },
  );

  it(
    "refuses to start the agent when its role may not receive the model key, or the key is not set",
    { timeout: 60_000 },
    async () => {
      const ts = await kind.open();
      const fake = await startFakeOpenAI();
      const tp = agentProject(ts, fake.baseURL, {}, []);
      try {
        const sup = tp.supervisor(undefined, { env: { ...process.env, OPENAI_API_KEY: KEY } });
        const run = await sup.startRun({ role: "Builder" });
        expect(run.state).toBe("failed");
        expect(run.reason).toBe(
          'role Builder runs agent codex with the model key OPENAI_API_KEY, which the role may not receive: add "OPENAI_API_KEY" to its "credentials" in pmagent.config.json (or name another with runner.key_credential)',
        );
        const env = { ...process.env };
        delete env.OPENAI_API_KEY;
        const tp2 = agentProject(ts, fake.baseURL, { key_credential: "MY_MODEL_KEY" }, ["MY_MODEL_KEY"]);
        try {
          const unset = await tp2.supervisor(undefined, { env }).startRun({ role: "Builder" });
          expect(unset.state).toBe("failed");
          expect(unset.reason).toMatch(/^the model key MY_MODEL_KEY for agent codex is not set: /);
        } finally {
          tp2.cleanup();
        }
        expect(fake.requests).toEqual([]);
      } finally {
        await fake.close();
        tp.cleanup();
        await ts.cleanup();
      }
    },
  );

  it(
    "the hard rules hold for the agent's shell: git push and gh are refused and recorded as violations; its commands never see the key",
    { timeout: 180_000 },
    async () => {
      const ts = await kind.open();
      const fake = await startFakeOpenAI();
      const tp = agentProject(ts, fake.baseURL);
      try {
        fake.reply(
          {
            calls: [
              {
                name: "exec_command",
                arguments: { cmd: "git push origin main; /usr/bin/git push origin main; gh pr list; env > env.txt" },
              },
            ],
          },
          { text: "Could not push." },
        );
        const sup = tp.supervisor(undefined, { env: { ...process.env, OPENAI_API_KEY: KEY } });
        const run = await sup.startRun({ role: "Builder" });
        const violations = await sup.runs.violations(run.id);
        expect(violations.map((v) => v.rule)).toEqual(["git_push", "git_push", "github_cli"]);
        const command = payloads(await sup.runs.events(run.id), "INFO").find((p) => p.kind === "command");
        expect(String((command?.metadata as { output: string }).output)).toContain(
          "is refused inside a sprite (hard rule: git_push)",
        );
        // The model key is in Codex's environment only: its commands do not get it.
        const env = readFileSync(join(run.workspace, "env.txt"), "utf8");
        expect(env).toContain("LATTICE_SPRITE_ID=");
        expect(env).not.toContain(KEY);
        expect(env).not.toContain("PMAGENT_CODEX_API_KEY");
      } finally {
        await fake.close();
        tp.cleanup();
        await ts.cleanup();
      }
    },
  );

  it(
    "a kill -9 of the supervisor while the agent works: after reconcile nothing is lost or doubled",
    { timeout: 180_000 },
    async () => {
      const ts = await kind.open();
      const fake = await startFakeOpenAI();
      const tp = agentProject(ts, fake.baseURL);
      try {
        // The second model request never gets an answer: the agent is mid-turn when the supervisor dies.
        fake.reply(
          {
            calls: [
              {
                name: "exec_command",
                arguments: { cmd: "pmagent emit INFO --message before-the-crash && printf x > x.txt" },
              },
            ],
          },
          { hang: true },
        );
        const cli = spawn(process.execPath, [CLI, "run", "--role", "Builder"], {
          cwd: tp.root,
          env: { ...process.env, ...ts.env, OPENAI_API_KEY: KEY },
          stdio: "ignore",
        });
        const gone = new Promise((r) => cli.once("exit", r));
        while (fake.requests.length < 2) await new Promise((r) => setTimeout(r, 20));
        cli.kill("SIGKILL");
        await gone;
        const sup = tp.supervisor(undefined, { env: { ...process.env, OPENAI_API_KEY: KEY } });
        const [run] = await sup.reconcile();
        expect(run?.state).toBe("failed");
        expect(run?.reason).toMatch(/without COMPLETED, ERROR or WAITING/);
        const events = await sup.runs.events(run!.id);
        expect(new Set(events.map((e) => e.id)).size).toBe(events.length);
        const infos = payloads(events, "INFO");
        expect(infos.filter((p) => p.message === "before-the-crash")).toHaveLength(1);
        expect(infos.filter((p) => p.kind === "command")).toHaveLength(1);
        expect(infos.filter((p) => p.kind === "agent_session")).toHaveLength(1);
        expect(payloads(events, "PHASE_STARTED")).toEqual([{ phase: "agent_turn" }]);
        expect(await databaseText(ts)).not.toContain(KEY);
      } finally {
        await fake.close();
        tp.cleanup();
        await ts.cleanup();
      }
    },
  );

  it(
    "pmagent run --agent codex --prompt TEXT runs it by hand (the role's model and endpoint)",
    { timeout: 180_000 },
    async () => {
      const ts = await kind.open();
      const fake = await startFakeOpenAI();
      const tp = agentProject(ts, fake.baseURL);
      try {
        fake.reply({ text: "Nothing to change." });
        const r = await runCli(
          ["run", "--role", "Builder", "--agent", "codex", "--prompt", "Look at the repository", "--format", "json"],
          { cwd: tp.root, env: { ...process.env, ...ts.env, OPENAI_API_KEY: KEY } },
        );
        expect(r.code, r.stderr).toBe(0);
        const run = JSON.parse(r.stdout) as { state: string; command: string[] };
        expect(run.state).toBe("succeeded");
        expect(run.command).toEqual([
          "pmagent",
          "agent-run",
          "codex",
          "--model",
          "gpt-test",
          "--base-url",
          fake.baseURL,
          "--key-credential",
          "OPENAI_API_KEY",
          "--prompt",
          "Look at the repository",
        ]);
        expect(JSON.stringify(fake.requests[0]!.body)).toContain("Look at the repository");
        expect(r.stdout + r.stderr).not.toContain(KEY);
      } finally {
        await fake.close();
        tp.cleanup();
        await ts.cleanup();
      }
    },
  );
});

describe("agent runner input errors", () => {
  const lane = (runner: unknown) =>
    JSON.stringify({
      project_id: "p",
      lanes: [{ layer: "l", name: "n", roles: [{ name: "R", allowed_kinds: ["k"], runner }] }],
    });

  it("a runner names a command or an agent, not both or neither, and agent settings only with an agent", () => {
    expect(() => parseConfig(lane({ command: ["x"], agent: "codex" }), "c.json")).toThrow(
      "give runner.command or runner.agent, not both",
    );
    expect(() => parseConfig(lane({ timeout_s: 5 }), "c.json")).toThrow(
      "give runner.command (the sprite's argv) or runner.agent (one of codex, claude, gemini)",
    );
    expect(() => parseConfig(lane({ command: ["x"], model: "m" }), "c.json")).toThrow(
      "runner.model, args, base_url and key_credential apply to runner.agent only",
    );
    expect(() => parseConfig(lane({ agent: "cursor" }), "c.json")).toThrow(/agent/);
  });

  it("pmagent run refuses --prompt without --agent, an unknown agent, and a command with --agent", async () => {
    const dir = testProjectDir();
    const cases: Array<[string[], string]> = [
      [["run", "--role", "R", "--prompt", "x"], "--prompt goes with --agent: give the agent to run"],
      [["run", "--role", "R", "--agent", "cursor"], '--agent must be one of codex, claude, gemini, got "cursor"'],
      [
        ["run", "--role", "R", "--agent", "codex", "--", "echo"],
        "--agent runs the agent's CLI: give no command after --",
      ],
      [["agent-run", "cursor"], 'unknown agent "cursor" (expected one of codex, claude, gemini)'],
    ];
    for (const [args, message] of cases) {
      const r = await runCli(args, { cwd: dir, env: { ...process.env } });
      expect(r.stderr, args.join(" ")).toContain(message);
      expect(r.code, args.join(" ")).toBe(2);
    }
  });
});
