import { describe, expect, it } from "vitest";
import fc from "fast-check";
import {
  ISO_WITH_ZONE,
  isIsoWithZone,
  isRealDateTime,
  jsonTooDeep,
  MAX_JSON_DEPTH,
  nulPath,
  parseDateInput,
  parseJsonText,
  storableText,
  valueTooDeep,
} from "../../src/core/index.js";

/** The definition: the deepest nesting of objects and arrays in a parsed value. */
function depthOf(v: unknown): number {
  if (v === null || typeof v !== "object") return 0;
  const items = Array.isArray(v) ? v : Object.values(v as Record<string, unknown>);
  return 1 + Math.max(0, ...items.map(depthOf));
}

describe("JSON depth", () => {
  it("jsonTooDeep and valueTooDeep agree with the definition on any JSON, brackets inside strings included", () => {
    const bracketString = fc
      .array(fc.constantFrom("[", "{", "]", "}", '"', "\\", "a"), { maxLength: 200 })
      .map((a) => a.join(""));
    const nested = fc.letrec((tie) => ({
      value: fc.oneof(
        { depthSize: "small" },
        bracketString,
        fc.integer(),
        fc.array(tie("value"), { maxLength: 3 }),
        fc.dictionary(bracketString, tie("value"), { maxKeys: 3 }),
      ),
    })).value;
    fc.assert(
      fc.property(nested, fc.integer({ min: 1, max: 6 }), (v, max) => {
        const text = JSON.stringify(v);
        expect(jsonTooDeep(text, max)).toBe(depthOf(v) > max);
        expect(valueTooDeep(v, max)).toBe(depthOf(v) > max);
      }),
      { numRuns: 500 },
    );
  });

  it(`refuses text nested deeper than MAX_JSON_DEPTH (${MAX_JSON_DEPTH}) before parsing, with the source named`, () => {
    expect(jsonTooDeep(`${"[".repeat(MAX_JSON_DEPTH)}${"]".repeat(MAX_JSON_DEPTH)}`)).toBe(false);
    expect(jsonTooDeep(`${"[".repeat(MAX_JSON_DEPTH + 1)}${"]".repeat(MAX_JSON_DEPTH + 1)}`)).toBe(true);
    expect(() => parseJsonText("[".repeat(100_000), "entry.json")).toThrow(
      "entry.json nests deeper than 64 levels of objects and arrays (MAX_JSON_DEPTH); flatten it",
    );
  });
});

describe("NUL", () => {
  it("nulPath names the first string or key holding U+0000, and nothing else", () => {
    expect(nulPath({ a: [1, { "b c": "x\u0000" }] })).toBe('$.a[1]["b c"]');
    expect(nulPath({ "k\u0000": 1 })).toBe('$["k\\u0000"] (the key)');
    expect(nulPath({ a: "\\u0000", b: ["ok"] })).toBeNull();
  });

  it("storableText keeps no NUL and leaves other text as it is", () => {
    expect(storableText("a\u0000b\u0000")).toBe("a\uFFFDb\uFFFD");
    const s = "plain \ud800 text";
    expect(storableText(s)).toBe(s);
  });
});

describe("dates", () => {
  it.each([
    "2026-02-30T00:00:00Z",
    "2026-02-29T00:00:00Z",
    "1900-02-29T00:00:00Z",
    "2026-13-01T00:00:00Z",
    "2026-00-10T00:00:00Z",
    "2026-01-00T00:00:00Z",
    "2026-06-31T12:00:00+02:00",
    "2026-01-15T24:00:00Z",
    "2026-01-15T23:60:00Z",
    "2026-01-15T23:59:60Z",
    "2026-01-15T10:00:00+23:60",
    "2026-01-15T10:00:00",
  ])("refuses %s", (s) => expect(isIsoWithZone(s)).toBe(false));

  it.each(["2024-02-29T00:00:00Z", "2000-02-29T23:59:59.999+09:00", "2026-12-31T23:59Z", "2026-01-15T10:00:00-23:59"])(
    "takes %s",
    (s) => expect(isIsoWithZone(s)).toBe(true),
  );

  it("parseDateInput refuses a day its month does not have, naming the flag", () => {
    expect(() => parseDateInput("2026-02-30", "--since")).toThrow(
      '--since: "2026-02-30" is not an ISO 8601 date or date-time (e.g. 2026-01-15 or 2026-01-15T10:30:00Z)',
    );
    expect(() => parseDateInput("2026-04-31T10:00:00Z", "--until")).toThrow(
      '--until: "2026-04-31T10:00:00Z" is not an ISO 8601 date',
    );
    expect(parseDateInput("2028-02-29", "--since").toISOString()).toBe("2028-02-29T00:00:00.000Z");
  });
});

describe("isIsoWithZone's quick path (UTC with seconds)", () => {
  it("agrees with the full check on 20,000 date-times, real and not", () => {
    let state = 7;
    const next = (n: number) => {
      state = (state * 1103515245 + 12345) % 2 ** 31;
      return Math.floor((state / 2 ** 31) * n);
    };
    const pad = (v: number, w = 2) => String(v).padStart(w, "0");
    const full = (s: string) => ISO_WITH_ZONE.test(s) && isRealDateTime(s) && !Number.isNaN(Date.parse(s));
    for (let i = 0; i < 20_000; i++) {
      const fraction = ["", ".", ".1", ".123", ".123456789", ".1234567890", ".12a"][next(7)]!;
      const sep = next(50) === 0 ? " " : "T";
      const s = `${pad(next(10_000), 4)}-${pad(next(14))}-${pad(next(33))}${sep}${pad(next(26))}:${pad(next(62))}:${pad(next(62))}${fraction}${next(20) === 0 ? "z" : "Z"}`;
      expect(isIsoWithZone(s), s).toBe(full(s));
    }
  });
});
