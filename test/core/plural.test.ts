import { describe, expect, it } from "vitest";
import { plural } from "../../src/core/index.js";

describe("plural", () => {
  it("counts a noun: one, none and many, with English's regular plurals", () => {
    expect([plural(1, "entry"), plural(6, "entry"), plural(0, "entry")]).toEqual(["1 entry", "6 entries", "0 entries"]);
    expect([plural(1, "workflow run"), plural(2, "workflow run")]).toEqual(["1 workflow run", "2 workflow runs"]);
    expect([plural(2, "day"), plural(2, "PR"), plural(3, "box"), plural(2, "patch")]).toEqual([
      "2 days",
      "2 PRs",
      "3 boxes",
      "2 patches",
    ]);
  });

  it("takes an irregular plural when given", () => {
    expect([plural(1, "child", "children"), plural(2, "child", "children")]).toEqual(["1 child", "2 children"]);
  });
});
