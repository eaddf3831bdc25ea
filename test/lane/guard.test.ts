import { describe, expect, it } from "vitest";
import { countLines, endsMidSentence, guardUpdate, pathRefusal, type DocUpdate } from "../../src/lane/index.js";

const ALLOWED = ["STATE/", "docs/"];
const doc = (n: number) => `${Array.from({ length: n }, (_, i) => `Line ${i + 1} is a full sentence.`).join("\n")}\n`;
const update = (fields: Partial<DocUpdate>): DocUpdate => ({
  id: "u1",
  path: "STATE/current_state.md",
  reason: "r",
  change_type: "replace",
  suggested_markdown: "x.",
  ...fields,
});

describe("truncation guard: 70% of the lines", () => {
  it("accepts a replacement that keeps exactly 70% of the lines", () => {
    const g = guardUpdate(update({ suggested_markdown: doc(7) }), doc(10), ALLOWED);
    expect(g.reasons).toEqual([]);
    expect([g.linesBefore, g.linesAfter]).toEqual([10, 7]);
    expect(g.after).toBe(doc(7));
  });

  it("refuses a replacement below 70% of the lines, naming the counts", () => {
    const g = guardUpdate(update({ suggested_markdown: doc(6) }), doc(10), ALLOWED);
    expect(g.reasons).toEqual([
      "would shrink STATE/current_state.md from 10 to 6 lines (below 70% of its lines): a truncated document",
    ]);
  });

  it("never refuses an append for size, and appends after one blank line", () => {
    const g = guardUpdate(
      update({ change_type: "append", suggested_markdown: "## New\n\nMore text." }),
      "# Title\n\nBody.\n\n\n",
      ALLOWED,
    );
    expect(g.reasons).toEqual([]);
    expect(g.after).toBe("# Title\n\nBody.\n\n## New\n\nMore text.\n");
  });

  it("counts lines without the final newline and with CRLF", () => {
    expect(countLines("")).toBe(0);
    expect(countLines("a")).toBe(1);
    expect(countLines("a\nb\n")).toBe(2);
    expect(countLines("a\r\nb\r\n")).toBe(2);
  });
});

describe("truncation guard: ending mid-sentence", () => {
  it.each([
    ["prose cut off", "# T\n\nThe review guard refuses updates that", true],
    ["prose ending with a comma", "# T\n\nFirst,", true],
    ["an unclosed code block", "# T\n\n```sh\nnpm test\n", true],
    ["a full sentence", "# T\n\nThe guard refuses truncation.", false],
    ["a Japanese sentence", "# T\n\n更新しました。", false],
    ["a heading", "# T\n\n## Next", false],
    ["a list item", "# T\n\n- Gap: flaky tests", false],
    ["a table row", "| a | b |", false],
    ["a closed code block", "```\ncode\n```", false],
    ["trailing blank lines after a sentence", "Done.\n\n\n", false],
  ])("%s → %s", (_, text, mid) => {
    expect(endsMidSentence(text)).toBe(mid);
  });

  it("refuses an update that leaves the document ending mid-sentence", () => {
    const g = guardUpdate(update({ change_type: "append", suggested_markdown: "The lane now" }), doc(3), ALLOWED);
    expect(g.reasons).toEqual(["would leave STATE/current_state.md ending mid-sentence or inside an open code block"]);
  });

  it("gives both reasons for a truncating replacement that also ends mid-sentence", () => {
    const g = guardUpdate(
      update({ path: "docs/guide.md", suggested_markdown: "# Guide\n\nThis guide explains how" }),
      doc(15),
      ALLOWED,
    );
    expect(g.reasons).toHaveLength(2);
    expect(g.reasons[0]).toContain("from 15 to 3 lines");
    expect(g.reasons[1]).toContain("ending mid-sentence");
  });
});

describe("truncation guard: allowed paths", () => {
  it.each([
    ["README.md", 'path "README.md" is outside the allowed paths (STATE/, docs/)'],
    ["STATEMENT.md", 'path "STATEMENT.md" is outside the allowed paths (STATE/, docs/)'],
    ["docs/../src/x.ts", 'path "docs/../src/x.ts" is outside the allowed paths (STATE/, docs/)'],
    ["../outside.md", 'path "../outside.md" leaves the repository'],
    ["/etc/passwd", 'path "/etc/passwd" leaves the repository'],
    ["docs\\x.md", "path \"docs\\x.md\" has a backslash or NUL: use a repository-relative path with '/'"],
  ])("refuses %s", (path, reason) => {
    expect(pathRefusal(path, ALLOWED)).toBe(reason);
    const g = guardUpdate(update({ path }), "old.\n", ALLOWED);
    expect(g.reasons).toEqual([reason]);
    expect(g.after).toBeUndefined();
  });

  it("accepts paths under an allowed directory and an allowed file named exactly", () => {
    expect(pathRefusal("docs/a/b.md", ALLOWED)).toBeNull();
    expect(pathRefusal("./STATE/current_state.md", ALLOWED)).toBeNull();
    expect(pathRefusal("CHANGELOG.md", ["CHANGELOG.md"])).toBeNull();
    expect(pathRefusal("CHANGELOG.md.bak", ["CHANGELOG.md"])).not.toBeNull();
    expect(pathRefusal(".git/config", [".git"])).toBe('path ".git/config" is inside .git');
  });
});

describe("change types", () => {
  it("refuses to create an existing file, and to append to or replace a missing one", () => {
    expect(guardUpdate(update({ change_type: "create" }), "x.\n", ALLOWED).reasons).toEqual([
      'STATE/current_state.md already exists: use change_type "replace" or "append"',
    ]);
    expect(guardUpdate(update({ change_type: "append" }), null, ALLOWED).reasons).toEqual([
      'STATE/current_state.md does not exist: use change_type "create"',
    ]);
    expect(guardUpdate(update({ change_type: "replace" }), null, ALLOWED).reasons).toEqual([
      'STATE/current_state.md does not exist: use change_type "create"',
    ]);
  });

  it("creates a new file with a final newline", () => {
    const g = guardUpdate(
      update({ path: "docs/new.md", change_type: "create", suggested_markdown: "# New\n\nHello." }),
      null,
      ALLOWED,
    );
    expect(g).toEqual({ reasons: [], after: "# New\n\nHello.\n", linesBefore: null, linesAfter: 3 });
  });
});

describe("a section edit (the origin's edit_paragraph)", () => {
  const state =
    "# State\n\n## Current\n\nOld one.\nOld two.\n\n### Detail\n\nKept? No: inside Current.\n\n## Goals\n\n- Ship.\n";

  it("replaces the named section to the next heading of its level, keeping the heading when the suggestion has none", () => {
    const g = guardUpdate(
      update({ change_type: "section", section_hint: "Current", suggested_markdown: "New one.\nNew two.\nNew three." }),
      state,
      ALLOWED,
    );
    expect(g.reasons).toEqual([]);
    expect(g.after).toBe("# State\n\n## Current\n\nNew one.\nNew two.\nNew three.\n\n## Goals\n\n- Ship.\n");
  });

  it("replaces the heading too when the suggestion starts with one; a code fence's '#' lines are no headings", () => {
    const fenced = "# State\n\n## Current\n\n```sh\n# Goals\n```\n\n## Goals\n\n- Ship.\n";
    const g = guardUpdate(
      update({ change_type: "section", section_hint: "Goals", suggested_markdown: "## Goals (G)\n\n- Ship v2." }),
      fenced,
      ALLOWED,
    );
    expect(g.after).toBe("# State\n\n## Current\n\n```sh\n# Goals\n```\n\n## Goals (G)\n\n- Ship v2.\n");
  });

  it.each([
    [
      { section_hint: undefined },
      "an edit of STATE/current_state.md names no section (section_hint): say which heading it replaces, or append",
    ],
    [
      { section_hint: "Risks" },
      'STATE/current_state.md has no section "Risks": name one of its headings in section_hint',
    ],
  ])("refuses %j, saying what to fix", (fields, reason) => {
    expect(
      guardUpdate(update({ change_type: "section", suggested_markdown: "Text.", ...fields }), state, ALLOWED).reasons,
    ).toEqual([reason]);
  });
});
