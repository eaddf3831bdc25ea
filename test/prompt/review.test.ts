import { describe, expect, it } from "vitest";
import { reviewOutcome } from "../../src/prompt/index.js";

const review = (decision: "approve" | "revise" | "block") => ({
  level: "hard_gate",
  decision,
  summary: `decided ${decision}`,
  claims: [],
  planning_feedback: [],
});

describe("reviewOutcome", () => {
  it("hard_gate: a block fails the step; revise asks for a revision; approve passes", () => {
    expect(reviewOutcome("hard_gate", review("block"))).toEqual({
      level: "hard_gate",
      decision: "block",
      result: "failure",
      revision_requested: false,
      reason: "decided block",
    });
    expect(reviewOutcome("hard_gate", review("revise"))).toMatchObject({ result: "success", revision_requested: true });
    expect(reviewOutcome("hard_gate", review("approve"))).toMatchObject({
      result: "success",
      revision_requested: false,
    });
  });

  it("soft_gate: never fails, asks for a revision unless approved", () => {
    expect(reviewOutcome("soft_gate", review("block"))).toEqual({
      level: "soft_gate",
      decision: "block",
      result: "success",
      revision_requested: true,
      reason: "decided block",
    });
    expect(reviewOutcome("soft_gate", review("revise"))).toMatchObject({ result: "success", revision_requested: true });
    expect(reviewOutcome("soft_gate", review("approve"))).toMatchObject({
      result: "success",
      revision_requested: false,
    });
  });

  it("feedback: never blocks and never holds the lane", () => {
    for (const d of ["approve", "revise", "block"] as const)
      expect(reviewOutcome("feedback", review(d))).toMatchObject({
        level: "feedback",
        result: "success",
        revision_requested: false,
      });
  });

  it("the configured level wins over the level the model states", () => {
    expect(reviewOutcome("hard_gate", { ...review("block"), level: "feedback" })).toMatchObject({
      level: "hard_gate",
      result: "failure",
    });
  });

  it("refuses an answer without a decision", () => {
    expect(() => reviewOutcome("hard_gate", { summary: "?" })).toThrow(
      /^reviewer answer is invalid:\n {2}\$\.decision: Invalid option: expected one of "approve"\|"revise"\|"block"$/,
    );
  });
});
