import { describe, expect, it } from "vitest";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Blackboard } from "../../src/blackboard/index.js";
import { loadProject } from "../../src/config/index.js";
import { openStore } from "../../src/store/index.js";
import { Worker } from "../../src/lattice/index.js";
import { projectSupervisor } from "../../src/app/index.js";
import { createDemoRepository } from "../../src/lane/index.js";
import { CLI } from "../helpers/proc.js";

/** A demo repository, one Human request, and a worker for every role until nothing is open. */
async function cycle(payload: Record<string, unknown>) {
  const dir = join(mkdtempSync(join(tmpdir(), "pmagent-lane-test-")), "repo");
  createDemoRepository(dir);
  const project = loadProject({ cwd: dir });
  const store = await openStore({ root: project.root, storage: project.config.storage, env: {} });
  try {
    const board = new Blackboard(store, { projectId: "demo", humans: ["Human"] });
    await board.post("Human", { id: "req-9", to: "Aya", kind: "doc_update_proposal_request", payload, target_docs: ["STATE/current_state.md"] });
    const supervisor = projectSupervisor({ store, project, pmagentCommand: [process.execPath, CLI], env: { PATH: process.env.PATH } });
    const roles = project.config.lanes[0]!.roles.map((r) => r.name);
    await new Worker({ supervisor, roles, id: "test-worker", once: true }).run(AbortSignal.timeout(120_000));
    const listed = await board.list();
    const entries = listed.map((e) => [e.entry.id, e.entry.status, e.entry.note ?? null]);
    const runs = await supervisor.runs.list({});
    return { entries, runs, listed };
  } finally {
    await store.close();
  }
}

describe("the doc_update lane under a worker", () => {
  it("stops at Sho when every update is refused: the truncating replacement never reaches Tsugu", async () => {
    const { entries, runs, listed } = await cycle({
      summary: "Shorten the STATE document",
      details: { updates: [{ path: "STATE/current_state.md", reason: "shorter", change_type: "replace", suggested_markdown: "# Current state\n\nThe lane" }] },
    });
    expect(entries.map(([id, status]) => [id, status])).toEqual([
      ["req-9", "done"],
      ["req-9-review", "error"],
      ["req-9-review-error", "open"],
    ]);
    expect(String(entries[1]![2])).toContain("every update was rejected");
    const sho = runs.find((r) => r.role === "Sho")!;
    expect(sho.state).toBe("failed");
    // The failed review reaches the human: reason, run and evidence (the review Sho wrote).
    const error = listed[2]!.entry;
    expect(error).toMatchObject({ from: "Sho", to: "Human", kind: "doc_update_error", source_run_id: sho.id, payload: { refs: { source_board_id: "req-9-review", run_id: sho.id } } });
    const details = error.payload.details as { reason: string; run_id: string; evidence: { artifacts: Array<{ kind: string }> } };
    expect(details.reason).toContain("every update was rejected");
    expect(details.run_id).toBe(sho.id);
    expect(details.evidence.artifacts.map((a) => a.kind)).toEqual(["doc_update_review_v1"]);
  }, 180_000);

  it("fails Aya's run with the reason when the request's updates are malformed", async () => {
    const { entries, runs } = await cycle({ summary: "s", details: { updates: [{ path: "STATE/current_state.md", change_type: "rewrite" }] } });
    expect(entries.map(([id, status]) => [id, status])).toEqual([
      ["req-9", "error"],
      ["req-9-error", "open"],
    ]);
    const aya = runs.find((r) => r.role === "Aya")!;
    expect(aya.state).toBe("failed");
    expect(aya.reason).toContain("payload.details of entry req-9");
  }, 180_000);
});
