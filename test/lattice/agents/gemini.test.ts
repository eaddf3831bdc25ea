/**
 * The real Gemini CLI (@google/gemini-cli, a dev dependency) as a sprite, against a scripted local
 * Gemini API server on 127.0.0.1 (streamGenerateContent, SSE): the script makes the agent run a
 * shell command that emits a Lattice event with `pmagent emit` and writes a file, then answer;
 * the same checks as Codex's, and a WAITING resumed in the same session.
 */
import { describe, expect, it } from "vitest";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { availableStoreKinds } from "../../helpers/stores.js";
import { startFakeGemini } from "../../helpers/fake-gemini.js";
import { agentProject, databaseText, payloads } from "./helpers.js";

const kinds = await availableStoreKinds();
const KEY = "gemini-model-key/Vx93+local";

describe.each(kinds)("Gemini CLI as a sprite, on $name", (kind) => {
  it(
    "runs the entry as its task: its shell command's event stored once, its stream mapped, the file an ARTIFACT, the key nowhere",
    { timeout: 240_000 },
    async () => {
      const ts = await kind.open();
      const fake = await startFakeGemini();
      const tp = agentProject(ts, { agent: "gemini", model: "gemini-test", base_url: fake.baseURL }, [
        "GEMINI_API_KEY",
      ]);
      try {
        fake.reply(
          {
            call: {
              name: "run_shell_command",
              args: {
                command:
                  "pmagent emit INFO --message 'hello from gemini' --kind progress && printf 'gemini was here\\n' > notes.md",
              },
            },
          },
          { text: "Wrote notes.md for you." },
        );
        const sup = tp.supervisor(undefined, { env: { ...process.env, GEMINI_API_KEY: KEY } });
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
          agent: "gemini",
          session_id: expect.any(String),
        });
        expect(infos.filter((p) => p.message === "hello from gemini")).toEqual([
          { message: "hello from gemini", kind: "progress" },
        ]);
        expect(infos.find((p) => p.kind === "command")?.metadata).toMatchObject({
          agent: "gemini",
          status: "completed",
          command: expect.stringContaining("pmagent emit INFO"),
        });
        // The streamed deltas are one message.
        expect(infos.filter((p) => p.kind === "agent_message").map((p) => p.message)).toEqual([
          "Wrote notes.md for you.",
        ]);
        expect(infos.find((p) => p.kind === "token_usage")?.metadata).toMatchObject({ agent: "gemini" });
        expect(payloads(events, "PHASE_FINISHED")).toEqual([{ phase: "agent_turn", success: true }]);
        expect(payloads(events, "ARTIFACT")).toEqual([
          { kind: "file", ref: "notes.md", metadata: { agent: "gemini", path: "notes.md" } },
        ]);
        expect(payloads(events, "COMPLETED")).toEqual([{ status: "success", summary: "Wrote notes.md for you." }]);
        expect(readFileSync(join(run.workspace, "notes.md"), "utf8")).toBe("gemini was here\n");

        expect(fake.requests.length).toBe(2);
        expect(fake.requests[0]!.headers["x-goog-api-key"]).toBe(KEY);
        const sent = JSON.stringify(fake.requests[0]!.body);
        expect(sent).toContain("Lattice sprite protocol (v1)");
        expect(sent).toContain("xargs -I{} pmagent emit WAITING");
        expect(sent).toContain(run.sprite_id);
        expect(sent).toContain("Summary: Write notes.md");
        expect(sent).not.toContain(KEY);
        expect(JSON.stringify(fake.requests[1]!.body)).toContain("functionResponse");
        expect(await databaseText(ts)).not.toContain(KEY);
        expect(existsSync(join(run.workspace, "GEMINI.md"))).toBe(false);
      } finally {
        await fake.close();
        tp.cleanup();
        await ts.cleanup();
      }
    },
  );

  it(
    "waits on the agent's WAITING (its commands never see the key); a resume continues the same Gemini session with the inputs",
    { timeout: 240_000 },
    async () => {
      const ts = await kind.open();
      const fake = await startFakeGemini();
      const tp = agentProject(ts, { agent: "gemini", model: "gemini-test", base_url: fake.baseURL }, [
        "GEMINI_API_KEY",
      ]);
      try {
        // Gemini CLI blocks $(…) in shell commands: the instructions' pipe form.
        fake.reply(
          {
            call: {
              name: "run_shell_command",
              args: {
                command:
                  'env > env.txt && pmagent checkpoint create | xargs -I{} pmagent emit WAITING --reason "which colour?" --checkpoint {} --expect colour=string',
              },
            },
          },
          { text: "Waiting for the colour." },
        );
        const sup = tp.supervisor(undefined, { env: { ...process.env, GEMINI_API_KEY: KEY } });
        const run = await sup.startRun({ role: "Builder" });
        expect(run.state, JSON.stringify((await sup.runs.events(run.id)).map((e) => e.event.payload))).toBe("waiting");
        // Its commands never see the model key.
        const env = readFileSync(join(run.workspace, "env.txt"), "utf8");
        expect(env).toContain("LATTICE_SPRITE_ID=");
        expect(env).not.toContain(KEY);
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
