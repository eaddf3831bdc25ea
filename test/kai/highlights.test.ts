import { describe, expect, it } from "vitest";
import { docUpdateLane, parseConfig } from "../../src/config/index.js";
import {
  completedInStateDoc,
  isLaneApply,
  parseSections,
  type GitCommit,
  type StateDocEvidence,
} from "../../src/kai/index.js";
import { changedSections } from "../../src/kai/reports/highlights.js";
import { buildWhatChanged } from "../../src/kai/reports/what-changed.js";
import { findThemes, isTestPath, themeHighlight } from "../../src/kai/reports/themes.js";
import { changeUnits, firstSentence, titleScope } from "../../src/kai/reports/units.js";
import { entry } from "./fixtures.js";

const lane = parseConfig(JSON.stringify({ project_id: "vpm-mini", lanes: [docUpdateLane()] }), "t").lanes[0]!;

describe("highlight helpers", () => {
  it("a title's scope groups a capability's PRs; bare conventional types and plain titles group nothing", () => {
    expect(titleScope("kai: rank highlights")).toBe("kai");
    expect(titleScope("feat(kai): rank highlights")).toBe("kai");
    expect(titleScope("feat!: drop v0")).toBeNull();
    expect(titleScope("fix: typo")).toBeNull();
    expect(titleScope("Update README")).toBeNull();
    expect(titleScope('Revert "kai: x"')).toBeNull();
  });

  it("a summary sentence comes from the body's first prose line, without list marks or trailers", () => {
    expect(firstSentence("- Adds the reader. Then more.\n\nSigned-off-by: A")).toBe("Adds the reader.");
    expect(firstSentence("Co-authored-by: B\nWhy: speed")).toBe("Why: speed.");
    expect(firstSentence("")).toBe("");
    expect(firstSentence("基盤は新しいクラスタに移行済み。次は監視。")).toBe("基盤は新しいクラスタに移行済み。");
    expect(firstSentence("x".repeat(300))).toHaveLength(220);
  });

  it("sections changed between two versions: added, changed, removed", () => {
    const before = parseSections("# S\n\n## A\n\none\n\n## B\n\ntwo\n");
    const after = parseSections("# S\n\n## A\n\none, edited\n\n## C\n\nthree\n");
    expect(changedSections(before, after).map((c) => [c.title, c.change])).toEqual([
      ["A", "changed"],
      ["C", "added"],
      ["B", "removed"],
    ]);
  });

  it("an apply of the lane's proposal is told from other STATE edits", () => {
    expect(isLaneApply("Apply doc_update proposal cycle-2 to STATE", lane)).toBe(true);
    expect(isLaneApply("Layer B: applied review edits", lane)).toBe(true);
    expect(isLaneApply("Update STATE after apply", lane)).toBe(false);
    expect(isLaneApply("doc_update: propose cycle-2", lane)).toBe(false);
  });

  it("the cycles a lane section calls completed, and none from other sections", () => {
    const doc = (text: string): StateDocEvidence => ({
      path: "STATE/x.md",
      exists: true,
      revision: "r",
      updated_at: null,
      sections: parseSections(text),
    });
    expect(
      completedInStateDoc(
        doc(
          "# S\n\n## Layer B / doc_update\n\nCycle-1 completed. cycle 2 applied via #9. Cycle-3 in progress.\n\n## Layer A\n\nCycle-7 done.\n",
        ),
        lane,
      ),
    ).toEqual([1, 2]);
    expect(completedInStateDoc(doc("# S\n\n## Other\n\nCycle-1 completed.\n"), lane)).toEqual([]);
  });
});

const commit = (n: number, title: string, files: Array<[string, "added" | "modified"]>, lines: number): GitCommit => ({
  sha: `${n}`.padStart(40, "0"),
  parents: ["p"],
  committed_at: new Date(Date.UTC(2026, 2, 2, n)).toISOString(),
  author: "Dev",
  subject: `${title} (#${n})`,
  body: `Why ${n}.`,
  is_merge: false,
  pr_number: n,
  files: files.map(([path, change]) => ({ path, change, old_path: null })),
  lines_changed: lines,
});

describe("themes: the window's PRs grouped into stories", () => {
  it("one capability whatever its PRs' titles say, when they share its directory; a changelog every PR touches links nothing", () => {
    const units = changeUnits([
      commit(
        1,
        "hana: add the routing table",
        [
          ["src/hana/index.ts", "added"],
          ["CHANGELOG.md", "modified"],
        ],
        120,
      ),
      commit(
        2,
        "Wire the assistant to the board",
        [
          ["src/hana/board.ts", "added"],
          ["CHANGELOG.md", "modified"],
        ],
        80,
      ),
      commit(
        3,
        "hana: handle an empty board",
        [
          ["src/hana/index.ts", "modified"],
          ["CHANGELOG.md", "modified"],
        ],
        20,
      ),
      commit(
        4,
        "Tighten the timeout in mod3",
        [
          ["src/core/mod3.ts", "modified"],
          ["CHANGELOG.md", "modified"],
        ],
        2,
      ),
      commit(
        5,
        "Log the retry count in mod7",
        [
          ["src/core/mod7.ts", "modified"],
          ["CHANGELOG.md", "modified"],
        ],
        2,
      ),
      commit(
        6,
        "Fix broken link in g1",
        [
          ["docs/guide/g1.md", "modified"],
          ["CHANGELOG.md", "modified"],
        ],
        2,
      ),
    ]);
    const { themes, rest } = findThemes(units);
    expect(themes.map((t) => [t.kind, t.name, t.units.map((u) => u.pr)])).toEqual([
      ["capability", "hana", [1, 2, 3]],
      ["maintenance", "core", [4, 5]],
    ]);
    expect(rest.map((u) => u.pr)).toEqual([6]);
    expect(themeHighlight(themes[0]!).summary).toBe(
      '3 changes built hana: 2 new files, 220 lines changed. It began with PR #1 "hana: add the routing table" and ended with PR #3 "hana: handle an empty board". Why 1.',
    );
  });

  it("work on tests and fixtures alone, however large, ranks below the smallest capability and stays out of it", () => {
    const units = changeUnits([
      commit(1, "test: regenerate the recorded board fixtures", [["test/fixtures/board.json", "added"]], 4000),
      commit(2, "Add recorded board responses for the forge tests", [["test/fixtures/forge.json", "added"]], 3000),
      commit(3, "board: add the exporter", [["src/board/export.ts", "added"]], 40),
      commit(
        4,
        "board: export from the CLI",
        [
          ["src/board/cli.ts", "added"],
          ["test/board/cli.test.ts", "added"],
        ],
        30,
      ),
    ]);
    const { themes } = findThemes(units);
    const ranked = [...themes].sort((a, b) => b.significance - a.significance);
    expect(ranked.map((t) => [t.kind, t.units.map((u) => u.pr)])).toEqual([
      ["capability", [3, 4]],
      ["maintenance", [1, 2]],
    ]);
    expect(themeHighlight(ranked[1]!).title).toBe("Tests only: 2 changes to 2 test files");
    expect(isTestPath("test/fixtures/board.json")).toBe(true);
    expect(isTestPath("src/board/cli.test.ts")).toBe(true);
    expect(isTestPath("docs/specs/kai.md")).toBe(false);
  });

  it("several cycles the board completed in one window are one highlight that lists them", () => {
    const cycle = (root: string, day: number) => [
      entry(
        root,
        "Human",
        "Aya",
        "doc_update_proposal_request",
        "done",
        `2026-01-0${day}T09:00:00Z`,
        `2026-01-0${day}T10:00:00Z`,
      ),
      entry(
        `${root}-review`,
        "Aya",
        "Sho",
        "doc_update_review_request",
        "done",
        `2026-01-0${day}T10:00:00Z`,
        `2026-01-0${day}T11:00:00Z`,
      ),
      entry(
        `${root}-review-apply`,
        "Sho",
        "Tsugu",
        "doc_update_apply_request",
        "done",
        `2026-01-0${day}T11:00:00Z`,
        `2026-01-0${day}T12:00:00Z`,
      ),
      entry(
        `${root}-review-apply-pm_snapshot`,
        "Tsugu",
        "Gen",
        "pm_snapshot_request",
        "done",
        `2026-01-0${day}T12:00:00Z`,
        `2026-01-0${day}T13:00:00Z`,
      ),
      entry(
        `${root}-review-apply-pm_snapshot-done`,
        "Gen",
        "Hana",
        "pm_snapshot_done",
        "done",
        `2026-01-0${day}T13:00:00Z`,
        `2026-01-0${day}T14:00:00Z`,
      ),
    ];
    const board = [...cycle("req-1", 2), ...cycle("req-2", 4), ...cycle("req-3", 6)];
    const data = buildWhatChanged(
      {
        project_id: "vpm-mini",
        lane,
        humans: ["Human"],
        since: new Date("2026-01-03T00:00:00Z"),
        until: new Date("2026-01-08T00:00:00Z"),
        max_highlights: 5,
      },
      { git: null, state_doc: null, board, runs: [], github: null, notes: [] },
    );
    const completed = data.highlights.filter((h) => /completed/.test(h.title));
    expect(completed).toHaveLength(1);
    expect(completed[0]!.title).toMatch(/^layer_b\/doc_update: 2 cycles completed \(\S+ and \S+\)$/);
    expect(completed[0]!.evidence.map((e) => e.id).filter((id) => /^req-\d+$/.test(id))).toEqual(["req-2", "req-3"]);
    expect(completed[0]!.summary).toMatch(
      /^\S+ \(root entry req-2: .+\) and \S+ \(root entry req-3: .+\) went through the lane's roles to the end\. The last, \S+, completed at 2026-01-06T14:00:00Z with Hana's pm_snapshot_done\.$/,
    );
  });
});
