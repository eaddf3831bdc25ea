import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Blackboard } from "../../src/blackboard/index.js";
import { docUpdateLane, parseConfig, type Project } from "../../src/config/index.js";
import { answer, type KaiResponse, type LaneStatus, type WhatChanged } from "../../src/kai/index.js";
import { LocalForge } from "../../src/forge/index.js";
import { ActionStore, RunStore } from "../../src/lattice/index.js";
import { openProject, type OpenProject } from "../../src/app/index.js";
import { availableStoreKinds, type TestStore } from "../helpers/stores.js";
import { TestRepo } from "./repo.js";

const kinds = await availableStoreKinds();
const DAY = 86_400_000;
const AS_OF = "2026-03-08T00:00:00Z";

const VPM_STATE = (line: string) =>
  `# vpm-mini 現在地\n\n## レイヤーA 基盤\n\n- 安定\n\n## レイヤーB ドキュメント更新\n\n- ${line}\n\n### 残課題\n\n- PM Snapshot に未反映\n`;

const config = parseConfig(
  JSON.stringify({
    project_id: "vpm-mini",
    humans: ["Human"],
    lanes: [
      docUpdateLane(),
      { layer: "ops", name: "weekly_report", roles: [{ name: "Reporter", allowed_kinds: ["weekly_report_request"] }] },
    ],
  }),
  "pmagent.config.json",
);

function payload<K extends "lane_status_v1" | "what_changed_v1">(
  res: KaiResponse,
  kind: K,
): K extends "lane_status_v1" ? LaneStatus : WhatChanged {
  if (res.status !== "ok" || res.payload.kind !== kind) throw new Error(JSON.stringify(res.notes));
  return res.payload.data as K extends "lane_status_v1" ? LaneStatus : WhatChanged;
}

/**
 * One repository, two projects (vpm-mini, configured, and hakone-e2, with its own STATE document),
 * a GitHub remote, a STATE document with Japanese headings, the project's own cycle naming (its
 * PR says cycle-1; three trial requests came before it on the board) and runs of two lanes.
 */
describe.each(kinds)("Kai on a repository the project writes its own way ($name)", (kind) => {
  let ts: TestStore;
  let repo: TestRepo;
  let opened: OpenProject;
  let applySha: string;
  let workspaces: string | undefined;
  const ask = async (
    type: "lane_status" | "what_changed",
    more: { project_id?: string; lane?: { layer: string; name: string } } = {},
  ) =>
    answer(
      {
        version: "kai_request_v1",
        request_id: `t-${type}`,
        from: { actor_type: "human" },
        project_id: more.project_id ?? "vpm-mini",
        type,
        lane: more.lane ?? { layer: "layer_b", name: "doc_update" },
        params: { as_of: AS_OF },
      },
      { config, sources: await opened.kaiSources(), clock: () => Date.parse("2026-03-09T00:00:00Z") },
    );

  beforeAll(async () => {
    ts = await kind.open();
    repo = new TestRepo();
    repo.git("remote", "add", "origin", "git@github.com:acme/vpm-mini.git");
    repo.commit("2026-02-01T00:00:00Z", "Start both projects", {
      "STATE/vpm-mini/current_state.md": VPM_STATE("cycle-1 準備中"),
      "STATE/hakone-e2/current_state.md": "# hakone-e2 現在地\n\n## レイヤーB ドキュメント更新\n\n- まだサイクルなし\n",
    });
    applySha = repo.commit(
      "2026-03-05T00:00:00Z",
      "Apply doc_update proposal cycle-1 to STATE (#849)\n\nTsugu applies the reviewed proposal.",
      { "STATE/vpm-mini/current_state.md": VPM_STATE("cycle-1 を適用済み") },
    );
    const project: Project = { root: repo.dir, configPath: `${repo.dir}/pmagent.config.json`, config };
    opened = await openProject({ project, store: ts.store });

    let now = Date.parse("2026-02-10T00:00:00Z");
    const clock = () => now;
    const vpm = new Blackboard(ts.store, { projectId: "vpm-mini", humans: ["Human"], clock });
    // Three trial requests, abandoned before the project's cycle-1.
    for (const id of ["trial-1", "trial-2", "trial-3"]) {
      await vpm.post("Human", {
        id,
        to: "Aya",
        kind: "doc_update_proposal_request",
        payload: { summary: `try ${id}` },
      });
      await vpm.transition("Human", id, "canceled");
      now += DAY;
    }
    now = Date.parse("2026-03-03T00:00:00Z");
    const root = "vpm-mini-docupdate-issue571-1";
    await vpm.post("Human", {
      id: root,
      to: "Aya",
      kind: "doc_update_proposal_request",
      payload: { summary: "Layer B を整える" },
      payload_ref: { kind: "path", value: "progress_summary.md" },
    });
    await vpm.transition("Aya", root, "done");
    now += DAY;
    await vpm.post("Aya", {
      id: `${root}-review`,
      to: "Sho",
      kind: "doc_update_review_request",
      source_run_id: 19793359086,
      payload: {
        summary: "review",
        details: { proposal_path: "reports/doc_update_proposals/2026-03-04-vpm-mini.json" },
        refs: {},
      },
    });
    await vpm.transition("Sho", `${root}-review`, "done");
    now += DAY;
    // Tsugu's apply names the pull request whose title names the cycle.
    await vpm.post("Sho", {
      id: `${root}-review-apply`,
      to: "Tsugu",
      kind: "doc_update_apply_request",
      payload: { summary: "apply", refs: { pr_number: 849 } },
    });
    await vpm.transition("Tsugu", `${root}-review-apply`, "done");
    // The custom lane's cycle completes after the STATE document last changed.
    now = Date.parse("2026-03-06T00:00:00Z");
    await vpm.post("Human", {
      id: "wr-1",
      to: "Reporter",
      kind: "weekly_report_request",
      payload: { summary: "week 10 report" },
    });
    await vpm.transition("Reporter", "wr-1", "done");
    const hakone = new Blackboard(ts.store, { projectId: "hakone-e2", humans: ["Human"], clock });
    await hakone.post("Human", {
      id: "hakone-e2-docupdate-issue12-1",
      to: "Aya",
      kind: "doc_update_proposal_request",
      payload: { summary: "hakone の STATE を更新" },
    });

    // Eleven runs of vpm-mini in the window, across both lanes; one of hakone-e2.
    const runAt = Date.parse("2026-03-06T12:00:00Z");
    const place = {
      sprite_id: "s",
      work_item_id: "w",
      command: ["true"],
      workspace: "/tmp/w",
      checkpoint_dir: "/tmp/c",
      run_dir: "/tmp/r",
      worker: null,
      host: "h",
      supervisor_pid: 1,
      gate: null,
    };
    const roles = [
      "Aya",
      "Aya",
      "Sho",
      "Tsugu",
      "Reporter",
      "Reporter",
      "Reporter",
      "Reporter",
      "Reporter",
      "Reporter",
      "Reporter",
    ];
    for (const [i, role] of roles.entries()) {
      const runs = new RunStore(ts.store, "vpm-mini", () => runAt + i * 60_000);
      await runs.create({ id: `run-${i}`, project_id: "vpm-mini", role, entry_id: null, ...place });
      await runs.update(`run-${i}`, { state: i === 4 ? "failed" : "succeeded", finished: true });
    }
    const other = new RunStore(ts.store, "hakone-e2", () => runAt);
    await other.create({ id: "run-hakone", project_id: "hakone-e2", role: "Aya", entry_id: null, ...place });
    await other.update("run-hakone", { state: "succeeded", finished: true });

    // Each project opened a local pull request #1 (numbered per project); hakone-e2's run opened its own.
    workspaces = mkdtempSync(join(tmpdir(), "pmagent-kai-ws-"));
    const openedAt = () => Date.parse("2026-03-06T13:00:00Z");
    for (const [projectId, title] of [
      ["vpm-mini", "vpm-mini の PR"],
      ["hakone-e2", "hakone-e2 の PR"],
    ] as const) {
      const path = join(workspaces, projectId);
      execFileSync("git", ["clone", "-q", repo.dir, path]);
      execFileSync("git", ["checkout", "-q", "-b", `sprite/${projectId}`], { cwd: path });
      execFileSync(
        "git",
        ["-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-q", "--allow-empty", "-m", title],
        {
          cwd: path,
        },
      );
      const forge = new LocalForge({
        store: ts.store,
        projectId,
        root: repo.dir,
        bareRepo: config.forge.bare_repo,
        clock: openedAt,
      });
      await forge.openPullRequest({ title, body: "", base: "main", head: `sprite/${projectId}`, workspace: path });
    }
    const actions = new ActionStore(ts.store, undefined, openedAt);
    const { idempotency_key: key } = await actions.record({
      projectId: "hakone-e2",
      runId: "run-hakone",
      eventHash: "open-pr",
      role: "Aya",
      workItemId: "w",
      workspace: join(workspaces, "hakone-e2"),
      action: "OPEN_PR",
      parameters: { title: "hakone-e2 の PR" },
      blocking: false,
    });
    await actions.claim(key, "test", 60_000);
    await actions.finish(key, "test", { state: "succeeded", result: { forge: "local", number: 1 } });
  }, 60_000);
  afterAll(async () => {
    await opened?.close();
    await ts.cleanup();
    repo.cleanup();
    if (workspaces) rmSync(workspaces, { recursive: true, force: true });
  });

  it("lane_status reads the Japanese STATE section and names the cycle as the project does (cycle-1, not the board's fourth)", async () => {
    const data = payload(await ask("lane_status"), "lane_status_v1");
    expect(data.cycle).toMatchObject({
      latest_cycle_id: "cycle-1",
      root_entry_id: "vpm-mini-docupdate-issue571-1",
      found_in: "blackboard",
    });
    expect(data.state_view).toMatchObject({
      state_file: "STATE/vpm-mini/current_state.md",
      section_anchor: "#レイヤーb-ドキュメント更新",
      digest: "cycle-1 を適用済み",
      known_gaps: ["PM Snapshot に未反映"],
    });
    // Aya's step: the run and the proposal named on the entry she wrote.
    expect(data.steps.aya!.latest_entry).toMatchObject({
      actions_run_id: "19793359086",
      artifact_path: "reports/doc_update_proposals/2026-03-04-vpm-mini.json",
    });
    const gap = data.next_suggested_actions.find((a) => a.id === "gap-1")!;
    expect(gap.evidence).toEqual([
      {
        type: "file",
        id: "STATE/vpm-mini/current_state.md",
        path: "STATE/vpm-mini/current_state.md",
        at: "2026-03-05T00:00:00.000Z",
        url: `https://github.com/acme/vpm-mini/blob/${applySha}/STATE/vpm-mini/current_state.md`,
      },
    ]);
    expect(gap.reason).toBe(
      "listed under the Gap list of STATE/vpm-mini/current_state.md#レイヤーb-ドキュメント更新 as of its last change 2026-03-05",
    );
  });

  it("what_changed names the same cycle, links its PR and commit on GitHub, and counts every run of the project in the window", async () => {
    const data = payload(await ask("what_changed"), "what_changed_v1");
    const named = data.highlights.flatMap((h) => [...h.title.matchAll(/cycle-\d+\S*/g)].map((m) => m[0]));
    expect(named.length).toBeGreaterThan(0);
    expect(new Set(named)).toEqual(new Set(["cycle-1"]));
    expect(data.by_category.prs).toEqual([
      expect.objectContaining({ number: 849, url: "https://github.com/acme/vpm-mini/pull/849" }),
    ]);
    const linked = data.highlights.flatMap((h) => h.evidence.filter((e) => e.type === "pr" || e.type === "file"));
    expect(linked.length).toBeGreaterThan(0);
    // A file is linked at the STATE document's revision, a path into it keeps its anchor.
    for (const e of linked)
      expect(e.url).toBe(
        e.type === "pr"
          ? `https://github.com/acme/vpm-mini/pull/${e.id}`
          : `https://github.com/acme/vpm-mini/blob/${applySha}/${e.path}`,
      );
    expect(linked.some((e) => e.url!.endsWith("/STATE/vpm-mini/current_state.md#レイヤーb-ドキュメント更新"))).toBe(
      true,
    );
    const pmagent = data.by_category.workflows.filter((w) => w.source === "pmagent");
    expect(pmagent.reduce((n, w) => n + w.runs, 0)).toBe(11);
    expect(pmagent.find((w) => w.name === "ops/weekly_report:Reporter")).toMatchObject({ runs: 7, failed_runs: 1 });
    expect(pmagent.find((w) => w.name === "layer_b/doc_update:Aya")).toMatchObject({ runs: 2 });
  });

  it("a custom lane gets advice from its own roles and kinds, not the doc_update lane's STATE update", async () => {
    const data = payload(await ask("lane_status", { lane: { layer: "ops", name: "weekly_report" } }), "lane_status_v1");
    expect(data.cycle).toMatchObject({ latest_cycle_id: "cycle-1", status: "completed", root_entry_id: "wr-1" });
    expect(data.next_suggested_actions.map((a) => a.id)).not.toContain("update-state-doc");
    expect(data.next_suggested_actions.find((a) => a.id === "start-cycle")!.title).toBe(
      "Start the next cycle: post a weekly_report_request entry to Reporter",
    );
    // The doc_update lane, whose Tsugu applies to STATE, is told when its document lags (here it does not: applied 03-05).
    const changes = payload(
      await ask("what_changed", { lane: { layer: "ops", name: "weekly_report" } }),
      "what_changed_v1",
    );
    expect(changes.risks.map((r) => r.id)).not.toContain("state-doc-not-updated");
  });

  it("answers for a second project of the repository from its own STATE document, board and runs", async () => {
    const res = await ask("lane_status", { project_id: "hakone-e2" });
    const data = payload(res, "lane_status_v1");
    expect(data).toMatchObject({
      project_id: "hakone-e2",
      cycle: { latest_cycle_id: "cycle-1", root_entry_id: "hakone-e2-docupdate-issue12-1", status: "in_progress" },
    });
    expect(data.state_view).toMatchObject({
      state_file: "STATE/hakone-e2/current_state.md",
      digest: "まだサイクルなし",
    });
    expect(res.notes).toContain("Answered for hakone-e2, a project living in vpm-mini's repository");
    const changes = payload(await ask("what_changed", { project_id: "hakone-e2" }), "what_changed_v1");
    expect(changes.project_id).toBe("hakone-e2");
    expect(changes.by_category.workflows.filter((w) => w.source === "pmagent").reduce((n, w) => n + w.runs, 0)).toBe(1);
  });

  it("another project's runs show its own local pull requests (numbered per project), not the configured project's", async () => {
    const changes = payload(await ask("what_changed", { project_id: "hakone-e2" }), "what_changed_v1");
    // (PR #849 is the repository's, from its git history, shared by both projects.)
    expect(changes.by_category.prs.filter((p) => p.number === 1)).toEqual([
      expect.objectContaining({ title: "hakone-e2 の PR", url: "pmagent-forge://hakone-e2/pulls/1", status: "open" }),
    ]);
  });

  it("a local forge configured outside the repository fails the sources, as opening the forge does", async () => {
    const outside = { ...config, forge: { ...config.forge, bare_repo: "../elsewhere.git" } };
    const misplaced = await openProject({
      project: { root: repo.dir, configPath: `${repo.dir}/pmagent.config.json`, config: outside },
      store: ts.store,
    });
    const refusal = `forge.bare_repo "../elsewhere.git" is outside ${repo.dir}`;
    await expect(misplaced.localForge()).rejects.toThrow(refusal);
    await expect(misplaced.kaiSources()).rejects.toMatchObject({ code: "path_outside_root", message: refusal });
  });

  it.each([
    [
      "a project not living in the repository",
      { project_id: "nope" },
      '$.project_id: unknown project "nope"; projects in this repository: "vpm-mini", "hakone-e2"',
    ],
    [
      "an unknown lane",
      { lane: { layer: "ops", name: "daily" } },
      "$.lane: unknown lane ops/daily; configured lanes: layer_b/doc_update, ops/weekly_report",
    ],
  ])("refuses %s with a message naming what exists", async (_what, more, note) => {
    const res = await ask("lane_status", more);
    expect(res).toMatchObject({ status: "error", payload: null, notes: [note] });
  });
});
