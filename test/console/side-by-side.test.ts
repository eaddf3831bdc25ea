import { describe, expect, it } from "vitest";
import { sideBySide } from "../../src/console/prs.js";

describe("a file's diff side by side", () => {
  it("numbers both sides from the hunk header, keeps context on both and pairs each removed run with the added run after it", () => {
    const diff = [
      "diff --git a/STATE.md b/STATE.md",
      "--- a/STATE.md",
      "+++ b/STATE.md",
      "@@ -10,5 +10,6 @@ ## レイヤーB",
      " keep",
      "-old one",
      "-old two",
      "+new one",
      " middle",
      "+added alone",
      "+and another",
      " tail",
      "\\ No newline at end of file",
    ].join("\n");
    expect(sideBySide(diff)).toEqual([
      { kind: "hunk", old: null, new: { n: 0, text: "@@ -10,5 +10,6 @@ ## レイヤーB" } },
      { kind: "same", old: { n: 10, text: "keep" }, new: { n: 10, text: "keep" } },
      { kind: "change", old: { n: 11, text: "old one" }, new: { n: 11, text: "new one" } },
      { kind: "change", old: { n: 12, text: "old two" }, new: null },
      { kind: "same", old: { n: 13, text: "middle" }, new: { n: 12, text: "middle" } },
      { kind: "change", old: null, new: { n: 13, text: "added alone" } },
      { kind: "change", old: null, new: { n: 14, text: "and another" } },
      { kind: "same", old: { n: 14, text: "tail" }, new: { n: 15, text: "tail" } },
    ]);
  });

  it("starts numbering again at each hunk and ignores the file header", () => {
    const rows = sideBySide(
      [
        "diff --git a/x b/x",
        "--- a/x",
        "+++ b/x",
        "@@ -1 +1 @@",
        "-a",
        "+b",
        "@@ -40,2 +40,2 @@",
        " c",
        "-d",
        "+e",
      ].join("\n"),
    );
    expect(rows.filter((r) => r.kind !== "hunk").map((r) => [r.old?.n ?? null, r.new?.n ?? null])).toEqual([
      [1, 1],
      [40, 40],
      [41, 41],
    ]);
  });
});
