import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Blackboard } from "../../src/blackboard/index.js";
import { loadProject } from "../../src/config/index.js";
import { RunStore, type RunRecord } from "../../src/lattice/index.js";
import { openStore } from "../../src/store/index.js";
import { migrations } from "../../src/app/index.js";
import { runCli } from "../helpers/proc.js";
import { useFakeOpenAI } from "../helpers/openai-fixture.js";

const KEY = "test-model-key-supervised";
const fake = useFakeOpenAI({ clearRequests: false });
let root: string;

const review = (decision: "approve" | "block", level: string) => ({
  level,
  decision,
  summary: decision === "approve" ? "keeps every section" : "the proposal drops two sections",
  claims: [],
  planning_feedback:
    decision === "approve" ? [] : [{ issue: "## Risks is gone", suggestion: "restore the Risks section" }],
});

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "role-agent-run-"));
  const config = {
    project_id: "vpm-mini",
    lanes: [
      {
        layer: "layer_b",
        name: "doc_update",
        roles: [
          {
            name: "Sho",
            allowed_kinds: ["doc_update_review_request"],
            next: { to: "Tsugu", kind: "doc_update_apply_request", id_suffix: "-apply" },
          },
          { name: "Tsugu", allowed_kinds: ["doc_update_apply_request"] },
        ],
      },
    ],
    model: { base_url: fake.baseURL, model: "gpt-test", max_retries: 0 },
  };
  writeFileSync(join(root, "pmagent.config.json"), JSON.stringify(config));
});
afterAll(async () => {
  rmSync(root, { recursive: true, force: true });
});

/** The project's own store, opened beside the CLI processes. */
async function withProject<T>(fn: (board: Blackboard, runs: RunStore) => Promise<T>): Promise<T> {
  const p = loadProject({ configPath: join(root, "pmagent.config.json") });
  const store = await openStore({ migrations, root: p.root, storage: p.config.storage });
  try {
    return await fn(
      new Blackboard(store, { projectId: "vpm-mini", humans: ["Human"] }),
      new RunStore(store, "vpm-mini"),
    );
  } finally {
    await store.close();
  }
}

/** `pmagent run --role Sho --entry ID -- env KEY=… pmagent agent --role reviewer …` (the key reaches the sprite through its command line only). */
async function supervised(entryId: string, level: string) {
  const r = await runCli(
    [
      "run",
      "--role",
      "Sho",
      "--entry",
      entryId,
      "--format",
      "json",
      "--",
      "env",
      `OPENAI_API_KEY=${KEY}`,
      "pmagent",
      "agent",
      "--role",
      "reviewer",
      "--review-level",
      level,
      "--stream",
    ],
    {
      cwd: root,
      env: { PATH: process.env.PATH ?? "" },
    },
  );
  return { ...r, run: r.stdout ? (JSON.parse(r.stdout) as RunRecord) : undefined };
}

describe("pmagent run … -- pmagent agent (the agent under the supervisor)", () => {
  it("soft_gate: the run succeeds, the entry is done, the next entry carries the revision request and the artifact", async () => {
    await withProject((board) =>
      board.post("Aya", {
        id: "doc-1-review",
        from: "Aya",
        to: "Sho",
        kind: "doc_update_review_request",
        payload: { summary: "update STATE", refs: ["STATE/current_state.md"] },
      }),
    );
    fake.reply({ json: review("block", "soft_gate"), usage: { input_tokens: 700, output_tokens: 30 } });
    const r = await supervised("doc-1-review", "soft_gate");
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.run).toMatchObject({ state: "succeeded", role: "Sho", entry_id: "doc-1-review" });
    await withProject(async (board, runs) => {
      expect((await board.get("doc-1-review")).entry.status).toBe("done");
      // Looked up by addressee: the follow-up's id suffix rule belongs to the lane code, not to this test.
      const posted = await board.list({ to: "Tsugu" });
      expect(posted).toHaveLength(1);
      const next = posted[0]!.entry;
      expect(next).toMatchObject({
        from: "Sho",
        kind: "doc_update_apply_request",
        status: "open",
        source_run_id: r.run!.id,
      });
      expect(next.payload.details).toEqual({
        revision_requested: true,
        requested_changes: ["## Risks is gone: restore the Risks section"],
      });
      expect(next.payload.refs).toMatchObject({
        source_board_id: "doc-1-review",
        file: ".pmagent-artifacts/reviewer-doc-1-review.json",
      });
      expect((next.payload.refs as { artifacts: unknown[] }).artifacts).toContainEqual(
        expect.objectContaining({
          type: "artifact",
          kind: "file",
          ref: ".pmagent-artifacts/reviewer-doc-1-review.json",
        }),
      );
      const events = await runs.events(r.run!.id);
      const usage = events.find((e) => (e.event.payload as { kind?: string }).kind === "usage");
      expect(usage?.event.payload).toMatchObject({
        metadata: { input_tokens: 700, output_tokens: 30, total_tokens: 730 },
      });
      expect(events.map((e) => e.event_type)).toContain("COMPLETED");
    });
    const artifact = JSON.parse(
      readFileSync(join(r.run!.workspace, ".pmagent-artifacts/reviewer-doc-1-review.json"), "utf8"),
    ) as { ledger: unknown };
    expect(artifact.ledger).toEqual({
      entry_id: "doc-1-review",
      lane: "layer_b/doc_update",
      role: "Sho",
      cycle: 1,
      refs: ["STATE/current_state.md"],
    });
  });

  it("hard_gate + block: the run fails, the entry is in error, and no next entry is posted", async () => {
    await withProject((board) =>
      board.post("Aya", {
        id: "doc-2-review",
        from: "Aya",
        to: "Sho",
        kind: "doc_update_review_request",
        payload: { summary: "truncate STATE" },
      }),
    );
    fake.reply({ json: review("block", "hard_gate") });
    const r = await supervised("doc-2-review", "hard_gate");
    expect(r.code).toBe(1);
    expect(r.run).toMatchObject({
      state: "failed",
      reason: "COMPLETED with status failure: review block at hard_gate: the proposal drops two sections",
    });
    await withProject(async (board) => {
      expect((await board.get("doc-2-review")).entry.status).toBe("error");
      expect((await board.list({ to: "Tsugu" })).map((e) => e.entry.source_run_id)).not.toContain(r.run!.id);
    });
  });

  it("without a key in the sprite's environment (the supervisor passes none) the agent asks for it with FETCH_CREDENTIAL; a role not allowed that credential fails saying how to allow it", async () => {
    await withProject((board) =>
      board.post("Aya", { id: "doc-3-review", from: "Aya", to: "Sho", kind: "doc_update_review_request" }),
    );
    const r = await runCli(
      [
        "run",
        "--role",
        "Sho",
        "--entry",
        "doc-3-review",
        "--format",
        "json",
        "--",
        "pmagent",
        "agent",
        "--role",
        "reviewer",
      ],
      {
        cwd: root,
        env: { PATH: process.env.PATH ?? "", OPENAI_API_KEY: KEY },
      },
    );
    expect(r.code).toBe(1);
    const run = JSON.parse(r.stdout) as RunRecord;
    expect(run.state).toBe("failed");
    expect(run.reason).toContain(
      'ERROR: the supervisor could not hand over the model key (FETCH_CREDENTIAL): role "Sho" may not fetch credential "OPENAI_API_KEY" (it may fetch none); add it to that role\'s "credentials" in pmagent.config.json to allow it',
    );
  });
});
