import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { docUpdateLane, parseConfig } from "../../src/config/index.js";
import {
  answer,
  type BoardEntryEvidence,
  type EvidenceWindow,
  type KaiResponse,
  type WhatChanged,
} from "../../src/kai/index.js";
import { KaiResponseSchema } from "../../src/kai/reports/schema.js";
import { twoCycles } from "./fixtures.js";
import { TestRepo } from "./repo.js";

const config = parseConfig(JSON.stringify({ project_id: "vpm-mini", lanes: [docUpdateLane()] }), "test");
const NOW = Date.parse("2026-01-20T00:00:00Z");
const STATE_V2 =
  "# Current state\n\n## Layer B / doc_update v1\n\nCycle-1 applied through PR #849.\n\n### Gaps\n\n- PM snapshot lags Layer B\n";

const request = (type: string, params: Record<string, unknown>) => ({
  version: "kai_request_v1",
  request_id: `req-${type}`,
  from: { actor_type: "human" },
  project_id: "vpm-mini",
  type,
  lane: { layer: "layer_b", name: "doc_update" },
  params,
});

/** The blackboard as it stood at the window's end (what the blackboard collector hands over). */
const boardAt = (board: BoardEntryEvidence[]) => async (w: EvidenceWindow) =>
  board.filter((e) => Date.parse(e.created_at) <= w.until.getTime());

describe("what_changed_v1 against a repository built by the test", () => {
  const repo = new TestRepo();
  const shas: Record<string, string> = {};
  let options: Parameters<typeof answer>[1];

  beforeAll(() => {
    repo.commit("2026-01-01T00:00:00Z", "initial", {
      "STATE/current_state.md": "# Current state\n",
      "docs/old.md": "old",
      "src/main.ts": "x",
    });
    shas.s849 = repo.commit("2026-01-04T10:00:00Z", "Update STATE after apply (#849)", {
      "STATE/current_state.md": STATE_V2,
    });
    shas.m850 = repo.mergeBranch(
      "2026-01-06T10:00:00Z",
      "wf",
      "Merge pull request #850 from vpm/wf\n\nAdd doc_update workflow",
      [
        {
          at: "2026-01-06T09:00:00Z",
          message: "add workflow",
          files: { ".github/workflows/doc_update.yml": "on: issue_comment\n" },
        },
      ],
    );
    shas.report = repo.commit("2026-01-07T00:00:00Z", "add proposal report", {
      "reports/doc_update_proposals/p2.json": "{}",
    });
    shas.rename = repo.rename("2026-01-08T00:00:00Z", "docs/old.md", "docs/guide/new.md", "move guide");
    shas.late = repo.commit("2026-01-12T00:00:00Z", "late STATE edit (#851)", {
      "STATE/current_state.md": `${STATE_V2}\n## Layer B / doc_update v1\n`,
    });
    const { board, runs } = twoCycles();
    options = { config, sources: { repo: repo.dir, board: boardAt(board), runs: async () => runs }, clock: () => NOW };
  });
  afterAll(() => repo.cleanup());

  async function ask(params: Record<string, unknown>): Promise<{ res: KaiResponse; data: WhatChanged }> {
    const res = KaiResponseSchema.parse(await answer(request("what_changed", params), options));
    if (res.status !== "ok" || res.payload.kind !== "what_changed_v1") throw new Error(JSON.stringify(res.notes));
    return { res, data: res.payload.data };
  }

  it("ranks highlights by impact with their evidence, and fills by_category, risks and open questions", async () => {
    const { res, data } = await ask({ as_of: "2026-01-10T00:00:00Z" });
    expect(data.time_window).toEqual({ from: "2026-01-03", to: "2026-01-10" });
    expect(data.highlights.map((h) => [h.rank, h.category, h.title])).toEqual([
      [1, "layer_b", "layer_b/doc_update cycle-1 completed"],
      [2, "layer_b", "layer_b/doc_update cycle-2 is blocked at Sho"],
      // The STATE section the window changed and the workflow it added, each one grouped highlight; no file lists.
      [3, "state_doc", "STATE: the Layer B / doc_update v1 section changed"],
      [4, "workflow", "New workflow: .github/workflows/doc_update.yml"],
      [5, "docs", "Docs: 1 file changed"],
    ]);
    expect(data.highlights[2]!.summary).toBe(
      "1 change (PR #849) edited STATE/current_state.md: Layer B / doc_update v1 (added), Gaps (added). The lane section now reads: Cycle-1 applied through PR #849.",
    );
    expect(data.highlights[3]!.summary).toBe('PR #850 "Add doc_update workflow" added it.');
    expect(data.highlights[1]!.summary).toBe(
      "Sho's run run-sho-2 waits for approve, comment. The lane goes on once the input is given.",
    );
    expect(data.highlights[3]!.evidence).toEqual([
      { type: "file", id: ".github/workflows/doc_update.yml", path: ".github/workflows/doc_update.yml" },
      { type: "pr", id: "850", title: "Add doc_update workflow", at: "2026-01-06T10:00:00.000Z" },
    ]);
    expect(data.highlights[0]!.evidence.map((e) => e.id)).toEqual([
      "req-1",
      "req-1-review",
      "req-1-review-apply",
      "req-1-review-apply-pm_snapshot",
      "req-1-review-apply-pm_snapshot-done",
    ]);
    expect(data.by_category.prs).toEqual([
      {
        number: 850,
        title: "Add doc_update workflow",
        status: "merged",
        impact: "high",
        url: null,
        paths: [".github/workflows/doc_update.yml"],
      },
      {
        number: 849,
        title: "Update STATE after apply",
        status: "merged",
        impact: "high",
        url: null,
        paths: ["STATE/current_state.md"],
      },
    ]);
    expect(data.by_category.state_docs).toEqual([
      {
        path: "docs/guide/new.md",
        change: "renamed",
        old_path: "docs/old.md",
        commits: 1,
        last_commit: shas.rename,
        last_changed_at: "2026-01-08T00:00:00.000Z",
      },
      {
        path: "STATE/current_state.md",
        change: "modified",
        old_path: null,
        commits: 1,
        last_commit: shas.s849,
        last_changed_at: "2026-01-04T10:00:00.000Z",
      },
    ]);
    expect(data.by_category.workflows).toEqual([
      {
        name: "layer_b/doc_update:Aya",
        source: "pmagent",
        runs: 1,
        failed_runs: 0,
        latest_status: "succeeded",
        latest_run_id: "run-aya-2",
        latest_at: "2026-01-08T10:00:00Z",
      },
      {
        name: "layer_b/doc_update:Sho",
        source: "pmagent",
        runs: 1,
        failed_runs: 0,
        latest_status: "waiting",
        latest_run_id: "run-sho-2",
        latest_at: "2026-01-08T11:05:00Z",
      },
    ]);
    expect(data.risks.map((r) => [r.id, r.severity, r.summary])).toEqual([
      ["cycle-blocked-cycle-2", "high", "cycle-2 of layer_b/doc_update is blocked"],
      [
        "state-doc-not-updated",
        "medium",
        "STATE/current_state.md does not reflect cycle-1 yet: last changed 2026-01-04T10:00:00.000Z, cycle completed 2026-01-05T12:00:00Z",
      ],
      ["runs-waiting", "medium", "1 run waiting for input: Sho run-sho-2"],
      ["environment-proposals-pending", "medium", "1 environment proposal pending a decision: Aya: install pandoc"],
      // This window's gaps, not every gap the document lists.
      ["gaps-added", "medium", "1 gap added to STATE/current_state.md this window: PM snapshot lags Layer B"],
    ]);
    expect(data.open_questions).toEqual([
      "Who provides approve, comment for Sho's run run-sho-2 (waiting since 2026-01-08T11:10:00Z)?",
      "Should Aya's environment proposal env-1 (install pandoc) be accepted?",
      'Who closes the new gap "PM snapshot lags Layer B", and by when?',
    ]);
    expect(res.summary_md).toBe(
      [
        "## What changed in vpm-mini (2026-01-03 – 2026-01-10)",
        "- 2 PRs merged, 2 STATE/docs files changed, 2 pmagent runs (GitHub Actions not consulted)",
        "- Top: layer_b/doc_update cycle-1 completed; layer_b/doc_update cycle-2 is blocked at Sho",
        // Every risk counted is listed, most severe first.
        "- Risks (5): cycle-2 of layer_b/doc_update is blocked; STATE/current_state.md does not reflect cycle-1 yet: last changed 202…; 1 run waiting for input: Sho run-sho-2; 1 environment proposal pending a decision: Aya: install pandoc; 1 gap added to STATE/current_state.md this window: PM snapshot lags L…",
      ].join("\n"),
    );
    expect(res.notes).toContain("Answered as of 2026-01-10T00:00:00Z: later evidence is ignored");
  });

  it("caps highlights at max_highlights and keeps the ranking", async () => {
    const { data } = await ask({ as_of: "2026-01-10T00:00:00Z", max_highlights: 2 });
    expect(data.highlights.map((h) => h.rank)).toEqual([1, 2]);
    expect(data.highlights[1]!.title).toBe("layer_b/doc_update cycle-2 is blocked at Sho");
  });

  it("the window follows time_window_days and as_of: older and later evidence stays out", async () => {
    const { data } = await ask({ as_of: "2026-01-07T11:00:00Z", time_window_days: 2 });
    expect(data.time_window).toEqual({ from: "2026-01-05", to: "2026-01-07" });
    expect(data.by_category.prs.map((p) => p.number)).toEqual([850]);
    expect(data.highlights.map((h) => h.title)).toEqual([
      "layer_b/doc_update cycle-1 completed",
      "New workflow: .github/workflows/doc_update.yml",
      "Reports: 1 file changed",
    ]);
    // Without as_of the window ends now and sees the later STATE edit.
    const now = await ask({ time_window_days: 10 });
    expect(now.data.by_category.prs.map((p) => p.number)).toEqual([851]);
    expect(now.data.risks.map((r) => r.id)).not.toContain("state-doc-not-updated");
  });

  it("says when a shallow clone's cut lies after the window's start, wherever the window is, and only then", async () => {
    const dirs: string[] = [];
    const cloneOf = (source: string, depth: number) => {
      const dir = mkdtempSync(join(tmpdir(), "pmagent-kai-depth-"));
      dirs.push(dir);
      execFileSync("git", ["clone", "-q", "--depth", String(depth), `file://${source}`, dir]);
      return dir;
    };
    const ofRepo = async (dir: string, params: Record<string, unknown>) => {
      const res = KaiResponseSchema.parse(
        await answer(request("what_changed", params), { ...options, sources: { ...options.sources, repo: dir } }),
      );
      return {
        commits: res.notes.find((n) => n.startsWith("Evidence: ") && n.includes(" committed in ")),
        shallow: res.notes.filter((n) => n.includes("is a shallow clone")),
      };
    };
    const note = (dir: string, at: string) =>
      `${dir} is a shallow clone whose history was cut at a commit of ${at}, after the window's start: commits behind the cut are not here and some may belong in this window; \`git fetch --unshallow\` fetches them`;
    const line = new TestRepo();
    try {
      // The last three commits: the late STATE edit (01-12), the rename (01-08) and the report (01-07, the cut).
      const clone = cloneOf(repo.dir, 3);
      expect(await ofRepo(clone, { as_of: "2026-01-10T00:00:00Z" })).toEqual({
        commits: `Evidence: 2 commits of ${clone} committed in (2026-01-03T00:00:00.000Z, 2026-01-10T00:00:00.000Z]`,
        shallow: [note(clone, "2026-01-07T00:00:00.000Z")],
      });
      // A window wholly before the cut: nothing of it is here, and the note says why.
      expect(await ofRepo(clone, { as_of: "2026-01-05T00:00:00Z" })).toEqual({
        commits: `Evidence: 0 commits of ${clone} committed in (2025-12-29T00:00:00.000Z, 2026-01-05T00:00:00.000Z]`,
        shallow: [note(clone, "2026-01-07T00:00:00.000Z")],
      });
      // A window starting after the cut: the clone holds it whole.
      expect(await ofRepo(clone, { as_of: "2026-01-12T12:00:00Z", time_window_days: 2 })).toEqual({
        commits: `Evidence: 1 commit of ${clone} committed in (2026-01-10T12:00:00.000Z, 2026-01-12T12:00:00.000Z]`,
        shallow: [],
      });
      // A clone as deep as its history: git lists its first commit as the cut, but nothing is behind it.
      line.commit("2026-01-02T00:00:00Z", "one", { "a.md": "1" });
      line.commit("2026-01-03T00:00:00Z", "two", { "a.md": "2" });
      line.commit("2026-01-04T00:00:00Z", "three", { "a.md": "3" });
      const whole = cloneOf(line.dir, 3);
      expect(execFileSync("git", ["-C", whole, "rev-parse", "--is-shallow-repository"], { encoding: "utf8" })).toBe(
        "true\n",
      );
      expect(await ofRepo(whole, { as_of: "2026-01-05T00:00:00Z" })).toEqual({
        commits: `Evidence: 3 commits of ${whole} committed in (2025-12-29T00:00:00.000Z, 2026-01-05T00:00:00.000Z]`,
        shallow: [],
      });
      // HEAD's history whole, another branch fetched shallow: that branch's cut is not HEAD's.
      line.git("checkout", "-q", "-b", "other");
      line.commit("2026-01-10T00:00:00Z", "elsewhere", { "b.md": "b" });
      line.git("checkout", "-q", "main");
      const full = mkdtempSync(join(tmpdir(), "pmagent-kai-depth-"));
      dirs.push(full);
      execFileSync("git", ["clone", "-q", "--single-branch", "-b", "main", `file://${line.dir}`, full]);
      execFileSync("git", ["-C", full, "fetch", "-q", "--depth", "1", "origin", "other:other"]);
      expect(execFileSync("git", ["-C", full, "rev-parse", "--is-shallow-repository"], { encoding: "utf8" })).toBe(
        "true\n",
      );
      expect((await ofRepo(full, { as_of: "2026-01-05T00:00:00Z" })).shallow).toEqual([]);
    } finally {
      for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
      line.cleanup();
    }
    // The full history: its first commit, in this window, is where history starts, not a cut.
    expect((await ofRepo(repo.dir, { as_of: "2026-01-05T00:00:00Z" })).shallow).toEqual([]);
  });

  it("is deterministic: the same evidence gives the same payload and digest", async () => {
    const a = await ask({ as_of: "2026-01-10T00:00:00Z" });
    const b = await ask({ as_of: "2026-01-10T00:00:00Z" });
    expect(b.res.payload).toEqual(a.res.payload);
    expect(b.res.summary_md).toBe(a.res.summary_md);
  });

  it("lane_status as of a past time reads the STATE document as it was then", async () => {
    const res = await answer(request("lane_status", { as_of: "2026-01-10T00:00:00Z" }), options);
    if (res.status !== "ok" || res.payload.kind !== "lane_status_v1") throw new Error(JSON.stringify(res.notes));
    expect(res.payload.data.as_of).toBe("2026-01-10T00:00:00.000Z");
    expect(res.payload.data.state_view).toEqual({
      state_file: "STATE/current_state.md",
      section_anchor: "#layer-b--doc_update-v1",
      digest: "Cycle-1 applied through PR #849.",
      known_gaps: ["PM snapshot lags Layer B"],
      updated_at: "2026-01-04T10:00:00.000Z",
    });
    expect(res.summary_md.split("\n")).toEqual([
      "## layer_b / doc_update status (as of 2026-01-10T00:00:00.000Z)",
      "- cycle-2 blocked (started 2026-01-08T09:00:00Z); steps: Aya completed, Sho waiting",
      "- State: Cycle-1 applied through PR #849. (1 known gap)",
      "- Next (high): Provide approve, comment to resume Sho's run run-sho-2",
    ]);
    const before = await answer(request("lane_status", { as_of: "2026-01-03T00:00:00Z" }), options);
    if (before.status !== "ok" || before.payload.kind !== "lane_status_v1") throw new Error("expected ok");
    expect(before.payload.data.cycle.latest_cycle_id).toBe("cycle-1");
    expect(before.payload.data.state_view.section_anchor).toBeNull();
    expect(before.payload.data.state_view.digest).toBe("no section about layer_b/doc_update in STATE/current_state.md");
  });
});
