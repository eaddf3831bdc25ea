import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { docUpdateLane, parseConfig } from "../../src/config/index.js";
import { answer, type KaiResponse, type WhatChanged } from "../../src/kai/index.js";
import { KaiResponseSchema } from "../../src/kai/reports/schema.js";
import { HistoryRepo, type HistoryPr } from "./history.js";

const config = parseConfig(JSON.stringify({ project_id: "vpm-mini", lanes: [docUpdateLane()] }), "test");
const STATE = "STATE/vpm-mini/current_state.md";
const HOUR = 3_600_000;
const START = Date.parse("2026-01-05T00:00:00Z");

function stateText(infra: string, lane: string, gaps: string[]): string {
  return `# vpm-mini state\n\n## Layer A / infra\n\n${infra}\n\n## Layer B / doc_update v1\n\n${lane}\n\n### Gaps\n\n${gaps.map((g) => `- ${g}`).join("\n")}\n`;
}

/**
 * Eight weeks of a project: a squash-merged PR about every 4.8 hours (core tweaks, docs fixes, and
 * every seventh one a CI workflow tweak: noise), and planted among them the weeks' real news.
 */
function history(): { initial: { at: string; files: Record<string, string> }; prs: HistoryPr[] } {
  const files: Record<string, string> = {
    [STATE]: stateText("Infra steady.", "Cycle-1 not started.", ["Cycle-1 not applied yet"]),
    ".github/workflows/ci.yml": "on: push\n",
  };
  for (let i = 0; i < 20; i++) files[`src/core/f${i}.ts`] = `export const f${i} = 0;\n`;
  for (let i = 0; i < 10; i++) files[`docs/guide/g${i}.md`] = `# Guide ${i}\n`;
  const prs: HistoryPr[] = [];
  for (let k = 0; k < 280; k++) {
    const at = new Date(START + k * 4.8 * HOUR + 17 * 60_000).toISOString();
    if (k % 7 === 3)
      prs.push({
        at,
        title: `ci: bump cache key ${k}`,
        body: "Keeps CI caches fresh.",
        files: { ".github/workflows/ci.yml": `on: push\n# cache ${k}\n` },
      });
    else if (k % 5 === 1)
      prs.push({
        at,
        title: `docs: fix typo in guide ${k % 10}`,
        files: { [`docs/guide/g${k % 10}.md`]: `# Guide ${k % 10}\n\nrev ${k}\n` },
      });
    else
      prs.push({
        at,
        title: `core: tune f${k % 20} (${k})`,
        body: `Small tuning of f${k % 20}.`,
        files: { [`src/core/f${k % 20}.ts`]: `export const f${k % 20} = ${k};\n` },
      });
  }
  const day = (d: number, h: number) => new Date(START + d * 24 * HOUR + h * HOUR).toISOString();
  // Week 3 (Jan 19–26): the lane's first cycle, proposal → review → apply to STATE, by PRs.
  prs.push(
    {
      at: day(15, 10),
      title: "Add doc_update proposal for cycle-1",
      body: "Aya's proposal for the Layer B section.",
      files: { "reports/doc_update_proposals/cycle-1.json": "{}\n" },
    },
    {
      at: day(16, 10),
      title: "Review doc_update proposal cycle-1",
      body: "Sho approves with two edits.",
      files: { "reports/doc_update_reviews/cycle-1.json": "{}\n" },
    },
    {
      at: day(17, 15),
      title: "Apply doc_update proposal cycle-1 to STATE",
      body: "Tsugu applies the reviewed proposal, so the Layer B section finally describes the doc_update lane as it runs.\n\n- updates Layer B\n- refreshes the Gap list",
      files: {
        [STATE]: stateText("Infra steady.", "Cycle-1 applied: the doc_update lane runs end to end.", [
          "PM snapshot lags Layer B cycle-1",
        ]),
      },
    },
  );
  // Week 5 (Feb 2–9): a capability built across five PRs.
  const kai = [
    "add the lane status reader",
    "rank what changed by significance",
    "read STATE per project",
    "count windows in the project's zone",
    "document the answers",
  ];
  kai.forEach((what, i) => {
    const path = i === 4 ? "docs/specs/kai-answers.md" : `src/kai/part${i}.ts`;
    prs.push({
      at: day(28 + i, 11),
      title: `kai: ${what}`,
      body:
        i === 0
          ? "Kai answers a PM's two questions from the repository alone.\n\nFirst of five."
          : `Part ${i + 1} of Kai.`,
      files: { [path]: `// ${what}\n` },
    });
  });
  // Week 6 (Feb 9–16): a revert, another section of STATE, and a new workflow.
  prs.push(
    {
      at: day(36, 9),
      title: 'Revert "core: tune f1 (201)"',
      body: "The tuning broke the nightly import.",
      files: { "src/core/f1.ts": "export const f1 = 0;\n" },
    },
    {
      at: day(37, 9),
      title: "Record the infra migration in STATE",
      body: "Layer A moved to the new runners.",
      files: {
        [STATE]: stateText("Infra on the new runners.", "Cycle-1 applied: the doc_update lane runs end to end.", [
          "PM snapshot lags Layer B cycle-1",
        ]),
      },
    },
    {
      at: day(38, 9),
      title: "ci: add the doc_update workflow",
      body: "Runs the lane on board comments.",
      files: { ".github/workflows/doc_update.yml": "on: issue_comment\n" },
    },
  );
  return { initial: { at: new Date(START - 24 * HOUR).toISOString(), files }, prs };
}

const request = (as_of: string) => ({
  version: "kai_request_v1",
  request_id: "req-history",
  from: { actor_type: "human" },
  project_id: "vpm-mini",
  type: "what_changed",
  lane: { layer: "layer_b", name: "doc_update" },
  params: { as_of, time_window_days: 7, max_highlights: 5 },
});

describe("what_changed on a generated history of 291 squash-merged PRs", () => {
  let repo: HistoryRepo;
  beforeAll(() => {
    const { initial, prs } = history();
    repo = new HistoryRepo(initial, prs);
  });
  afterAll(() => repo.cleanup());

  async function week(as_of: string): Promise<{ res: KaiResponse; data: WhatChanged }> {
    const res = KaiResponseSchema.parse(
      await answer(request(as_of), {
        config,
        sources: { repo: repo.dir },
        clock: () => Date.parse("2026-04-01T00:00:00Z"),
      }),
    );
    if (res.status !== "ok" || res.payload.kind !== "what_changed_v1") throw new Error(JSON.stringify(res.notes));
    return { res, data: res.payload.data };
  }

  /** Background: the grouped docs fixes and small tweaks, never a story of their own. */
  const background = (data: WhatChanged) =>
    data.highlights.slice(1).every((h) => h.category === "docs" || h.category === "code");

  it("the week of the cycle: its completion first (proposal, review and apply as one), and the lane section's change is its story, not another", async () => {
    const { res, data } = await week("2026-01-26T00:00:00Z");
    const apply = repo.pr("Apply doc_update proposal cycle-1 to STATE");
    expect(data.highlights[0]!.title).toBe(`layer_b/doc_update cycle-1 completed: applied to STATE by PR #${apply}`);
    const cycle = data.highlights[0]!;
    expect(cycle.evidence.filter((e) => e.type === "pr").map((e) => Number(e.id))).toEqual([
      repo.pr("Add doc_update proposal for cycle-1"),
      repo.pr("Review doc_update proposal cycle-1"),
      apply,
    ]);
    expect(cycle.summary).toBe(
      `PR #${apply} "Apply doc_update proposal cycle-1 to STATE" applied the lane's proposal to ${STATE}, completing cycle-1. ` +
        `It followed PR #${repo.pr("Add doc_update proposal for cycle-1")} (Add doc_update proposal for cycle-1), PR #${repo.pr("Review doc_update proposal cycle-1")} (Review doc_update proposal cycle-1). ` +
        "Tsugu applies the reviewed proposal, so the Layer B section finally describes the doc_update lane as it runs.",
    );
    expect(data.highlights.some((h) => h.category === "state_doc")).toBe(false);
    // The week's CI tweaks, typo fixes and small tunings are background, below the news.
    expect(background(data)).toBe(true);
    expect(data.risks.map((r) => r.summary)).toContain(
      `1 gap added to ${STATE} this window: PM snapshot lags Layer B cycle-1`,
    );
    expect(data.open_questions).toEqual([
      'Who closes the new gap "PM snapshot lags Layer B cycle-1", and by when?',
      `1 gap left ${STATE} this window ("Cycle-1 not applied yet"): closed, or only moved?`,
      `PR #${apply} applied the lane's proposal to ${STATE}: have Gen and Hana (pm_snapshot_request, pm_snapshot_done) run since?`,
    ]);
    expect(res.summary_md.split("\n")[1]).toMatch(
      /^- \d+ PRs? merged, \d+ STATE\/docs files? changed, workflow runs not consulted$/,
    );
    expect(res.notes).toContain(
      "Workflow runs were not consulted (no GitHub token and no run records): by_category.workflows is empty for that reason, not because nothing ran",
    );
  });

  it("the week of the new capability: its five PRs as one highlight, first, saying what they added and why", async () => {
    const { data } = await week("2026-02-09T00:00:00Z");
    const top = data.highlights[0]!;
    expect(top.title).toBe("kai: add the lane status reader (5 PRs)");
    expect(top.category).toBe("capability");
    expect(top.evidence.filter((e) => e.type === "pr").map((e) => e.title)).toEqual([
      "kai: add the lane status reader",
      "kai: rank what changed by significance",
      "kai: read STATE per project",
      "kai: count windows in the project's zone",
      "kai: document the answers",
    ]);
    expect(top.summary).toBe(
      `5 changes built kai: 5 new files, 5 lines changed. It began with PR #${repo.pr("kai: add the lane status reader")} "kai: add the lane status reader" and ended with PR #${repo.pr("kai: document the answers")} "kai: document the answers". Kai answers a PM's two questions from the repository alone.`,
    );
    expect(background(data)).toBe(true);
  });

  it("the week of the revert: revert, then the other STATE section, then the new workflow, then the background", async () => {
    const { data } = await week("2026-02-16T00:00:00Z");
    expect(data.highlights.slice(0, 3).map((h) => h.title)).toEqual([
      "Reverted: core: tune f1 (201)",
      "STATE: 1 section changed",
      "New workflow: .github/workflows/doc_update.yml",
    ]);
    expect(data.highlights.slice(3).every((h) => h.category === "docs" || h.category === "code")).toBe(true);
    expect(data.highlights[0]!.summary).toBe(
      `PR #${repo.pr('Revert "core: tune f1 (201)"')} reverted an earlier change. The tuning broke the nightly import.`,
    );
  });

  it("a quiet week: no cycle, no STATE change; the noise stays grouped and no gap is reported again", async () => {
    const { data } = await week("2026-03-02T00:00:00Z");
    expect(data.highlights.some((h) => h.category === "layer_b" || h.category === "state_doc")).toBe(false);
    expect(data.highlights.filter((h) => h.title.startsWith("core:")).map((h) => h.title)).toEqual([
      "core: 24 small changes",
    ]);
    expect(data.highlights.every((h) => h.category === "docs" || h.category === "code")).toBe(true);
    expect(data.risks.map((r) => r.id)).not.toContain("gaps-added");
  });
});
