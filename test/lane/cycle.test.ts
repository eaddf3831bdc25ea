import { describe, expect, it } from "vitest";
import { execFileSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Blackboard, type EntryInput } from "../../src/blackboard/index.js";
import { loadProject } from "../../src/config/index.js";
import { openStore } from "../../src/store/index.js";
import { migrations } from "../../src/app/index.js";
import { Worker } from "../../src/lattice/index.js";
import { projectSupervisor } from "../../src/app/index.js";
import { createDemoRepository } from "../../src/lane/index.js";
import { CLI } from "../helpers/proc.js";

type Post = { from: string; entry: EntryInput };

/** A demo repository, one Human request (or the given entries), and a worker for every role until nothing is open. */
async function cycle(
  payload: Record<string, unknown>,
  posts: Post[] = [
    {
      from: "Human",
      entry: {
        id: "req-9",
        to: "Aya",
        kind: "doc_update_proposal_request",
        payload,
        target_docs: ["STATE/current_state.md"],
      },
    },
  ],
) {
  const dir = join(mkdtempSync(join(tmpdir(), "pmagent-lane-test-")), "repo");
  createDemoRepository(dir);
  const project = loadProject({ cwd: dir });
  const store = await openStore({ migrations, root: project.root, storage: project.config.storage, env: {} });
  try {
    const board = new Blackboard(store, { projectId: "demo", humans: ["Human"] });
    for (const p of posts) await board.post(p.from, p.entry);
    const supervisor = projectSupervisor({
      store,
      project,
      pmagentCommand: [process.execPath, CLI],
      env: { PATH: process.env.PATH },
    });
    const roles = project.config.lanes[0]!.roles.map((r) => r.name);
    await new Worker({ supervisor, roles, id: "test-worker", once: true }).run(AbortSignal.timeout(120_000));
    const listed = await board.list();
    const entries = listed.map((e) => [e.entry.id, e.entry.status, e.entry.note ?? null]);
    const runs = await supervisor.runs.list({});
    return { entries, runs, listed, dir };
  } finally {
    await store.close();
  }
}

describe("the doc_update lane under a worker", () => {
  it("stops at Sho when every update is refused: the truncating replacement never reaches Tsugu", async () => {
    const { entries, runs, listed } = await cycle({
      summary: "Shorten the STATE document",
      details: {
        updates: [
          {
            path: "STATE/current_state.md",
            reason: "shorter",
            change_type: "replace",
            suggested_markdown: "# Current state\n\nThe lane",
          },
        ],
      },
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
    expect(error).toMatchObject({
      from: "Sho",
      to: "Human",
      kind: "doc_update_error",
      source_run_id: sho.id,
      payload: { refs: { source_board_id: "req-9-review", run_id: sho.id } },
    });
    const details = error.payload.details as {
      reason: string;
      run_id: string;
      evidence: { artifacts: Array<{ kind: string }> };
    };
    expect(details.reason).toContain("every update was rejected");
    expect(details.run_id).toBe(sho.id);
    expect(details.evidence.artifacts.map((a) => a.kind)).toEqual(["doc_update_review_v1"]);
  }, 180_000);

  it("fails Aya's run with the reason when the request's updates are malformed", async () => {
    const { entries, runs } = await cycle({
      summary: "s",
      details: { updates: [{ path: "STATE/current_state.md", change_type: "rewrite" }] },
    });
    expect(entries.map(([id, status]) => [id, status])).toEqual([
      ["req-9", "error"],
      ["req-9-error", "open"],
    ]);
    const aya = runs.find((r) => r.role === "Aya")!;
    expect(aya.state).toBe("failed");
    expect(aya.reason).toContain("payload.details of entry req-9");
  }, 180_000);

  it("routes the owner's hana_task through Hana to Aya, completes, and leaves the cycle's artifacts in the repository at the contract's paths", async () => {
    const task = (id: string, payload: Record<string, unknown>): Post => ({
      from: "Human",
      entry: { id, to: "Hana", kind: "hana_task", payload, target_docs: ["STATE/current_state.md"] },
    });
    const { entries, listed, dir } = await cycle({}, [
      // The roles contract §3.1.3's request, through Hana (§3.6.3): her card to Aya carries the owner's summary and details.
      task("task-1", {
        target: "Aya",
        summary: "Record the routed cycle in STATE",
        details: { request: "Note that Hana routed this cycle.", hints: ["keep C/G/δ"] },
        refs: { source_issue: 571 },
      }),
      task("task-2", {
        target: "Kai",
        summary: "Which updates of task-1 carry risk?",
        details: { review_run_id: "r-1" },
      }),
      {
        from: "Kai",
        entry: {
          id: "task-2-analysis-result",
          to: "Hana",
          kind: "hana_analysis_result",
          payload: { summary: "low risk", details: { risk_level: "low" } },
          target_docs: [],
        },
      },
    ]);
    const byId = new Map(listed.map((e) => [e.entry.id, e.entry]));
    expect(entries.map(([id, status]) => [id, status]).sort()).toEqual(
      [
        ["task-1", "done"],
        ["task-1-proposal", "done"],
        ["task-1-proposal-review", "done"],
        ["task-1-proposal-review-apply", "done"],
        ["task-1-proposal-review-apply-pm_snapshot", "done"],
        ["task-1-proposal-review-apply-pm_snapshot-done", "done"],
        ["task-1-proposal-review-apply-pm_snapshot-done-cycle_done", "open"],
        ["task-2", "done"],
        ["task-2-analysis", "open"],
        ["task-2-analysis-result", "done"],
        ["task-2-analysis-result-to_human", "open"],
      ].sort(),
    );
    expect(byId.get("task-1-proposal")).toMatchObject({
      from: "Hana",
      to: "Aya",
      kind: "doc_update_proposal_request",
      payload: {
        summary: "Record the routed cycle in STATE",
        details: { request: "Note that Hana routed this cycle.", hints: ["keep C/G/δ"] },
        refs: { source_issue: 571, source_board_id: "task-1" },
      },
      target_docs: ["STATE/current_state.md"],
    });
    expect(byId.get("task-2-analysis")).toMatchObject({
      from: "Hana",
      to: "Kai",
      kind: "hana_to_kai_analysis_request",
      payload: { summary: "Which updates of task-1 carry risk?", details: { review_run_id: "r-1" } },
    });
    expect(byId.get("task-2-analysis-result-to_human")).toMatchObject({
      from: "Hana",
      to: "Human",
      kind: "hana_analysis_done",
      payload: { details: { risk_level: "low" } },
    });

    // Every artifact other roles read is referenced by its repository-relative path at the contract's place.
    const refs = (id: string) => byId.get(id)!.payload.refs as Record<string, unknown>;
    const date = String(byId.get("task-1-proposal-review")!.created_at).slice(0, 10);
    const proposal = `reports/doc_update_proposals/${date}-task-1/doc_update_proposal_v1.json`;
    const review = `reports/doc_update_reviews/${date}-task-1/doc_update_review_v1.json`;
    const snapshot = `reports/pm_snapshots/${date}_demo.md`;
    expect(refs("task-1-proposal-review").doc_update_proposal_v1).toBe(proposal);
    expect(refs("task-1-proposal-review-apply").doc_update_review_v1).toBe(review);
    expect(refs("task-1-proposal-review-apply-pm_snapshot-done").pm_snapshot).toBe(snapshot);
    expect(byId.get("task-1-proposal-review-apply-pm_snapshot-done-cycle_done")!.payload.summary).toContain(
      `PM snapshot ${snapshot}`,
    );

    // …and they are in the repository: on the cycle's branch the forge holds, with the updated document.
    const gitDir = join(dir, ".pmagent/forge.git");
    const branch = "pmagent/layer_b/doc_update/task-1";
    const files = execFileSync("git", ["--git-dir", gitDir, "ls-tree", "-r", "--name-only", branch], {
      encoding: "utf8",
    })
      .trim()
      .split("\n");
    expect(files).toEqual(expect.arrayContaining([proposal, review, snapshot, "STATE/current_state.md"]));
    expect(files.filter((f) => f.startsWith(".lattice/") || f.startsWith(".pmagent/"))).toEqual([]);
    // One commit per role that changed something, each starting from the one before.
    const authors = execFileSync(
      "git",
      ["--git-dir", gitDir, "log", "--first-parent", "--format=%an", `main..${branch}`],
      { encoding: "utf8" },
    )
      .trim()
      .split("\n");
    expect([...new Set(authors)]).toEqual(["Gen", "Tsugu", "Sho", "Aya"]);
    expect(refs("task-1-proposal-review-apply-pm_snapshot")).toMatchObject({ branch, pull_request: "1" });
    const show = (path: string) =>
      execFileSync("git", ["--git-dir", gitDir, "show", `${branch}:${path}`], { encoding: "utf8" });
    expect(JSON.parse(show(proposal))).toMatchObject({
      schema_version: "doc_update_proposal_v1",
      project_id: "demo",
      cycle_id: "task-1",
      request_entry_id: "task-1-proposal",
      summary: "Record the routed cycle in STATE",
    });
    expect(JSON.parse(show(review))).toMatchObject({
      schema_version: "doc_update_review_v1",
      project_id: "demo",
      proposal_ref: proposal,
      cycle_id: "task-1",
      overall_assessment: { risk_level: "low" },
    });
    expect(JSON.parse(show(snapshot).split("\n---\n")[0]!)).toMatchObject({
      schema_version: "pm_snapshot_v1",
      project_id: "demo",
    });
    expect(show("STATE/current_state.md")).toContain("Note that Hana routed this cycle.");
  }, 300_000);
});
