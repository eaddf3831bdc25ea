import { describe, expect, it } from "vitest";
import { githubSlug, listItems, parseSections, Slugger } from "../../src/kai/index.js";

describe("GitHub-style anchors", () => {
  it.each([
    ["Layer B / doc_update v1", "layer-b--doc_update-v1"],
    ["Layer B — doc update", "layer-b--doc-update"],
    ["What's new? (2024)", "whats-new-2024"],
    ["差分（δ）", "差分δ"],
    ["現在の状態: Layer B", "現在の状態-layer-b"],
    ["Привет non-latin 你好", "привет-non-latin-你好"],
    ["😄 emoji", "-emoji"],
    ["x² + 1", "x--1"],
    ["  Trim me  ", "--trim-me--"],
  ])("%s → #%s", (heading, anchor) => {
    expect(githubSlug(heading)).toBe(anchor);
  });

  it("numbers repeated headings -1, -2 and skips anchors already taken", () => {
    const s = new Slugger();
    expect(["Gaps", "Gaps", "Gaps-1", "Gaps", "Other"].map((h) => s.slug(h))).toEqual([
      "gaps",
      "gaps-1",
      "gaps-1-1",
      "gaps-2",
      "other",
    ]);
  });
});

describe("Markdown sections", () => {
  const doc = [
    "# Current state",
    "Intro line.",
    "",
    "## Layer A",
    "a text",
    "```md",
    "## not a heading inside a fence",
    "```",
    "## Layer B / `doc_update` **v1** ##",
    "",
    "- Cycle-1 completed; [PR #849](https://example.invalid/849) merged.",
    "### Gaps",
    "- PM snapshot does not include Layer B yet",
    "- [x] review truncation guard",
    "- [ ] apply allowed paths check",
    "  - nested detail is not a gap of its own",
    "1. numbered gap",
    "### Gaps",
    "## Layer B",
  ].join("\r\n");

  it("finds ATX headings outside fences with levels, lines, parents and deduplicated anchors", () => {
    const sections = parseSections(doc);
    expect(sections.map((s) => [s.level, s.title, s.anchor, s.line, s.parent])).toEqual([
      [1, "Current state", "current-state", 1, null],
      [2, "Layer A", "layer-a", 4, 0],
      [2, "Layer B / doc_update v1", "layer-b--doc_update-v1", 9, 0],
      [3, "Gaps", "gaps", 12, 2],
      [3, "Gaps", "gaps-1", 18, 2],
      [2, "Layer B", "layer-b", 19, 0],
    ]);
    expect(sections[1]!.body).toBe("a text\n```md\n## not a heading inside a fence\n```");
  });

  it("reads a Gap list: top-level items, open tasks kept, done tasks dropped", () => {
    const gaps = parseSections(doc)[3]!;
    expect(listItems(gaps.body)).toEqual([
      "PM snapshot does not include Layer B yet",
      "apply allowed paths check",
      "numbered gap",
    ]);
  });
});
