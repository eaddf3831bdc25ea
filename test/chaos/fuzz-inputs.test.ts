/**
 * Property-based fuzzing of everything that reads input from outside the process: the stdout
 * parser, the outbox reader, the comment codec and the entry schema. Whatever the bytes or the
 * JSON, they never throw an untyped error, never lose a valid event that follows the bad input,
 * never keep text a store cannot hold, and round-trip what they should. Runs per property:
 * PMAGENT_CHAOS_RUNS (default 100; `npm run chaos` for more).
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { EntryInputSchema, EntrySchema, parseComment, renderComment, type Entry } from "../../src/blackboard/index.js";
import { canonicalJson, MAX_JSON_DEPTH, PmagentError } from "../../src/core/index.js";
import { EVENT_PREFIX, eventId, readOutbox, type ParsedLine } from "../../src/lattice/index.js";
import { stdoutLines } from "../helpers/stdout-lines.js";
import { SPEC_EVENTS } from "../lattice/helpers.js";

const RUNS = Number(process.env.PMAGENT_CHAOS_RUNS ?? 100);
const params = { numRuns: RUNS };

/** Pieces that broke parsers before: NUL, lone surrogates, the replacement character, brackets, escapes, line ends. */
const NASTY = [
  "\0",
  "\ud800",
  "\udfff",
  "\uFFFD",
  "\\",
  '"',
  "\n",
  "\r",
  "\u2028",
  "[",
  "{",
  "]",
  "}",
  "\\u0000",
  "\\ud800",
  EVENT_PREFIX,
];
const nastyString = fc
  .array(fc.oneof(fc.string({ unit: "binary", maxLength: 20 }), fc.constantFrom(...NASTY)), { maxLength: 12 })
  .map((parts) => parts.join(""));
/** Bytes: random, or the UTF-8 of nasty text, or a mix (invalid UTF-8 included). */
const nastyBytes = fc.oneof(
  fc.uint8Array({ maxLength: 300 }),
  nastyString.map((s) => new Uint8Array(Buffer.from(s))),
);
/** JSON nested `depth` levels (arrays and objects alternating), as text. */
const nestedJson = (depth: number) => {
  let text = "1";
  for (let i = 0; i < depth; i++) text = i % 2 ? `[${text}]` : `{"k":${text}}`;
  return text;
};
/** A JSON value of any shape, with nasty strings, sometimes nested past the limit. */
const anyJsonText = fc.oneof(
  fc.jsonValue().map((v) => JSON.stringify(v)),
  fc.dictionary(nastyString, nastyString).map((v) => JSON.stringify(v)),
  fc.integer({ min: 1, max: 3 * MAX_JSON_DEPTH }).map(nestedJson),
);

const completedLine = JSON.stringify(SPEC_EVENTS.completed);
const completedId = eventId(SPEC_EVENTS.completed);

function checkStorable(items: ParsedLine[]): void {
  for (const item of items) {
    if (item.kind === "log") expect(item.text).not.toContain("\0");
    if (item.kind === "protocol_error") {
      expect(item.reason).not.toContain("\0");
      expect(item.excerpt).not.toContain("\0");
    }
  }
}

/** Split `bytes` at the given cut points. */
function split(bytes: Buffer, cuts: number[]): Buffer[] {
  const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const out: Buffer[] = [];
  let at = 0;
  for (const p of points) {
    out.push(bytes.subarray(at, p));
    at = p;
  }
  out.push(bytes.subarray(at));
  return out;
}

describe("chaos: the stdout parser", () => {
  it("takes any bytes in any chunks without throwing, keeps no NUL, and still parses a valid event after them", () => {
    fc.assert(
      fc.property(fc.array(nastyBytes, { maxLength: 6 }), fc.array(fc.nat(), { maxLength: 8 }), (garbage, cuts) => {
        const stream = Buffer.concat([
          ...garbage.map((g) => Buffer.from(g)),
          Buffer.from(`\n${EVENT_PREFIX}${completedLine}\n`),
        ]);
        const parser = stdoutLines({ maxLineBytes: 4096 });
        const items: ParsedLine[] = [];
        for (const chunk of split(stream, cuts)) items.push(...parser.push(chunk));
        items.push(...parser.end());
        checkStorable(items);
        const last = items.at(-1)!;
        expect(last).toMatchObject({ kind: "event", id: completedId });
      }),
      params,
    );
  });

  it("classifies any JSON after the prefix as an event (with the identity of what was written) or a protocol error, never throwing", () => {
    fc.assert(
      fc.property(anyJsonText, nastyString, (json, message) => {
        const asEvent = JSON.stringify({
          ...SPEC_EVENTS.info,
          payload: { message: `m${message}`, metadata: { x: 1 } },
        }).replace('{"x":1}', () => (json.startsWith("{") ? json : `{"v":${json}}`));
        const items = stdoutLines().push(`${EVENT_PREFIX}${json}\n${EVENT_PREFIX}${asEvent}\n`);
        expect(items).toHaveLength(2);
        checkStorable(items);
        for (const item of items) {
          expect(["event", "protocol_error"]).toContain(item.kind);
          if (item.kind === "event") expect(item.id).toBe(eventId(item.raw));
        }
        // The wrapped value is an event unless it nests too deep or holds U+0000.
        const wrapped = items[1]!;
        if (wrapped.kind === "protocol_error")
          expect(wrapped.reason).toMatch(/nests deeper than 64 levels|holds U\+0000 \(NUL\)/);
        else expect(wrapped).toMatchObject({ kind: "event", id: eventId(JSON.parse(asEvent)) });
      }),
      params,
    );
  });

  it(`refuses exactly the events nested deeper than ${MAX_JSON_DEPTH} levels`, () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 2 * MAX_JSON_DEPTH }), (depth) => {
        // The envelope, the payload and metadata are three levels; `depth` more inside.
        const text = JSON.stringify({ ...SPEC_EVENTS.info, payload: { message: "m", metadata: { d: 0 } } }).replace(
          '"d":0',
          () => `"d":${nestedJson(depth)}`,
        );
        const [item] = stdoutLines().push(`${EVENT_PREFIX}${text}\n`);
        if (depth + 3 > MAX_JSON_DEPTH)
          expect(item).toMatchObject({
            kind: "protocol_error",
            reason: `invalid JSON: the event nests deeper than ${MAX_JSON_DEPTH} levels of objects and arrays (MAX_JSON_DEPTH); flatten it`,
          });
        else expect(item).toMatchObject({ kind: "event" });
      }),
      params,
    );
  });
});

describe("chaos: the outbox reader", () => {
  it("reads any bytes without throwing, keeps no NUL, reads a valid last event, and reads the same in bounded steps", () => {
    const dir = mkdtempSync(join(tmpdir(), "pmagent-chaos-outbox-"));
    try {
      const path = join(dir, "outbox.jsonl");
      fc.assert(
        fc.property(fc.array(nastyBytes, { maxLength: 6 }), fc.integer({ min: 1, max: 400 }), (garbage, step) => {
          writeFileSync(
            path,
            Buffer.concat([...garbage.map((g) => Buffer.from(g)), Buffer.from(`\n${completedLine}\n`)]),
          );
          const whole = readOutbox(path, undefined, { maxLineBytes: 4096 });
          checkStorable(whole.items);
          expect(whole.items.at(-1)).toMatchObject({ kind: "event", id: completedId });
          expect(whole.torn).toBeNull();
          const steps: typeof whole.items = [];
          let from = undefined as Parameters<typeof readOutbox>[1];
          for (;;) {
            const r = readOutbox(path, from, { maxLineBytes: 4096, maxBytes: step });
            steps.push(...r.items);
            from = r.next;
            if (!r.more) break;
          }
          expect(steps.map((i) => [i.kind, i.line_no])).toEqual(whole.items.map((i) => [i.kind, i.line_no]));
        }),
        params,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** Entries valid by the schema, with nasty (NUL-free) strings. */
const text = nastyString.map((s) => s.replaceAll("\0", "")).filter((s) => s.length > 0);
const date = fc
  .date({ min: new Date("1970-01-01T00:00:00Z"), max: new Date("2999-12-31T23:59:59Z"), noInvalidDate: true })
  .map((d) => d.toISOString());
const entry: fc.Arbitrary<Entry> = fc.record(
  {
    id: text,
    from: text,
    to: text,
    project_id: text,
    kind: text,
    status: fc.constantFrom("open", "in_progress", "done", "error", "canceled" as const),
    payload: fc.dictionary(nastyString, fc.jsonValue({ maxDepth: 4 })),
    target_docs: fc.oneof(
      fc.array(text, { maxLength: 3 }),
      fc.array(fc.record({ path: text, section: fc.option(text, { nil: undefined }) }, { requiredKeys: ["path"] }), {
        maxLength: 3,
      }),
    ),
    created_at: date,
    updated_at: date,
    note: text,
  },
  {
    requiredKeys: [
      "id",
      "from",
      "to",
      "project_id",
      "kind",
      "status",
      "payload",
      "target_docs",
      "created_at",
      "updated_at",
    ],
  },
);

describe("chaos: the comment codec", () => {
  it("round-trips any valid entry through the canonical comment form", () => {
    fc.assert(
      fc.property(entry, (e) => {
        const parsed = EntrySchema.parse(e);
        // Compared as JSON: JSON has no -0, so a payload's -0 comes back as 0.
        expect(canonicalJson(parseComment(renderComment(parsed))?.entry)).toBe(canonicalJson(parsed));
      }),
      params,
    );
  });

  it("answers any comment body with an entry, nothing, or a typed error", () => {
    const body = fc.oneof(
      nastyString,
      nastyString.map((s) => `<!-- blackboard:doc_update_v1 -->\n\njson\n${s}`),
      anyJsonText.map((j) => `<!-- blackboard:doc_update_v1 -->\njson\n${j}`),
      entry
        .map((e) => renderComment(EntrySchema.parse(e)))
        .chain((c) => fc.nat({ max: c.length }).map((cut) => c.slice(0, cut))),
    );
    fc.assert(
      fc.property(body, (b) => {
        try {
          parseComment(b);
        } catch (err) {
          expect(err).toBeInstanceOf(PmagentError);
          expect((err as PmagentError).code).toMatch(/^bb_comment_[a-z_]+$/);
        }
      }),
      params,
    );
  });
});

describe("chaos: the entry schema", () => {
  it("answers any JSON value with an entry or issues, never throwing; what it takes holds no NUL outside the payload and nests within the limit", () => {
    const value = fc.oneof(
      anyJsonText.map((t) => JSON.parse(t) as unknown),
      entry.map((e) => e as unknown),
      fc
        .tuple(entry, fc.constantFrom("id", "to", "kind", "note", "created_at"), nastyString)
        .map(([e, k, v]) => ({ ...e, [k]: v }) as unknown),
      fc
        .tuple(entry, fc.integer({ min: 1, max: 3 * MAX_JSON_DEPTH }))
        .map(([e, d]) => ({ ...e, payload: JSON.parse(nestedJson(d)) as unknown }) as unknown),
    );
    fc.assert(
      fc.property(value, (v) => {
        for (const schema of [EntrySchema, EntryInputSchema]) {
          const r = schema.safeParse(v);
          if (!r.success) continue;
          for (const k of ["id", "from", "to", "project_id", "kind", "note"] as const)
            expect(String(r.data[k] ?? "")).not.toContain("\0");
          if (r.data.created_at !== undefined) expect(Number.isNaN(Date.parse(r.data.created_at))).toBe(false);
        }
      }),
      params,
    );
  });
});
