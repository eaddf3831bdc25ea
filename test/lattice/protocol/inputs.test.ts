import { describe, expect, it } from "vitest";
import { assertInputs, checkInputs, formatInputType, parseInputType } from "../../../src/lattice/index.js";

describe("expected_inputs vocabulary", () => {
  it.each([
    "string",
    "integer",
    "boolean",
    "map",
    "array<string>",
    "array<array<integer>>",
    "array<map>",
    " array< boolean > ",
  ])("parses %s", (t) => {
    const r = parseInputType(t);
    expect(r.ok).toBe(true);
    if (r.ok) expect(formatInputType(r.type)).toBe(t.replace(/\s/g, ""));
  });

  it.each([
    ["number", '"number" is not an input type'],
    ["array", '"array" is not an input type'],
    ["array<>", '"array<>" has an invalid element type: "" is not an input type'],
    ["array<float>", '"array<float>" has an invalid element type: "float" is not an input type'],
    ["array<string", '"array<string" is not an input type'],
    ["String", '"String" is not an input type'],
  ])("refuses %s", (t, message) => {
    const r = parseInputType(t);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error).toBe(message);
  });
});

describe("checkInputs", () => {
  const expected = { approved: "boolean", comments: "array<string>" };

  it("accepts the spec's resume inputs", () => {
    expect(checkInputs({ approved: true, comments: ["Looks good, minor nit on line 42"] }, expected)).toEqual([]);
  });

  it("names every problem with its path", () => {
    expect(checkInputs({ comments: ["ok", 3, null] }, expected)).toEqual([
      "inputs.approved: missing (expected boolean)",
      "inputs.comments[1]: expected string, got integer",
      "inputs.comments[2]: expected string, got null",
    ]);
  });

  it("tells integers from other numbers, maps from arrays and null", () => {
    const exp = { n: "integer", m: "map", grid: "array<array<integer>>" };
    expect(checkInputs({ n: 1.5, m: [], grid: [[1, 2], [3.5], "x"] }, exp)).toEqual([
      "inputs.n: expected integer, got number",
      "inputs.m: expected map, got array",
      "inputs.grid[1][0]: expected integer, got number",
      "inputs.grid[2]: expected array<integer>, got string",
    ]);
    expect(checkInputs({ n: 2, m: { a: 1 }, grid: [] }, exp)).toEqual([]);
    expect(checkInputs({ n: 2, m: null, grid: [] }, exp)).toEqual(["inputs.m: expected map, got null"]);
  });

  it("reports keys expected_inputs does not name, unless allowed", () => {
    expect(checkInputs({ approved: true, comments: [], extra: 1 }, expected)).toEqual([
      "inputs.extra: not in expected_inputs (expected approved, comments)",
    ]);
    expect(checkInputs({ approved: true, comments: [], extra: 1 }, expected, { allowExtra: true })).toEqual([]);
    expect(checkInputs({ x: 1 }, {})).toEqual(["inputs.x: not in expected_inputs (expected no inputs)"]);
  });

  it("refuses inputs that are not a map and a bad type in expected_inputs", () => {
    expect(checkInputs([], expected)).toEqual(["inputs: expected a map, got array"]);
    expect(checkInputs({ a: 1 }, { a: "float" })).toEqual([
      'expected_inputs.a: "float" is not an input type; expected one of string, integer, boolean, map, array<T> (T from the same list)',
    ]);
  });

  it("assertInputs throws a usage error listing the problems", () => {
    expect(() => assertInputs({ approved: "yes", comments: [] }, expected)).toThrow(
      "resume inputs do not match the WAITING event's expected_inputs:\n  inputs.approved: expected boolean, got string",
    );
    try {
      assertInputs({}, { a: "string" });
    } catch (err) {
      expect((err as { code: string }).code).toBe("invalid_resume_inputs");
    }
    expect(() => assertInputs({ approved: false, comments: [] }, expected)).not.toThrow();
  });
});
