import { describe, expect, it } from "vitest";
import { cycleRootId, defaultConfig, followUpId, parseConfig } from "../../src/config/index.js";

const lane = parseConfig(JSON.stringify(defaultConfig("vpm-mini")), "config").lanes[0]!;

describe("follow-up ids of a lane cycle", () => {
  it("chain as the origin chains them: X → X-review → X-review-apply → …", () => {
    let id = "vpm-mini-docupdate-issue571-1";
    const chain = [];
    for (const suffix of ["-review", "-apply", "-pm_snapshot", "-done"]) chain.push((id = followUpId(lane, id, suffix)));
    expect(chain).toEqual([
      "vpm-mini-docupdate-issue571-1-review",
      "vpm-mini-docupdate-issue571-1-review-apply",
      "vpm-mini-docupdate-issue571-1-review-apply-pm_snapshot",
      "vpm-mini-docupdate-issue571-1-review-apply-pm_snapshot-done",
    ]);
  });

  it("lead back to the cycle's root from the chained and the earlier form", () => {
    for (const id of ["req-1", "req-1-review", "req-1-review-apply", "req-1-apply", "req-1-review-apply-pm_snapshot-done-cycle_done", "req-1-pm_snapshot"]) expect(cycleRootId(lane, id)).toBe("req-1");
    // A suffix alone is not stripped to nothing.
    expect(cycleRootId(lane, "-review")).toBe("-review");
  });
});
