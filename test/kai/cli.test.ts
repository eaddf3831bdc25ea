import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { docUpdateLane } from "../../src/config/index.js";
import { KaiResponseSchema } from "../../src/kai/reports/schema.js";
import { runCli } from "../helpers/proc.js";
import { openSqliteTestStore, type TestStore } from "../helpers/stores.js";
import { request, testBoard } from "../helpers/blackboard.js";
import { TestRepo } from "./repo.js";

const HOUR = 3_600_000;
const STATE = "# State\n\n## Layer B / doc_update v1\n\nProposal p1 under review.\n\n### Gaps\n\n- PM snapshot lags\n";

describe("pmagent kai", () => {
  const repo = new TestRepo();
  let t: TestStore;
  const cli = (args: string[], input?: string) =>
    runCli(["kai", ...args], { cwd: repo.dir, env: { ...process.env, ...t.env }, input });

  beforeAll(async () => {
    repo.commit("2026-01-02T00:00:00Z", "init", {
      "pmagent.config.json": JSON.stringify({ project_id: "vpm-mini", lanes: [docUpdateLane()] }, null, 2),
      "STATE/current_state.md": "# State\n",
    });
    repo.commit("2026-01-05T00:00:00Z", "Layer B section (#12)", { "STATE/current_state.md": STATE });
    repo.commit("2026-01-06T00:00:00Z", "add guide", { "docs/guide.md": "guide" });
    repo.commit("2026-01-06T12:00:00Z", "add report", { "reports/doc_update_proposals/p1.json": "{}" });
    t = await openSqliteTestStore();
    const { board, clock } = testBoard(t.store, Date.parse("2026-01-04T00:00:00Z"));
    await board.post("Human", { ...request("req-1"), source_issue: 841 });
    clock.advance(HOUR);
    await board.transition("Aya", "req-1", "done");
    await board.post(
      "Aya",
      request("req-1-review", { to: "Sho", kind: "doc_update_review_request", source_issue: 841 }),
    );
  });
  afterAll(async () => {
    await t.cleanup();
    repo.cleanup();
  });

  it("status: lane_status_v1 from the repository and the blackboard", async () => {
    const r = await cli(["status"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const res = KaiResponseSchema.parse(JSON.parse(r.stdout));
    if (res.status !== "ok" || res.payload.kind !== "lane_status_v1") throw new Error(r.stdout);
    expect(res.request_id).toMatch(/^cli-/);
    expect(res.payload.data.cycle).toMatchObject({
      latest_cycle_id: "cycle-1",
      root_entry_id: "req-1",
      status: "in_progress",
    });
    expect(res.payload.data.steps.sho!.status).toBe("pending");
    expect(
      Object.values(res.payload.data.steps)
        .slice(0, 2)
        .map((s) => [s.role, s.status, s.latest_entry?.blackboard_issue]),
    ).toEqual([
      ["Aya", "completed", 841],
      ["Sho", "pending", 841],
    ]);
    expect(res.payload.data.state_view).toMatchObject({
      section_anchor: "#layer-b--doc_update-v1",
      digest: "Proposal p1 under review.",
      known_gaps: ["PM snapshot lags"],
    });
    // The project's runs are read (it has none yet).
    expect(res.notes).toContain("Evidence: 0 runs");
    expect(res.notes.join("\n")).not.toContain("runs were not read");
    expect(res.notes).toContain("GitHub was not consulted: no github.repo in the config");
  });

  it("status --format md prints the 3–5 line digest", async () => {
    const r = await cli(["status", "--format", "md"]);
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split("\n");
    expect(lines).toHaveLength(4);
    expect(lines[0]).toMatch(/^## layer_b \/ doc_update status \(as of /);
    expect(lines.slice(1)).toEqual([
      "- cycle-1 in_progress (started 2026-01-04T00:00:00.000Z); steps: Aya completed, Sho pending",
      "- State: Proposal p1 under review. (1 known gap)",
      "- Next (medium): Start a worker for Sho to pick entry req-1-review (pmagent worker --role Sho)",
    ]);
  });

  it("changes --as-of --days --max: the window ends at as_of, highlights are capped", async () => {
    const r = await cli(["changes", "--as-of", "2026-01-06T06:00:00Z", "--days", "3", "--max", "2"]);
    expect(r.code).toBe(0);
    const res = KaiResponseSchema.parse(JSON.parse(r.stdout));
    if (res.status !== "ok" || res.payload.kind !== "what_changed_v1") throw new Error(r.stdout);
    expect(res.payload.data.time_window).toEqual({ from: "2026-01-03", to: "2026-01-06" });
    expect(res.payload.data.highlights.map((h) => h.title)).toEqual([
      "STATE: the Layer B / doc_update v1 section changed",
      "layer_b/doc_update cycle-1 started",
    ]);
    expect(res.payload.data.by_category.state_docs.map((d) => d.path)).toEqual([
      "docs/guide.md",
      "STATE/current_state.md",
    ]);
  });

  it("changes --as-of with an offset: the window's dates are that zone's", async () => {
    // 2026-01-05T23:00Z: in UTC the window would be 01-02 – 01-05.
    const r = await cli(["changes", "--as-of", "2026-01-06T08:00:00+09:00", "--days", "3"]);
    expect(r.code).toBe(0);
    const res = KaiResponseSchema.parse(JSON.parse(r.stdout));
    if (res.status !== "ok" || res.payload.kind !== "what_changed_v1") throw new Error(r.stdout);
    expect(res.payload.data.time_window).toEqual({ from: "2026-01-03", to: "2026-01-06" });
  });

  it("ask -: a full request from standard input; --as-of overrides params.as_of", async () => {
    const body = {
      version: "kai_request_v1",
      request_id: "req-cli-1",
      from: { actor_type: "workflow", actor_id: "ci" },
      project_id: "vpm-mini",
      type: "lane_status",
      lane: { layer: "layer_b", name: "doc_update" },
    };
    const r = await cli(["ask", "-", "--as-of", "2026-01-04T00:30:00Z"], JSON.stringify(body));
    expect(r.code).toBe(0);
    const res = KaiResponseSchema.parse(JSON.parse(r.stdout));
    if (res.status !== "ok" || res.payload.kind !== "lane_status_v1") throw new Error(r.stdout);
    expect(res.request_id).toBe("req-cli-1");
    expect(res.payload.data.as_of).toBe("2026-01-04T00:30:00.000Z");
    expect(res.payload.data.steps.aya!.status).toBe("pending");
    expect(res.payload.data.state_view.digest).toBe("no section about layer_b/doc_update in STATE/current_state.md");
  });

  it("ask FILE with a bad request: an error response echoing request_id, exit 2", async () => {
    const file = join(repo.dir, "bad.json");
    writeFileSync(
      file,
      JSON.stringify({
        version: "kai_request_v1",
        request_id: "req-bad",
        from: { actor_type: "human" },
        project_id: "other",
        type: "what_changed",
        lane: { layer: "layer_b", name: "doc_update" },
        params: { time_window_days: 400 },
      }),
    );
    const r = await cli(["ask", file]);
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout)).toMatchObject({
      request_id: "req-bad",
      status: "error",
      payload: null,
      notes: ["$.params.time_window_days: time_window_days must be a whole number from 1 to 365, got 400"],
    });
  });

  it("ask - with invalid JSON, as Markdown: the digest on stdout and the reason on stderr", async () => {
    const r = await cli(["ask", "-", "--format", "md"], "{not json");
    expect(r.code).toBe(2);
    expect(r.stdout.split("\n")[0]).toBe("## Kai could not answer this request");
    expect(r.stderr).toMatch(/^pmagent: the request is not valid JSON: /);
  });

  it.each([
    [["ask", "missing.json"], "pmagent: cannot read missing.json: ENOENT [input_unreadable]"],
    [
      ["status", "--lane", "doc_update"],
      'pmagent: --lane expects LAYER/NAME (e.g. layer_b/doc_update), got "doc_update" [invalid_option]',
    ],
    [["changes", "--days", "0"], "pmagent: --days must be between 1 and 365, got 0 [invalid_option]"],
    [["changes", "--max", "x"], 'pmagent: --max expects a whole number, got "x" [invalid_option]'],
    [
      ["status", "--as-of", "last week"],
      'pmagent: --as-of: "last week" is not an ISO 8601 date or date-time (e.g. 2026-01-15 or 2026-01-15T10:30:00Z) [invalid_date]',
    ],
    [
      ["status", "--repo", "/nonexistent/repo"],
      "pmagent: repository directory /nonexistent/repo does not exist (pass --repo DIR) [kai_repo_not_found]",
    ],
  ])("kai %j → exit 2 with a message saying what to fix", async (args, message) => {
    const r = await cli(args);
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toBe(message);
  });

  it.each([
    ["status", "--polish"],
    ["changes", "--model-digest"],
  ])("kai %s %s without a model key is a usage error naming what to set", async (command, flag) => {
    const env: NodeJS.ProcessEnv = { ...process.env, ...t.env };
    delete env.OPENAI_API_KEY;
    const r = await runCli(["kai", command, flag], { cwd: repo.dir, env });
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toBe(
      "pmagent: no model API key: set OPENAI_API_KEY or model.api_key_env in pmagent.config.json [no_model_api_key]",
    );
  });

  it("an unknown lane or a future --as-of is answered with an error response", async () => {
    const lane = await cli(["status", "--lane", "layer_x/foo"]);
    expect(lane.code).toBe(2);
    expect(JSON.parse(lane.stdout).notes).toEqual([
      "$.lane: unknown lane layer_x/foo; configured lanes: layer_b/doc_update",
    ]);
    const future = await cli(["changes", "--as-of", "2999-01-01"]);
    expect(future.code).toBe(2);
    expect(JSON.parse(future.stdout).notes[0]).toMatch(
      /^\$\.params\.as_of: 2999-01-01T00:00:00\.000Z is in the future/,
    );
  });

  it("--project names another project of the repository; one without its STATE document is refused, saying what it needs", async () => {
    const res = await cli(["status", "--project", "hakone-e2", "--format", "md"]);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('pmagent: $.project_id: unknown project "hakone-e2"; this project is');
    expect(res.stderr).toContain("(another project needs its STATE/<project_id>/current_state.md committed)");
  });
});
