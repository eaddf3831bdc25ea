import { describe, expect, it } from "vitest";
import { docUpdateLane, parseConfig } from "../../src/config/index.js";
import { completedInStateDoc, isLaneApply, parseSections, type StateDocEvidence } from "../../src/kai/index.js";
import { changedSections } from "../../src/kai/reports/highlights.js";
import { firstSentence, titleScope } from "../../src/kai/reports/units.js";

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
    expect(firstSentence("x".repeat(300))).toHaveLength(220);
  });

  it("sections changed between two versions: added, changed, removed", () => {
    const before = parseSections("# S\n\n## A\n\none\n\n## B\n\ntwo\n");
    const after = parseSections("# S\n\n## A\n\none, edited\n\n## C\n\nthree\n");
    expect(changedSections(before, after).map((c) => [c.title, c.change])).toEqual([["A", "changed"], ["C", "added"], ["B", "removed"]]);
  });

  it("an apply of the lane's proposal is told from other STATE edits", () => {
    expect(isLaneApply("Apply doc_update proposal cycle-2 to STATE", lane)).toBe(true);
    expect(isLaneApply("Layer B: applied review edits", lane)).toBe(true);
    expect(isLaneApply("Update STATE after apply", lane)).toBe(false);
    expect(isLaneApply("doc_update: propose cycle-2", lane)).toBe(false);
  });

  it("the cycles a lane section calls completed, and none from other sections", () => {
    const doc = (text: string): StateDocEvidence => ({ path: "STATE/x.md", exists: true, revision: "r", updated_at: null, sections: parseSections(text) });
    expect(completedInStateDoc(doc("# S\n\n## Layer B / doc_update\n\nCycle-1 completed. cycle 2 applied via #9. Cycle-3 in progress.\n\n## Layer A\n\nCycle-7 done.\n"), lane)).toEqual([1, 2]);
    expect(completedInStateDoc(doc("# S\n\n## Other\n\nCycle-1 completed.\n"), lane)).toEqual([]);
  });
});
