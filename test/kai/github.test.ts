import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Octokit } from "@octokit/rest";
import { docUpdateLane, parseConfig } from "../../src/config/index.js";
import { answer, collectGithub, githubSource } from "../../src/kai/index.js";
import { FakeGitHub } from "../helpers/fake-github.js";
import { TestRepo } from "./repo.js";

const REPO = "vpm/vpm-mini";
const TOKEN = "test-token";
const window = { since: new Date("2026-01-03T00:00:00Z"), until: new Date("2026-01-10T00:00:00Z") };

describe("GitHub collector against a local server answering as GitHub documents", () => {
  let gh: FakeGitHub;
  const clock = { now: Date.parse("2026-01-02T00:00:00Z") };
  const setTime = (iso: string) => (clock.now = Date.parse(iso));
  let octokit: Octokit;

  beforeAll(async () => {
    gh = await FakeGitHub.start({ clock: () => clock.now });
    gh.addRepo(REPO);
    octokit = new Octokit({ auth: TOKEN, baseUrl: gh.url });
    gh.addIssue(REPO, { title: "old issue" }); // #1, untouched since before the window
    gh.addWorkflowRun(REPO, { name: "CI", created_at: "2026-01-02T00:00:00Z" });
    setTime("2026-01-04T00:00:00Z");
    gh.addIssue(REPO, { title: "[board] doc_update_blackboard_v1", labels: ["board"] }); // #2
    setTime("2026-01-05T00:00:00Z");
    await octokit.rest.pulls.create({
      owner: "vpm",
      repo: "vpm-mini",
      title: "Apply doc_update proposal",
      head: "apply-1",
      base: "main",
    }); // #3
    setTime("2026-01-06T00:00:00Z");
    gh.mergePull(REPO, 3);
    gh.addWorkflowRun(REPO, {
      name: "doc_update_apply",
      created_at: "2026-01-06T00:00:00Z",
      updated_at: "2026-01-06T00:10:00Z",
      conclusion: "success",
    });
    setTime("2026-01-07T00:00:00Z");
    await octokit.rest.pulls.create({
      owner: "vpm",
      repo: "vpm-mini",
      title: "PM snapshot for cycle-1",
      head: "snapshot-1",
      base: "main",
    }); // #4
    gh.addWorkflowRun(REPO, {
      name: "doc_update_apply",
      created_at: "2026-01-08T00:00:00Z",
      updated_at: "2026-01-08T00:10:00Z",
      conclusion: "failure",
    });
    setTime("2026-01-09T00:00:00Z");
    gh.addIssue(REPO, { title: "Review truncation", state: "closed" }); // #5
    setTime("2026-01-11T00:00:00Z");
    gh.mergePull(REPO, 4); // after the cutoff
    gh.addWorkflowRun(REPO, { name: "CI", created_at: "2026-01-11T00:00:00Z" });
  });
  afterAll(async () => gh.close());

  it("lists issues, pull requests and workflow runs of the window as they stood at its end", async () => {
    const ev = await collectGithub(octokit, REPO, window);
    expect(ev.issues.map((i) => [i.number, i.title, i.state, i.closed_at, i.labels])).toEqual([
      [5, "Review truncation", "closed", "2026-01-09T00:00:00Z", []],
      [2, "[board] doc_update_blackboard_v1", "open", null, ["board"]],
    ]);
    // #4 was merged after the cutoff: then it was open.
    expect(ev.pulls.map((p) => [p.number, p.state, p.merged_at, p.head])).toEqual([
      [4, "open", null, "snapshot-1"],
      [3, "closed", "2026-01-06T00:00:00Z", "apply-1"],
    ]);
    expect(ev.workflow_runs.map((r) => [r.name, r.path, r.status, r.conclusion, r.created_at])).toEqual([
      ["doc_update_apply", ".github/workflows/doc_update_apply.yml", "completed", "failure", "2026-01-08T00:00:00Z"],
      ["doc_update_apply", ".github/workflows/doc_update_apply.yml", "completed", "success", "2026-01-06T00:00:00Z"],
    ]);
    const runsRequest = gh.requests.filter((r) => r.path === "/repos/vpm/vpm-mini/actions/runs").at(-1)!;
    expect(runsRequest.query.created).toBe("2026-01-03T00:00:00Z..2026-01-10T00:00:00Z");
    expect(gh.requests.filter((r) => r.path === "/repos/vpm/vpm-mini/pulls").at(-1)!.query).toMatchObject({
      state: "all",
      sort: "updated",
      direction: "desc",
    });
  });

  it("feeds what_changed: workflow run counts and latest status, PR states, a failing-workflow risk", async () => {
    const repo = new TestRepo();
    try {
      repo.commit("2026-01-01T00:00:00Z", "init", { "STATE/current_state.md": "# State\n" });
      const config = parseConfig(
        JSON.stringify({ project_id: "vpm-mini", lanes: [docUpdateLane()], github: { repo: REPO, api_url: gh.url } }),
        "test",
      );
      const source = githubSource(config, { GITHUB_TOKEN: TOKEN });
      const res = await answer(
        {
          version: "kai_request_v1",
          request_id: "r1",
          from: { actor_type: "chatgpt" },
          project_id: "vpm-mini",
          type: "what_changed",
          lane: { layer: "layer_b", name: "doc_update" },
          params: { as_of: "2026-01-10T00:00:00Z" },
        },
        { config, sources: { repo: repo.dir, github: source.source }, clock: () => Date.parse("2026-01-20T00:00:00Z") },
      );
      if (res.status !== "ok" || res.payload.kind !== "what_changed_v1") throw new Error(JSON.stringify(res.notes));
      const data = res.payload.data;
      expect(data.by_category.workflows).toEqual([
        {
          name: "doc_update_apply",
          source: "github_actions",
          runs: 2,
          failed_runs: 1,
          latest_status: "failure",
          latest_run_id: expect.any(String),
          latest_at: "2026-01-08T00:00:00Z",
        },
      ]);
      expect(data.by_category.prs.map((p) => [p.number, p.status, p.url])).toEqual([
        [4, "open", "https://github.com/vpm/vpm-mini/pull/4"],
        [3, "merged", "https://github.com/vpm/vpm-mini/pull/3"],
      ]);
      expect(data.highlights.map((h) => h.title)).toEqual([
        "doc_update_apply: 1 of 2 runs failed",
        "PR #3 merged: Apply doc_update proposal",
        "PR #4 open: PM snapshot for cycle-1",
        "Issues: 2 opened, 1 closed",
      ]);
      expect(data.risks[0]).toMatchObject({ id: "workflow-failing-doc_update_apply", severity: "high" });
      expect(data.open_questions).toEqual(["When will PR #4 (PM snapshot for cycle-1) be reviewed and merged?"]);
      expect(res.notes).toContain("Evidence: GitHub vpm/vpm-mini: 2 pull requests, 2 issues, 2 workflow runs");
    } finally {
      repo.cleanup();
    }
  });

  it("a bad token or an unknown repository leaves GitHub out with a note, and never shows the token", async () => {
    const repo = new TestRepo();
    try {
      repo.commit("2026-01-01T00:00:00Z", "init");
      const ask = async (ghRepo: string, token: string) => {
        const config = parseConfig(
          JSON.stringify({
            project_id: "vpm-mini",
            lanes: [docUpdateLane()],
            github: { repo: ghRepo, api_url: gh.url, token_env: "KAI_GH" },
          }),
          "test",
        );
        const source = githubSource(config, { KAI_GH: token });
        const res = await answer(
          {
            version: "kai_request_v1",
            request_id: "r2",
            from: { actor_type: "human" },
            project_id: "vpm-mini",
            type: "lane_status",
            lane: { layer: "layer_b", name: "doc_update" },
          },
          { config, sources: { repo: repo.dir, github: source.source } },
        );
        expect(res.status).toBe("ok");
        expect(JSON.stringify(res)).not.toContain(token);
        return res.notes;
      };
      expect(await ask(REPO, "ghp_wrongwrongwrongwrongwrong")).toContain(
        "GitHub was not read: GitHub vpm/vpm-mini: bad credentials (check the token)",
      );
      expect(await ask("vpm/missing", TOKEN)).toContain(
        "GitHub was not read: GitHub vpm/missing: repository vpm/missing not found or not visible to the token",
      );
    } finally {
      repo.cleanup();
    }
  });

  it("without a token or a repository GitHub is not consulted, and the note says which is missing", () => {
    const base = { project_id: "vpm-mini", lanes: [docUpdateLane()] };
    expect(githubSource(parseConfig(JSON.stringify(base), "t"), {})).toEqual({
      note: "GitHub was not consulted: no github.repo in the config",
    });
    expect(githubSource(parseConfig(JSON.stringify({ ...base, github: { repo: REPO } }), "t"), {})).toEqual({
      note: "GitHub was not consulted: GITHUB_TOKEN is not set",
    });
  });
});
