import { describe, expect, it } from "vitest";
import { canonicalJson, contentHash } from "../../src/core/index.js";

/** The definition: every object rebuilt with its keys sorted, undefined members dropped. */
function reference(value: unknown): string {
  const sort = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(sort);
    if (v !== null && typeof v === "object") {
      const out: Record<string, unknown> = {};
      for (const key of Object.keys(v).sort()) {
        const x = (v as Record<string, unknown>)[key];
        if (x !== undefined) out[key] = sort(x);
      }
      return out;
    }
    return v;
  };
  return JSON.stringify(sort(value));
}

/** A deterministic pseudo-random JSON-like value (seeded), with keys in any order and some undefined members. */
function randomValue(seed: number): unknown {
  let state = seed;
  const next = () => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return state / 2 ** 31;
  };
  const keys = ["a", "b", "B", "é", "z", "aa", "a b", "10", "2", "_", "payload", "event_type", "constructor", "toString", "__proto__"];
  const make = (depth: number): unknown => {
    const r = next();
    if (depth > 3 || r < 0.3) return [null, true, 1.5, -3, "s", "ü\n\"", 0][Math.floor(next() * 7)];
    if (r < 0.45) return Array.from({ length: Math.floor(next() * 4) }, () => make(depth + 1));
    if (r < 0.5) return undefined;
    const out: Record<string, unknown> = {};
    for (let i = Math.floor(next() * 20); i > 0; i--) out[keys[Math.floor(next() * keys.length)]!] = make(depth + 1);
    return out;
  };
  return make(0);
}

describe("canonicalJson", () => {
  it("sorts keys at every depth and drops undefined members, whatever the order they were written in", () => {
    expect(canonicalJson({ b: 1, a: { d: [{ y: 1, x: 2 }], c: undefined } })).toBe('{"a":{"d":[{"x":2,"y":1}]},"b":1}');
    expect(contentHash({ b: 1, a: 2 })).toBe(contentHash(JSON.parse('{"a":2,"b":1}')));
  });

  it("equals the definition on 2,000 random values, sorted or not, from JSON.parse or built", () => {
    for (let seed = 1; seed <= 1000; seed++) {
      const value = randomValue(seed);
      expect(canonicalJson(value)).toBe(reference(value));
      // Parsed back (keys already in their written order, nothing undefined): the same again.
      const parsed: unknown = JSON.parse(JSON.stringify(value) ?? "null");
      expect(canonicalJson(parsed)).toBe(reference(parsed));
    }
  });

  it("rebuilds what is not a plain object, as the definition does", () => {
    const date = new Date("2026-01-15T10:30:00Z");
    const bare = Object.assign(Object.create(null) as Record<string, unknown>, { b: 1, a: 2 });
    // JSON.parse makes "__proto__" an own key; the definition's rebuild loses it.
    const proto: unknown = JSON.parse('{"__proto__":{"a":1},"b":2}');
    for (const value of [{ at: date }, [bare], { x: new Map([["k", 1]]) }, proto, [{ c: proto }]]) expect(canonicalJson(value)).toBe(reference(value));
  });
});
