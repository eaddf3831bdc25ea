import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { docUpdateLane, parseConfig } from "../../src/config/index.js";
import { answer, buildLaneStatus, collectGit, type KaiResponse, type LaneStatus } from "../../src/kai/index.js";
import { KaiResponseSchema } from "../../src/kai/reports/schema.js";
import { entry } from "./fixtures.js";
import { TestRepo } from "./repo.js";

const NOW = Date.parse("2026-03-01T00:00:00Z");
const configWith = (lane: Record<string, unknown> = {}) =>
  parseConfig(JSON.stringify({ project_id: "vpm-mini", lanes: [{ ...docUpdateLane(), ...lane }] }), "test");
const OWN = "STATE/vpm-mini/current_state.md";
const section = (body: string) =>
  `# vpm-mini state\n\n## Layer B / doc_update v1\n\n${body}\n\n### Gaps\n\n- PM snapshot lags Layer B\n`;

const request = (params: Record<string, unknown> = {}) => ({
  version: "kai_request_v1",
  request_id: "req-repo",
  from: { actor_type: "human" },
  project_id: "vpm-mini",
  type: "lane_status",
  lane: { layer: "layer_b", name: "doc_update" },
  params,
});

describe("lane_status finds the STATE document and the lane's cycles in the repository", () => {
  const repo = new TestRepo();
  const shas: Record<string, string> = {};
  beforeAll(() => {
    repo.commit("2026-01-01T00:00:00Z", "initial", {
      "STATE/current_state.md": "# stale state\n\n## Layer B / doc_update v1\n\nNothing yet.\n",
      "STATE/custom.md": "# custom\n\n## Layer B / doc_update v1\n\nCustom.\n",
      [OWN]: section("Cycle-1 proposal under review."),
    });
    repo.commit("2026-01-05T00:00:00Z", "Add doc_update proposal for cycle-1 (#845)", {
      "reports/doc_update_proposals/cycle-1.json": "{}",
    });
    shas.apply = repo.commit("2026-01-08T00:00:00Z", "Apply doc_update proposal cycle-1 to STATE (#849)", {
      [OWN]: section("Cycle-1 applied through PR #849."),
    });
    // A later STATE edit that applies nothing: not a cycle.
    repo.commit("2026-01-20T00:00:00Z", "Fix a typo in STATE (#851)", {
      [OWN]: section("Cycle-1 applied through PR #849 (typo fixed)."),
    });
  });
  afterAll(() => repo.cleanup());

  async function ask(
    config = configWith(),
    params: Record<string, unknown> = {},
  ): Promise<{ res: KaiResponse; data: LaneStatus }> {
    const res = KaiResponseSchema.parse(
      await answer(request(params), { config, sources: { repo: repo.dir, board: async () => [] }, clock: () => NOW }),
    );
    if (res.status !== "ok" || res.payload.kind !== "lane_status_v1") throw new Error(JSON.stringify(res.notes));
    return { res, data: res.payload.data };
  }

  it("a cycle applied by a merged PR, with no blackboard entry: completed, found in git, the project's own STATE file", async () => {
    const { res, data } = await ask();
    expect(data.cycle).toEqual({
      latest_cycle_id: "cycle-1",
      root_entry_id: null,
      status: "completed",
      started_at: "2026-01-05T00:00:00.000Z",
      completed_at: "2026-01-08T00:00:00.000Z",
      found_in: "git",
      evidence: [
        { type: "pr", id: "849", title: "Apply doc_update proposal cycle-1 to STATE", at: "2026-01-08T00:00:00.000Z" },
        {
          type: "commit",
          id: shas.apply,
          title: "Apply doc_update proposal cycle-1 to STATE (#849)",
          at: "2026-01-08T00:00:00.000Z",
        },
        { type: "file", id: OWN, path: OWN },
      ],
    });
    expect(Object.fromEntries(Object.entries(data.steps).map(([k, s]) => [k, s.status]))).toEqual({
      aya: "completed",
      sho: "completed",
      tsugu: "completed",
      gen: "not_started",
      hana: "not_started",
    });
    expect(data.state_view).toMatchObject({ state_file: OWN, digest: "Cycle-1 applied through PR #849 (typo fixed)." });
    expect(res.notes).toContain(`STATE document read: ${OWN}, the project's own STATE document (${OWN})`);
    expect(res.summary_md.split("\n")[1]).toBe(
      "- cycle-1 completed 2026-01-08T00:00:00.000Z (applied to STATE by PR #849; not on the blackboard)",
    );
    expect(data.next_suggested_actions[0]).toMatchObject({
      id: "start-cycle",
      reason:
        "cycle-1 completed at 2026-01-08T00:00:00.000Z (recorded by PR #849); the blackboard has no cycle of layer_b/doc_update",
    });
  });

  it("a role after the apply with work in the window (its workflow wired) is in progress, not not_started", async () => {
    const other = new TestRepo();
    try {
      other.commit("2026-01-01T00:00:00Z", "initial", { [OWN]: section("Cycle-1 under review.") });
      other.commit("2026-01-08T00:00:00Z", "Apply doc_update proposal cycle-1 to STATE (#849)", {
        [OWN]: section("Cycle-1 applied."),
      });
      // Named in a message long before the window: no progress in this window.
      other.commit("2026-01-09T00:00:00Z", "Plan Hana's notifications (#850)", { "docs/hana.md": "# Hana\n" });
      other.commit("2026-02-25T00:00:00Z", "Wire the PM snapshot workflow (#852)", {
        ".github/workflows/gen_pm_snapshot.yml": "on: workflow_dispatch\n",
      });
      const res = KaiResponseSchema.parse(
        await answer(request(), {
          config: configWith(),
          sources: { repo: other.dir, board: async () => [] },
          clock: () => NOW,
        }),
      );
      if (res.status !== "ok" || res.payload.kind !== "lane_status_v1") throw new Error(JSON.stringify(res.notes));
      expect(Object.fromEntries(Object.entries(res.payload.data.steps).map(([k, s]) => [k, s.status]))).toEqual({
        aya: "completed",
        sho: "completed",
        tsugu: "completed",
        gen: "in_progress",
        hana: "not_started",
      });
    } finally {
      other.cleanup();
    }
  });

  it("as of before the apply: no cycle yet, said in a note and with a null status", async () => {
    const { res, data } = await ask(configWith(), { as_of: "2026-01-06T00:00:00Z" });
    expect(data.cycle).toMatchObject({ latest_cycle_id: null, status: null, found_in: null });
    expect(res.notes).toContain(
      "No cycle of layer_b/doc_update was found up to 2026-01-06T00:00:00.000Z on the blackboard, in git or in the STATE document: cycle.latest_cycle_id and cycle.status are null",
    );
  });

  it("a configured state_file is read instead, and says so", async () => {
    const { res, data } = await ask(configWith({ state_file: "STATE/custom.md" }));
    expect(res.notes).toContain("STATE document read: STATE/custom.md, the lane's configured state_file");
    expect(data.state_view.digest).toBe("Custom.");
  });

  it("without the project's own document, the default STATE/current_state.md", async () => {
    const other = new TestRepo();
    try {
      other.commit("2026-01-01T00:00:00Z", "initial", {
        "STATE/current_state.md": section("Cycle-2 completed on 2026-01-02."),
      });
      const res = KaiResponseSchema.parse(
        await answer(request(), { config: configWith(), sources: { repo: other.dir }, clock: () => NOW }),
      );
      if (res.status !== "ok" || res.payload.kind !== "lane_status_v1") throw new Error(JSON.stringify(res.notes));
      expect(res.notes).toContain(
        `STATE document read: STATE/current_state.md, the default state_file (${OWN} does not exist at the cutoff)`,
      );
      // Known only from the lane section's text: no apply commit names it.
      expect(res.payload.data.cycle).toMatchObject({
        latest_cycle_id: "cycle-2",
        status: "completed",
        completed_at: null,
        found_in: "state_doc",
      });
    } finally {
      other.cleanup();
    }
  });
});

describe("a step's latest entry", () => {
  it("takes the Actions run id, workflow and artifact from the entry's refs", () => {
    const lane = configWith().lanes[0]!;
    const board = [
      entry(
        "req-1",
        "Human",
        "Aya",
        "doc_update_proposal_request",
        "done",
        "2026-01-02T09:00:00Z",
        "2026-01-02T10:00:00Z",
        {
          refs: {
            actions_run_id: 19793359086,
            actions_workflow: "doc_update_proposal.yml",
            artifacts: ["reports/doc_update_proposals/p1.json"],
          },
        },
      ),
    ];
    const data = buildLaneStatus(
      { project_id: "vpm-mini", lane, humans: ["Human"], as_of: new Date(NOW) },
      { git: null, state_doc: null, board, runs: [], github: null, notes: [] },
    );
    expect(data.steps.aya!.latest_entry).toMatchObject({
      actions_run_id: "19793359086",
      actions_workflow: "doc_update_proposal.yml",
      artifact_path: "reports/doc_update_proposals/p1.json",
    });
  });
});

describe("the commits that name cycles", () => {
  const repo = new TestRepo();
  const bin = mkdtempSync(join(tmpdir(), "pmagent-git-log-"));
  const calls = join(bin, "calls");
  const path = process.env.PATH;
  beforeAll(() => {
    repo.commit("2026-01-01T00:00:00Z", "initial", { [OWN]: section("Nothing yet.") });
    repo.commit("2026-01-05T00:00:00Z", "Add doc_update proposal for cycle-4 (#845)", { "reports/p.json": "{}" });
    // git as Kai runs it, each command line written down.
    const real = execFileSync("sh", ["-c", "command -v git"], { encoding: "utf8" }).trim();
    writeFileSync(join(bin, "git"), `#!/bin/sh\necho "$*" >> ${calls}\nexec ${real} "$@"\n`, { mode: 0o755 });
    process.env.PATH = `${bin}:${path}`;
  });
  afterAll(() => {
    process.env.PATH = path;
    rmSync(bin, { recursive: true, force: true });
    repo.cleanup();
  });

  /** The git commands (their first word after the pinned options) an answer ran. */
  const commands = () =>
    readFileSync(calls, "utf8")
      .trim()
      .split("\n")
      .map((line) => /(?:^| )(rev-list|cat-file|remote|log|show|ls-tree) /.exec(line)?.[1] ?? line)
      .sort();

  async function latestCycle(summary: string): Promise<{ id: string | null; walked: boolean }> {
    rmSync(calls, { force: true });
    const root = entry(
      "req-1",
      "Human",
      "Aya",
      "doc_update_proposal_request",
      "open",
      "2026-01-04T00:00:00Z",
      "2026-01-04T00:00:00Z",
      { summary },
    );
    const res = KaiResponseSchema.parse(
      await answer(request(), {
        config: configWith(),
        sources: { repo: repo.dir, board: async () => [root] },
        clock: () => NOW,
      }),
    );
    if (res.payload?.kind !== "lane_status_v1") throw new Error(JSON.stringify(res.notes));
    return { id: res.payload.data.cycle.latest_cycle_id, walked: readFileSync(calls, "utf8").includes("--grep") };
  }

  it("are not walked for when every cycle on the board names itself", async () => {
    expect(await latestCycle("the cycle-3 request")).toEqual({ id: "cycle-3", walked: false });
  });

  it("are walked for a cycle that does not", async () => {
    expect(await latestCycle("a request")).toEqual({ id: "cycle-1", walked: true });
  });

  it("ask git once whether the repository is a shallow clone, and no more of a full history", async () => {
    for (const as_of of ["2026-01-03T00:00:00Z", "2026-01-09T00:00:00Z"]) {
      rmSync(calls, { force: true });
      const res = KaiResponseSchema.parse(
        await answer(
          { ...request({ as_of }), type: "what_changed" },
          { config: configWith(), sources: { repo: repo.dir }, clock: () => NOW },
        ),
      );
      expect(res.status).toBe("ok");
      expect(res.notes.join("\n")).not.toContain("is a shallow clone");
      const lines = readFileSync(calls, "utf8").trim().split("\n");
      expect(lines.filter((l) => l.includes("--is-shallow-repository"))).toHaveLength(1);
      // The cut's commits and times are read only from a shallow clone.
      expect(lines.filter((l) => / cat-file --batch$| rev-list --no-walk/.test(l))).toEqual([]);
    }
    // lane_status reads a window only for a repository cycle's later roles: it does not ask.
    rmSync(calls, { force: true });
    const window = { since: new Date("2025-12-31T00:00:00Z"), until: new Date("2026-01-09T00:00:00Z") };
    expect((await collectGit(repo.dir, window)).commits).toHaveLength(2);
    expect(readFileSync(calls, "utf8")).not.toContain("--is-shallow-repository");
  });

  it("are not read, nor any history, when no commit is as old as the cutoff", async () => {
    const empty = new TestRepo();
    try {
      // A fresh `git init`, and an as_of before the repository's first commit: the lookup of the
      // commit at the cutoff finds none, so only it and the remote's address are asked for.
      for (const [dir, params] of [
        [empty.dir, {}],
        [repo.dir, { as_of: "2025-12-01T00:00:00Z" }],
      ] as const) {
        rmSync(calls, { force: true });
        const res = KaiResponseSchema.parse(
          await answer(request(params), { config: configWith(), sources: { repo: dir }, clock: () => NOW }),
        );
        if (res.payload?.kind !== "lane_status_v1") throw new Error(JSON.stringify(res.notes));
        expect(res.payload.data.cycle.latest_cycle_id).toBeNull();
        expect(res.payload.data.state_view.digest).toBe(
          "STATE/current_state.md does not exist (no commit touched it up to the cutoff)",
        );
        expect(commands()).toEqual(["remote", "rev-list"]);
      }
      // A directory git cannot read is still refused, not taken for a repository without commits.
      const notRepo = mkdtempSync(join(tmpdir(), "pmagent-kai-nogit-"));
      try {
        await expect(
          answer(request(), { config: configWith(), sources: { repo: notRepo }, clock: () => NOW }),
        ).rejects.toThrow(`${notRepo} is not a git repository (pass --repo DIR with the project's repository)`);
      } finally {
        rmSync(notRepo, { recursive: true, force: true });
      }
    } finally {
      empty.cleanup();
    }
  });
});
