/**
 * The doc_update lane with a real coding agent as Aya: the Codex CLI (against a scripted local
 * Responses API) writes the doc_update_proposal_v1 artifact and declares it with `pmagent emit
 * ARTIFACT`; Sho, Tsugu, Gen and Hana (the built-in sprites) follow under one worker, and the
 * STATE document on the cycle's branch has the agent's update.
 */
import { describe, expect, it } from "vitest";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Blackboard } from "../../src/blackboard/index.js";
import { loadProject } from "../../src/config/index.js";
import { openStore } from "../../src/store/index.js";
import { migrations } from "../../src/app/index.js";
import { Worker } from "../../src/lattice/index.js";
import { projectSupervisor } from "../../src/app/index.js";
import { createDemoRepository } from "../../src/lane/index.js";
import { CLI } from "../helpers/proc.js";
import { startFakeOpenAI } from "../helpers/fake-openai.js";

const KEY = "lane-agent-key/Hy55+local";
const APPENDED = "### Agent note\n\nCodex proposed this update as Aya.";

describe("the doc_update lane with Codex as Aya", () => {
  it("runs a whole cycle: the agent's proposal artifact goes to Sho, Tsugu applies it, Gen and Hana follow, every role's entry ends done", async () => {
    const fake = await startFakeOpenAI();
    const dir = join(mkdtempSync(join(tmpdir(), "pmagent-lane-agent-")), "repo");
    createDemoRepository(dir);
    const configFile = join(dir, "pmagent.config.json");
    const config = JSON.parse(readFileSync(configFile, "utf8")) as {
      lanes: Array<{ roles: Array<Record<string, unknown>> }>;
    };
    const aya = config.lanes[0]!.roles.find((r) => r.name === "Aya")!;
    aya.runner = { agent: "codex", model: "gpt-test", base_url: fake.baseURL, timeout_s: 120 };
    writeFileSync(configFile, JSON.stringify(config, null, 2));
    const project = loadProject({ cwd: dir });
    const store = await openStore({ migrations, root: project.root, storage: project.config.storage, env: {} });
    try {
      const proposal = {
        version: "doc_update_proposal_v1",
        cycle_id: "req-1",
        request_entry_id: "req-1",
        summary: "Note the agent in STATE",
        created_at: "2026-01-15T10:30:00Z",
        updates: [
          {
            id: "u1",
            path: "STATE/current_state.md",
            reason: "the agent ran",
            change_type: "append",
            suggested_markdown: APPENDED,
          },
        ],
      };
      const cmd = `mkdir -p out && printf '%s' '${JSON.stringify(proposal)}' > out/proposal.json && pmagent emit ARTIFACT --kind doc_update_proposal_v1 --ref "$LATTICE_WORKSPACE/out/proposal.json" && pmagent emit COMPLETED --status success --summary "proposal written"`;
      fake.reply({ calls: [{ name: "exec_command", arguments: { cmd } }] }, { text: "Proposal written." });
      const board = new Blackboard(store, { projectId: "demo", humans: ["Human"] });
      await board.post("Human", {
        id: "req-1",
        to: "Aya",
        kind: "doc_update_proposal_request",
        payload: { summary: "Note the agent in STATE" },
        target_docs: ["STATE/current_state.md"],
      });
      const supervisor = projectSupervisor({
        store,
        project,
        pmagentCommand: [process.execPath, CLI],
        env: { PATH: process.env.PATH, OPENAI_API_KEY: KEY },
      });
      const roles = project.config.lanes[0]!.roles.map((r) => r.name);
      await new Worker({ supervisor, roles, id: "test-worker", once: true }).run(AbortSignal.timeout(170_000));
      const entries = (await board.list()).map((e) => [e.entry.id, e.entry.status, e.entry.note ?? null]);
      expect(entries.map(([id, status]) => [id, status])).toEqual([
        ["req-1", "done"],
        ["req-1-review", "done"],
        ["req-1-review-apply", "done"],
        ["req-1-review-apply-pm_snapshot", "done"],
        ["req-1-review-apply-pm_snapshot-done", "done"],
        // Addressed to Human: the cycle is over.
        ["req-1-review-apply-pm_snapshot-done-cycle_done", "open"],
      ]);
      const runs = await supervisor.runs.list({});
      const ayaRun = runs.find((r) => r.role === "Aya")!;
      expect(ayaRun.command.slice(0, 3)).toEqual(["pmagent", "agent-run", "codex"]);
      expect(JSON.stringify(fake.requests[0]!.body)).toContain("Lattice sprite protocol (v1)");
      const bare = join(dir, ".pmagent", "forge.git");
      expect(
        execFileSync("git", ["show", "pmagent/layer_b/doc_update/req-1:STATE/current_state.md"], {
          cwd: bare,
          encoding: "utf8",
        }),
      ).toContain(APPENDED);
    } finally {
      await store.close();
      await fake.close();
    }
  }, 180_000);
});
