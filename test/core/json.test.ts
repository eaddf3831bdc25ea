import { describe, expect, it } from "vitest";
import { canonicalJson, contentHash, contentHashOfJson } from "../../src/core/index.js";

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
  const keys = [
    "a",
    "b",
    "B",
    "é",
    "z",
    "aa",
    "a b",
    "10",
    "2",
    "_",
    "payload",
    "event_type",
    "constructor",
    "toString",
    "__proto__",
  ];
  const make = (depth: number): unknown => {
    const r = next();
    if (depth > 3 || r < 0.3) return [null, true, 1.5, -3, "s", 'ü\n"', 0][Math.floor(next() * 7)];
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

  it("sorts each member once: a chain of objects in key order around one that is not costs as much per level", () => {
    // Sorting a changed member twice (once to see it changed, once to rebuild it) doubled the work
    // at each level: the innermost object's keys were read 2^20 times here, and a sprite's event
    // line of 1 KB never finished. They are read once.
    let reads = 0;
    const inner = new Proxy(
      { b: 1, a: 2 },
      {
        ownKeys: (target) => {
          reads++;
          return Reflect.ownKeys(target);
        },
      },
    );
    let value: unknown = inner;
    for (let i = 0; i < 20; i++) value = { a: [i], z: value };
    const text = canonicalJson(value);
    expect(reads).toBe(1);
    expect(text).toBe(reference(value));
  });

  it("rebuilds what is not a plain object, as the definition does", () => {
    const date = new Date("2026-01-15T10:30:00Z");
    const bare = Object.assign(Object.create(null) as Record<string, unknown>, { b: 1, a: 2 });
    // JSON.parse makes "__proto__" an own key; the definition's rebuild loses it.
    const proto: unknown = JSON.parse('{"__proto__":{"a":1},"b":2}');
    for (const value of [{ at: date }, [bare], { x: new Map([["k", 1]]) }, proto, [{ c: proto }]])
      expect(canonicalJson(value)).toBe(reference(value));
  });
});

describe("contentHashOfJson", () => {
  const ofText = (text: string) => {
    const bytes = Buffer.from(text);
    return contentHashOfJson(bytes, 0, bytes.length);
  };

  it("hashes an event line from its bytes, reordered or not, to the same id as its value", () => {
    const line =
      '{"protocol_version":"v1","sprite_id":"s-1","work_item_id":"42","event_type":"INFO","timestamp":"2026-01-15T10:30:00Z","payload":{"message":"héllo ✓","kind":"progress","metadata":{"i":7,"percent":-7,"list":[3,{"z":true,"y":null}]}}}';
    expect(ofText(line)).toBe(contentHash(JSON.parse(line)));
    const canonical = canonicalJson(JSON.parse(line));
    expect(ofText(canonical)).toBe(contentHash(JSON.parse(line)));
    // A line inside a larger buffer (an outbox chunk): only its bytes count.
    const chunk = Buffer.from(`{"x":1}\n${line}\n{"y":2}`);
    const start = chunk.indexOf(line);
    expect(contentHashOfJson(chunk, start, start + Buffer.byteLength(line))).toBe(contentHash(JSON.parse(line)));
  });

  it.each([
    ['{"a": 1}', "whitespace"],
    ['{"a":"q\\"uote"}', "an escape"],
    ['{"a":1.5}', "a fraction"],
    ['{"a":1e3}', "an exponent"],
    ['{"a":-0}', "minus zero"],
    ['{"a":1234567890123456}', "a 16-digit integer"],
    ['{"10":1,"9":2}', "an array-index key"],
    ['{"b":1,"a":2,"b":3}', "a duplicate key"],
    ['{"__proto__":{"a":1}}', "a __proto__ key"],
    ['{"é":1,"e":2}', "a key that is not ASCII"],
    ['{"":1}', "an empty key"],
    [" 1", "leading whitespace"],
    ["[1 ]", "whitespace in an array"],
    ['{"a":true }', "whitespace after a literal"],
  ])("leaves %s to the value path (%s)", (text) => {
    expect(ofText(text)).toBeNull();
  });

  it("equals contentHash of the parsed value on 2,000 random texts, whenever it answers", () => {
    let answered = 0;
    for (let seed = 1; seed <= 1000; seed++) {
      const value: unknown = JSON.parse(JSON.stringify(randomValue(seed)) ?? "null");
      for (const text of [JSON.stringify(value), canonicalJson(value)]) {
        const id = ofText(text);
        if (id !== null) {
          answered++;
          expect(id).toBe(contentHash(value));
        }
      }
    }
    expect(answered).toBeGreaterThan(200);
  });

  it("answers for every text of plain keys and values, nested and in any order, with contentHash's id", () => {
    // Only what the scan takes (ASCII keys, short integers, strings without escapes), so that every
    // text is answered: objects sorted or not at any depth, inside arrays or objects that are.
    let state = 7;
    const next = () => {
      state = (state * 1103515245 + 12345) % 2 ** 31;
      return state / 2 ** 31;
    };
    const keys = ["a", "b", "B", "z", "aa", "ab", "a_b", "kind", "message", "metadata", "payload"];
    const make = (depth: number): unknown => {
      const r = next();
      if (depth > 4 || r < 0.35) return [null, true, false, 42, -7, 0, "s", "日本語 ✓", ""][Math.floor(next() * 9)];
      if (r < 0.55) return Array.from({ length: Math.floor(next() * 5) }, () => make(depth + 1));
      const out: Record<string, unknown> = {};
      for (let i = Math.floor(next() * 7); i > 0; i--) out[keys[Math.floor(next() * keys.length)]!] = make(depth + 1);
      return out;
    };
    for (let i = 0; i < 2000; i++) {
      const value = make(0);
      for (const text of [JSON.stringify(value), canonicalJson(value)]) expect(ofText(text)).toBe(contentHash(value));
    }
  });

  it("leaves a duplicate key to the value path wherever it lies, and a text nested or wide past its bounds", () => {
    for (const text of [
      '{"a":1,"a":2}',
      '{"b":{"a":1,"a":2},"a":0}',
      '[{"z":1,"y":2,"z":3}]',
      '{"c":1,"b":2,"c":3,"a":4}',
    ])
      expect(ofText(text)).toBeNull();
    // Deeper than the scan recurses, more values than it notes, an object too long to reorder by
    // insertion: null (the value path decides), never a throw nor a quadratic sort.
    const answered = (text: string) => expect(ofText(text)).toBe(contentHash(JSON.parse(text)));
    expect(ofText(`${"[".repeat(600)}1${"]".repeat(600)}`)).toBeNull();
    answered(`${"[".repeat(500)}1${"]".repeat(500)}`);
    expect(ofText(`[${"1,".repeat(8192)}1]`)).toBeNull();
    answered(`[${"1,".repeat(8000)}1]`);
    answered(`[${Array.from({ length: 2000 }, (_, i) => `{"b":${i},"a":1}`).join(",")}]`);
    const members = (n: number) => Array.from({ length: n }, (_, i) => `"k${String(n - i).padStart(4, "0")}":${i}`);
    expect(ofText(`{${members(33).join(",")}}`)).toBeNull();
    answered(`{${members(32).join(",")}}`);
    answered(`{${members(5000).reverse().join(",")}}`); // in key order: any width
  });
});
