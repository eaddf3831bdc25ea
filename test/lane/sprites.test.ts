import { describe, expect, it } from "vitest";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { Sprite, writeResume } from "../../src/lattice/index.js";
import { cycleRootId, parseConfig } from "../../src/config/index.js";
import {
  DocUpdateProposalSchema,
  DocUpdateReviewSchema,
  exampleLaneConfig,
  proposalFor,
  LANE_SPRITES,
  reviewProposal,
  snapshotFor,
  snapshotMarkdown,
  type LaneEntry,
} from "../../src/lane/index.js";
import { REPO_ROOT, runCli } from "../helpers/proc.js";

const config = parseConfig(JSON.stringify(exampleLaneConfig("demo")), "example");
const lane = config.lanes[0]!;
const NOW = new Date("2026-11-20T10:00:00Z");
const entry = (payload: Record<string, unknown>, target_docs: string[] = []): LaneEntry => ({
  id: "req-1",
  kind: "doc_update_proposal_request",
  payload,
  target_docs,
});
const project = { root: "/nowhere", configPath: "", config };

describe("the example lane config", () => {
  it("is the file under examples/doc-update-lane and valid", () => {
    const file = readFileSync(join(REPO_ROOT, "examples/doc-update-lane/pmagent.config.json"), "utf8");
    expect(JSON.parse(file)).toEqual(exampleLaneConfig("demo"));
    expect(
      lane.roles.map((r) => [
        r.name,
        r.runner?.command?.join(" "),
        r.next?.to ?? r.routes?.map((x) => `${x.on}${x.target ? `/${x.target}` : ""} → ${x.to}`),
      ]),
    ).toEqual([
      ["Aya", "pmagent lane-sprite aya", "Sho"],
      ["Sho", "pmagent lane-sprite sho", "Tsugu"],
      ["Tsugu", "pmagent lane-sprite tsugu", "Gen"],
      ["Gen", "pmagent lane-sprite gen", "Hana"],
      [
        "Hana",
        "pmagent lane-sprite hana",
        ["hana_task/Aya → Aya", "hana_task/Kai → Kai", "pm_snapshot_done → Human", "hana_analysis_result → Human"],
      ],
    ]);
    expect(lane.roles.at(-1)!.allowed_kinds).toEqual(["hana_task", "pm_snapshot_done", "hana_analysis_result"]);
  });
});

describe("Aya: request → doc_update_proposal_v1", () => {
  it("takes the updates the request lists, numbering those without an id", () => {
    const p = proposalFor(
      {
        lane,
        project,
        cycleId: "req-1",
        entry: entry({
          summary: "Refresh STATE",
          details: {
            updates: [
              {
                path: "STATE/current_state.md",
                reason: "new cycle",
                change_type: "append",
                suggested_markdown: "Done.",
              },
              { id: "x", path: "docs/a.md", reason: "new", change_type: "create", suggested_markdown: "# A" },
            ],
          },
        }),
      },
      NOW,
    );
    expect(DocUpdateProposalSchema.parse(p)).toEqual(p);
    expect(p).toMatchObject({
      schema_version: "doc_update_proposal_v1",
      project_id: "demo",
      cycle_id: "req-1",
      request_entry_id: "req-1",
      summary: "Refresh STATE",
      generated_at: "2026-11-20T10:00:00.000Z",
    });
    expect(p.updates.map((u) => [u.id, u.target.path, u.change_type, u.apply_as])).toEqual([
      ["u1", "STATE/current_state.md", "add", "append"],
      ["x", "docs/a.md", "add", "create"],
    ]);
  });

  it("without listed updates, appends a section with the request to each target document", () => {
    const p = proposalFor(
      {
        lane,
        project,
        cycleId: "req-1",
        entry: entry({ details: { request: "Record the release" } }, ["STATE/current_state.md", "docs/release.md"]),
      },
      NOW,
    );
    expect(p.summary).toBe("Record the release");
    expect(p.updates).toEqual([
      {
        id: "u1",
        target: { path: "STATE/current_state.md" },
        reason: "requested in req-1",
        change_type: "add",
        apply_as: "append",
        suggestion_markdown: "## Update req-1 (2026-11-20)\n\nRecord the release.",
      },
      {
        id: "u2",
        target: { path: "docs/release.md" },
        reason: "requested in req-1",
        change_type: "add",
        apply_as: "append",
        suggestion_markdown: "## Update req-1 (2026-11-20)\n\nRecord the release.",
      },
    ]);
  });

  it("falls back to the lane's STATE file when the request names no document", () => {
    expect(
      proposalFor({ lane, project, cycleId: "req-1", entry: entry({ summary: "s" }) }, NOW).updates.map(
        (u) => u.target.path,
      ),
    ).toEqual(["STATE/current_state.md"]);
    // A fresh repository (pmagent init) has no STATE document yet: Aya proposes to create it, which Sho accepts.
    const fresh = proposalFor(
      {
        lane,
        project,
        cycleId: "req-1",
        entry: entry({ summary: "Refresh the Layer B section" }, ["STATE/current_state.md"]),
      },
      NOW,
      () => false,
    );
    expect(fresh.updates).toEqual([
      expect.objectContaining({
        target: { path: "STATE/current_state.md" },
        apply_as: "create",
        suggestion_markdown: "# Current state\n\n## Update req-1 (2026-11-20)\n\nRefresh the Layer B section.",
      }),
    ]);
    const review = reviewProposal({
      proposal: fresh,
      proposalRef: "p.json",
      read: () => null,
      allowedPaths: lane.allowed_paths,
      cycleId: "req-1",
      now: NOW,
    });
    expect(review.target_files).toEqual([
      {
        target: { path: "STATE/current_state.md" },
        change_type: "replace_whole_file",
        final_content: "# Current state\n\n## Update req-1 (2026-11-20)\n\nRefresh the Layer B section.\n",
        risk: "low",
        reviewer_comment: "u1: requested in req-1; STATE/current_state.md does not exist yet",
      },
    ]);
  });

  it.each([
    [{ updates: [] }, "$.updates: must list at least one update"],
    [
      { updates: [{ path: "STATE/x.md", reason: "r", change_type: "delete", suggested_markdown: "x" }] },
      "$.updates[0].change_type",
    ],
    [
      { updates: [{ path: "STATE/x.md", reason: " ", change_type: "append", suggested_markdown: "x" }] },
      "$.updates[0].reason: must not be empty",
    ],
  ])("refuses bad request details %j", (details, message) => {
    let error: Error | undefined;
    try {
      proposalFor({ lane, project, cycleId: "req-1", entry: entry({ details }) }, NOW);
    } catch (err) {
      error = err as Error;
    }
    expect(error).toMatchObject({ code: "invalid_request" });
    expect(error!.message).toContain("payload.details of entry req-1");
    expect(error!.message).toContain(message);
  });
});

describe("Sho: doc_update_review_v1", () => {
  const docs: Record<string, string> = {
    "STATE/current_state.md": "# State\n\nOne.\nTwo.\nThree.\n",
    "docs/guide.md": `${"Sentence.\n".repeat(10)}`,
  };
  const proposal = DocUpdateProposalSchema.parse({
    schema_version: "doc_update_proposal_v1",
    project_id: "demo",
    generated_at: NOW.toISOString(),
    summary: "s",
    updates: [
      {
        id: "u1",
        target: { path: "STATE/current_state.md" },
        reason: "r",
        change_type: "add",
        suggestion_markdown: "Four.",
      },
      {
        id: "u2",
        target: { path: "docs/guide.md" },
        reason: "r",
        change_type: "other",
        apply_as: "replace",
        suggestion_markdown: "Sentence.\nSentence.",
      },
      { id: "u3", target: { path: "src/index.ts" }, reason: "r", change_type: "add", suggestion_markdown: "x;" },
    ],
  });

  it("accepts the good update, refuses the truncating one and the one outside the allowed paths (without reading it)", () => {
    const read: string[] = [];
    const review = reviewProposal({
      proposal,
      proposalRef: "reports/p.json",
      read: (p) => (read.push(p), docs[p] ?? null),
      allowedPaths: lane.allowed_paths,
      cycleId: "req-1",
      now: NOW,
    });
    expect(DocUpdateReviewSchema.parse(review)).toEqual(review);
    expect(read).toEqual(["STATE/current_state.md", "docs/guide.md"]);
    expect(
      review.update_judgements.map((d) => [d.update_id, d.target_path, d.decision, d.lines_before, d.lines_after]),
    ).toEqual([
      ["u1", "STATE/current_state.md", "accept", 5, 7],
      ["u2", "docs/guide.md", "reject", 10, 2],
      ["u3", "src/index.ts", "reject", null, null],
    ]);
    expect(review.update_judgements[1]!.reason).toBe(
      "would shrink docs/guide.md from 10 to 2 lines (below 70% of its lines): a truncated document",
    );
    expect(review.update_judgements[2]!.reason).toBe(
      'path "src/index.ts" is outside the allowed paths (STATE/, docs/, reports/)',
    );
    // The accepted update, as the whole new file; the proposal's risk is medium (some updates were refused).
    expect(review).toMatchObject({
      schema_version: "doc_update_review_v1",
      project_id: "demo",
      proposal_ref: "reports/p.json",
      review_mode: "auto_accept_v1",
      overall_assessment: { risk_level: "medium" },
    });
    expect(review.target_files).toEqual([
      {
        target: { path: "STATE/current_state.md" },
        change_type: "replace_whole_file",
        final_content: "# State\n\nOne.\nTwo.\nThree.\n\nFour.\n",
        risk: "low",
        reviewer_comment: "u1: r",
      },
    ]);
  });

  it("places the origin's change types: add appends, edit_paragraph replaces the section its section_hint names", () => {
    const state = "# 現在地\n\n## 1.1 Current（C）\n\n- old point.\n\n## 2. Goals\n\n- keep going.\n";
    const origin = DocUpdateProposalSchema.parse({
      schema_version: "doc_update_proposal_v1",
      project_id: "vpm-mini",
      generated_at: "2025-11-30T02:40:00+09:00",
      updates: [
        {
          target: { path: "STATE/current_state.md", doc_type: "state", section_hint: "1.1 Current（C）" },
          reason: "Phase 2 に合わせる",
          change_type: "edit_paragraph",
          suggestion_markdown: "- new point one.\n- new point two.",
          confidence: "high",
        },
        { target: { path: "docs/new.md" }, change_type: "add", suggestion_markdown: "# New\n\nText." },
      ],
    });
    const review = reviewProposal({
      proposal: origin,
      proposalRef: "x.json",
      read: (p) => (p === "STATE/current_state.md" ? state : null),
      allowedPaths: lane.allowed_paths,
      cycleId: "c",
      now: NOW,
    });
    expect(review.target_files!.map((f) => [f.target.path, f.final_content])).toEqual([
      [
        "STATE/current_state.md",
        "# 現在地\n\n## 1.1 Current（C）\n\n- new point one.\n- new point two.\n\n## 2. Goals\n\n- keep going.\n",
      ],
      ["docs/new.md", "# New\n\nText.\n"],
    ]);
    const missing = DocUpdateProposalSchema.parse({
      ...origin,
      updates: [{ ...origin.updates[0]!, target: { path: "STATE/current_state.md", section_hint: "9. Nowhere" } }],
    });
    const refused = reviewProposal({
      proposal: missing,
      proposalRef: "x.json",
      read: () => state,
      allowedPaths: lane.allowed_paths,
      cycleId: "c",
      now: NOW,
    });
    expect(refused.update_judgements[0]!.reason).toBe(
      'STATE/current_state.md has no section "9. Nowhere": name one of its headings in section_hint',
    );
    expect(refused.overall_assessment.risk_level).toBe("high");
  });
});

describe("Gen: PM snapshot", () => {
  it("without a branch to put it on, keeps the snapshot in its workspace, says so, and asks for no pull request", () => {
    const workspace = mkdtempSync(join(tmpdir(), "pmagent-gen-"));
    try {
      execFileSync("git", ["init", "--quiet", "-b", "main", workspace]);
      const ref = join(workspace, "review.json");
      writeFileSync(
        ref,
        JSON.stringify({
          version: "doc_update_review_v1",
          cycle_id: "req-1",
          proposal_summary: "s",
          created_at: NOW.toISOString(),
          decisions: [
            {
              update_id: "u1",
              path: "STATE/current_state.md",
              decision: "reject",
              reasons: ["too short"],
              lines_before: 9,
              lines_after: 2,
            },
          ],
          accepted: [],
        }),
      );
      const events: Array<{ event_type: string; payload: Record<string, unknown> }> = [];
      const sprite = new Sprite({
        spriteId: "s-1",
        workItemId: "req-1-pm_snapshot",
        workspace,
        write: (line) => void events.push(JSON.parse(line.slice(line.indexOf("{"))) as never),
      });
      const genEntry = {
        id: "req-1-pm_snapshot",
        kind: "pm_snapshot_request",
        payload: { refs: [{ type: "artifact", kind: "doc_update_review_v1", ref }] },
        target_docs: [],
      };
      LANE_SPRITES.gen!({
        sprite,
        role: "Gen",
        workspace,
        project: { root: workspace, configPath: "", config },
        lane,
        entry: genEntry,
        cycleId: "req-1",
        branch: "doc-update/req-1",
        base: undefined,
        onCycleBranch: false,
        entryFile: "",
      });
      expect(events.map((e) => e.event_type)).toEqual(["PHASE_STARTED", "ARTIFACT", "PHASE_FINISHED", "COMPLETED"]);
      const rel = (events[1]!.payload.metadata as { path: string }).path;
      // Referenced by its repository-relative path, with the workspace it can be fetched from.
      expect(events[1]!.payload).toMatchObject({ kind: "pm_snapshot", ref: rel, url: pathToFileURL(workspace).href });
      // The origin's path and form (PM snapshot spec §5): the JSON, one "---" line, the Markdown view.
      expect(rel).toMatch(/^reports\/pm_snapshots\/\d{4}-\d\d-\d\d_demo\.md$/);
      const [json, view] = readFileSync(join(workspace, rel), "utf8").split("\n---\n");
      expect(JSON.parse(json!)).toMatchObject({
        schema_version: "pm_snapshot_v1",
        project_id: "demo",
        gaps: ["Update u1 to STATE/current_state.md was rejected: too short."],
      });
      expect(view).toMatch(/^# PM Snapshot: demo \(\d{4}-\d\d-\d\d\)\n/);
      expect(readFileSync(join(workspace, rel), "utf8")).toContain("- No pull request was opened.");
      expect(events[3]!.payload).toMatchObject({
        status: "success",
        summary: `PM snapshot of req-1: ${rel} (no branch to put it on: it stays in this run's workspace)`,
      });
    } finally {
      rmSync(workspace, { recursive: true, force: true });
    }
  });

  it("on the cycle's branch after a role that reported no pull request (an agent as Tsugu): the supervisor's refs name the branch, commit and pull request; the snapshot is left for the hand-on to commit", () => {
    const workspace = mkdtempSync(join(tmpdir(), "pmagent-gen-"));
    try {
      execFileSync("git", ["init", "--quiet", "-b", "pmagent/layer_b/doc_update/req-1", workspace]);
      const review = {
        version: "doc_update_review_v1",
        cycle_id: "req-1",
        proposal_summary: "s",
        created_at: NOW.toISOString(),
        decisions: [
          {
            update_id: "u1",
            path: "STATE/current_state.md",
            decision: "accept",
            reasons: [],
            lines_before: 3,
            lines_after: 5,
          },
        ],
        accepted: [
          { id: "u1", path: "STATE/current_state.md", reason: "r", change_type: "append", suggested_markdown: "Four." },
        ],
      };
      writeFileSync(join(workspace, "review.json"), JSON.stringify(review));
      const events: Array<{ event_type: string; payload: Record<string, unknown> }> = [];
      const sprite = new Sprite({
        spriteId: "s-1",
        workItemId: "req-1-pm_snapshot",
        workspace,
        write: (line) => void events.push(JSON.parse(line.slice(line.indexOf("{"))) as never),
      });
      const branch = "pmagent/layer_b/doc_update/req-1";
      const refs = {
        branch,
        commit: "0123456789abcdef0123",
        pull_request: "3",
        artifacts: [{ type: "artifact", kind: "doc_update_review_v1", ref: "review.json", url: null }],
      };
      LANE_SPRITES.gen!({
        sprite,
        role: "Gen",
        workspace,
        project: { root: workspace, configPath: "", config },
        lane,
        entry: { id: "req-1-pm_snapshot", kind: "pm_snapshot_request", payload: { refs }, target_docs: [] },
        cycleId: "req-1",
        branch,
        base: "main",
        onCycleBranch: true,
        entryFile: "",
      });
      expect(events.map((e) => e.event_type)).toEqual(["PHASE_STARTED", "ARTIFACT", "PHASE_FINISHED", "COMPLETED"]);
      const rel = (events[1]!.payload.metadata as { path: string }).path;
      const text = readFileSync(join(workspace, rel), "utf8");
      expect(text).toContain(`1 update(s) accepted and applied on branch \`${branch}\` (commit 0123456789ab)`);
      expect(text).toContain("- Pull request #3 is open for review.");
      expect(events[3]!.payload).toMatchObject({
        status: "success",
        summary: `PM snapshot of req-1: ${rel} (committed onto the cycle's branch ${branch} with this run)`,
      });
      // Gen commits nothing itself here: the run's hand-on does.
      expect(execFileSync("git", ["status", "--porcelain"], { cwd: workspace, encoding: "utf8" })).toContain(
        "?? reports/",
      );
    } finally {
      rmSync(workspace, { recursive: true, force: true });
    }
  });

  it("has current state, goals, gaps (with rejected updates), next actions and evidence, and the spec's Markdown view", () => {
    const review = DocUpdateReviewSchema.parse({
      schema_version: "doc_update_review_v1",
      project_id: "demo",
      proposal_ref: "reports/doc_update_proposals/2026-11-20-req-1/doc_update_proposal_v1.json",
      generated_at: NOW.toISOString(),
      review_mode: "auto_accept_v1",
      overall_assessment: { summary: "s", risk_level: "medium" },
      update_judgements: [
        { target_path: "STATE/current_state.md", decision: "accept", reason: "passes", update_id: "u1" },
        { target_path: "docs/guide.md", decision: "reject", reason: "too short", update_id: "u2" },
      ],
      target_files: [
        {
          target: { path: "STATE/current_state.md" },
          change_type: "replace_whole_file",
          final_content: "x.",
          risk: "low",
        },
      ],
    });
    const snap = snapshotFor({
      projectId: "demo",
      cycleId: "req-1",
      now: NOW,
      lane: "layer_b/doc_update",
      stateFile: "STATE/current_state.md",
      stateText:
        "# State\n\n## Layer B\n\nThe lane works.\n\n### Goals\n\n- Ship v1\n\n### Gaps\n\n- No guide\n- [x] Closed gap\n",
      review,
      reviewPath: "reports/doc_update_reviews/2026-11-20-req-1/doc_update_review_v1.json",
      branch: "doc-update/req-1",
      commit: "0123456789abcdef0123",
      pullRequest: "7",
    });
    expect(snap.current.bullets.slice(0, 3)).toEqual([
      "Lane layer_b/doc_update: 1 update(s) accepted and applied on branch `doc-update/req-1` (commit 0123456789ab), 1 rejected.",
      "Pull request #7 is open for review.",
      "STATE/current_state.md, Layer B: The lane works.",
    ]);
    expect(snap.goals).toEqual({ short_term: ["Ship v1"], mid_term: [] });
    expect(snap.gaps).toEqual(["No guide", "Update u2 to docs/guide.md was rejected: too short."]);
    expect(snap.next_actions.map((a) => [a.title, a.links, a.status])).toEqual([
      ["Review and merge pull request #7", ["#7"], "todo"],
      ["Rework the update of docs/guide.md", [], "todo"],
      ["Close the first open gap", [], "todo"],
    ]);
    expect(snap.evidence.map((e) => [e.kind, e.path])).toEqual([
      ["state", "STATE/current_state.md"],
      ["report", "reports/doc_update_reviews/2026-11-20-req-1/doc_update_review_v1.json"],
    ]);
    const md = snapshotMarkdown(snap);
    // The spec's six sections, in order.
    expect(md.split("\n").filter((l) => l.startsWith("## "))).toEqual([
      "## 1. Current（C: 現在地）",
      "## 2. Goals（G: ゴール）",
      "## 3. Gap（δ: ギャップ）",
      "## 4. Next 3（この1〜2週間でやるべきこと）",
      "## 5. Evidence（このスナップショットの根拠）",
      "## 6. Notes（補足）",
    ]);
    expect(md).toContain(
      "1. Review and merge pull request #7\n   - It applies STATE/current_state.md.\n   - 関連: STATE/current_state.md, reports/doc_update_reviews/2026-11-20-req-1/doc_update_review_v1.json, #7\n",
    );
  });
});

describe("Hana: the router of the roles contract (§3.6)", () => {
  /** Run Hana on one entry; her events, or the error she throws. */
  function hana(kind: string, payload: Record<string, unknown>, id = "owner-1") {
    const events: Array<{ event_type: string; payload: Record<string, unknown> }> = [];
    const sprite = new Sprite({
      spriteId: "s-1",
      workItemId: id,
      workspace: tmpdir(),
      write: (line) => void events.push(JSON.parse(line.slice(line.indexOf("{"))) as never),
    });
    let error: (Error & { code?: string }) | undefined;
    try {
      LANE_SPRITES.hana!({
        sprite,
        role: "Hana",
        workspace: tmpdir(),
        project: { root: tmpdir(), configPath: "", config },
        lane,
        entry: { id, kind, payload, target_docs: [] },
        cycleId: cycleRootId(lane, id),
        branch: "doc-update/x",
        base: undefined,
        onCycleBranch: false,
        entryFile: "",
      });
    } catch (err) {
      error = err as Error & { code?: string };
    }
    return { events, error, completed: events.find((e) => e.event_type === "COMPLETED")?.payload };
  }

  it("hana_task with target Aya: routes it as the owner wrote it (her summary is the owner's, not hers)", () => {
    const { completed, events } = hana("hana_task", {
      target: "Aya",
      summary: "STATE を今の運用に合わせて整えたい",
      details: { hints: ["as_of_date"] },
    });
    expect(completed).toMatchObject({ status: "success", summary: "STATE を今の運用に合わせて整えたい" });
    expect(events.find((e) => e.payload.kind === "route")?.payload.message).toBe(
      "routing hana_task owner-1 to Aya as doc_update_proposal_request",
    );
  });

  it("hana_task with target Kai: an analysis request to Kai, passing the referenced artifacts on", () => {
    const { completed, events } = hana("hana_task", {
      target: "Kai",
      refs: {
        artifacts: [
          {
            type: "artifact",
            kind: "doc_update_review_v1",
            ref: "reports/doc_update_reviews/2026-11-20-req-1.json",
            url: null,
          },
        ],
      },
    });
    expect(completed).toMatchObject({ status: "success", summary: "hana_task owner-1 routed to Kai" });
    expect(events.find((e) => e.payload.kind === "route")?.payload.message).toBe(
      "routing hana_task owner-1 to Kai as hana_to_kai_analysis_request",
    );
    expect(events.filter((e) => e.event_type === "ARTIFACT").map((e) => [e.payload.kind, e.payload.ref])).toEqual([
      ["doc_update_review_v1", "reports/doc_update_reviews/2026-11-20-req-1.json"],
    ]);
  });

  it("pm_snapshot_done: tells Human where the snapshot and the pull request are", () => {
    const refs = {
      artifacts: [
        { type: "artifact", kind: "pm_snapshot", ref: "reports/pm_snapshots/2026-11-20-req-1.md" },
        { type: "artifact", kind: "pull_request", ref: "7" },
      ],
    };
    const { completed, events } = hana("pm_snapshot_done", { refs }, "req-1-review-apply-pm_snapshot-done");
    expect(completed).toMatchObject({
      status: "success",
      summary:
        "doc_update cycle req-1 is done: pull request #7 to review, PM snapshot reports/pm_snapshots/2026-11-20-req-1.md",
    });
    expect(events.filter((e) => e.event_type === "ARTIFACT").map((e) => e.payload.kind)).toEqual([
      "pm_snapshot",
      "pull_request",
    ]);
  });

  it("pm_snapshot_done with the pull request only in the supervisor's refs (the cycle's): names it", () => {
    const refs = {
      branch: "pmagent/layer_b/doc_update/req-1",
      pull_request: "4",
      artifacts: [{ type: "artifact", kind: "pm_snapshot", ref: "reports/pm_snapshots/2026-11-20-req-1.md" }],
    };
    const { completed } = hana("pm_snapshot_done", { refs }, "req-1-review-apply-pm_snapshot-done");
    expect(completed).toMatchObject({
      status: "success",
      summary:
        "doc_update cycle req-1 is done: pull request #4 to review, PM snapshot reports/pm_snapshots/2026-11-20-req-1.md",
    });
  });

  it("hana_analysis_result: passes Kai's result on to Human without rewriting it", () => {
    const { completed } = hana(
      "hana_analysis_result",
      { summary: "u2 shrinks the guide; low risk otherwise", details: { risk_level: "low" } },
      "owner-1-analysis-result",
    );
    expect(completed).toMatchObject({
      status: "success",
      summary: "analysis result owner-1-analysis-result: u2 shrinks the guide; low risk otherwise",
    });
  });

  it.each([
    [
      {},
      "route_target_missing",
      "hana_task owner-1 has no payload.target: Hana routes a task only where it says (one of Aya, Kai)",
    ],
    [
      { target: "Gen" },
      "route_unknown",
      'hana_task owner-1 names target "Gen", and no route of Hana\'s takes it (routes: Aya, Kai)',
    ],
  ])("refuses a hana_task she cannot route (%j) instead of guessing", (payload, code, message) => {
    const { error, events } = hana("hana_task", payload);
    expect(error).toMatchObject({ code, message });
    expect(events.some((e) => e.event_type === "COMPLETED")).toBe(false);
  });

  it("refuses a kind she does not pick", () => {
    expect(hana("doc_update_review_request", {}).error).toMatchObject({
      code: "unknown_kind",
      message:
        "Hana does not handle entries of kind doc_update_review_request (owner-1): she picks hana_task, pm_snapshot_done, hana_analysis_result",
    });
  });
});

describe("Tsugu and Gen resumed after a failed OPEN_PR", () => {
  it.each([
    ["tsugu", "Tsugu", "OPEN_PR failed: push refused by the forge"],
    ["gen", "Gen", "OPEN_PR for the PM snapshot failed: push refused by the forge"],
  ])("%s completes with failure and the supervisor's reason", (name, role, summary) => {
    const workspace = mkdtempSync(join(tmpdir(), "pmagent-pr-failed-"));
    try {
      writeResume(workspace, {
        work_item_id: "req-1-x",
        checkpoint_id: "chk_1",
        inputs: {},
        context: { error: { action: "OPEN_PR", message: "push refused by the forge" } },
      });
      const events: Array<{ event_type: string; payload: Record<string, unknown> }> = [];
      const sprite = new Sprite({
        spriteId: "s-1",
        workItemId: "req-1-x",
        workspace,
        write: (line) => void events.push(JSON.parse(line.slice(line.indexOf("{"))) as never),
      });
      LANE_SPRITES[name]!({
        sprite,
        role,
        workspace,
        project: { root: workspace, configPath: "", config },
        lane,
        entry: { id: "req-1-x", kind: "k", payload: {}, target_docs: [] },
        cycleId: "req-1",
        branch: "doc-update/req-1",
        base: undefined,
        onCycleBranch: false,
        entryFile: "",
      });
      expect(events.map((e) => [e.event_type, e.payload.status, e.payload.summary])).toEqual([
        ["COMPLETED", "failure", summary],
      ]);
    } finally {
      rmSync(workspace, { recursive: true, force: true });
    }
  });
});

describe("pmagent lane-sprite", () => {
  it("refuses an unknown sprite, naming the built-in ones", async () => {
    const r = await runCli(["lane-sprite", "kai"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('unknown lane sprite "kai": use one of aya, sho, tsugu, gen, hana');
  });

  it("refuses to run outside a supervised run", async () => {
    const env = { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "" };
    const r = await runCli(["lane-sprite", "aya"], { env });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      "a lane sprite runs under the supervisor (pmagent worker or pmagent run --entry): LATTICE_ROLE, LATTICE_WORKSPACE and PMAGENT_ENTRY_FILE are not all set",
    );
  });
});
