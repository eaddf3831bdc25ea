import { describe, expect, it } from "vitest";
import fc from "fast-check";
import {
  parseComment,
  renderComment,
  isBlackboardComment,
  findJsonSyntaxError,
  BlackboardCommentError,
} from "../../src/blackboard/index.js";

const entry = {
  id: "vpm-mini-docupdate-issue571-1",
  from: "Human",
  to: "Aya",
  project_id: "vpm-mini",
  kind: "doc_update_proposal_request",
  status: "open" as const,
  payload: { summary: "状態を更新", details: {}, refs: { issue: 571 } },
  target_docs: ["STATE/current_state.md"],
  created_at: "2025-11-30T02:30:00+09:00",
  updated_at: "2025-11-30T02:30:00+09:00",
};

const json = JSON.stringify(entry, null, 2);

function reason(body: string): { code: string; message: string } {
  try {
    parseComment(body);
  } catch (err) {
    expect(err).toBeInstanceOf(BlackboardCommentError);
    return { code: (err as BlackboardCommentError).code, message: (err as Error).message };
  }
  throw new Error("expected the comment to be refused");
}

// ---- arbitraries -------------------------------------------------------------------------

const text = fc.string({ unit: "grapheme", minLength: 1, maxLength: 12 });
const iso = fc
  .tuple(
    fc.date({ min: new Date("2000-01-01T00:00:00Z"), max: new Date("2099-12-31T23:59:59Z"), noInvalidDate: true }),
    fc.constantFrom("Z", "+09:00", "-05:30"),
    fc.boolean(),
  )
  .map(([d, zone, millis]) => {
    const base = d.toISOString().slice(0, millis ? 23 : 19);
    return `${base}${zone}`;
  });
// JSON.parse(JSON.stringify(…)) normalizes -0 and the like, so round trips compare JSON values.
const jsonObject = fc
  .dictionary(
    fc.string({ unit: "grapheme", maxLength: 8 }).filter((k) => k !== "__proto__"),
    fc.jsonValue({ maxDepth: 3 }),
    { maxKeys: 5 },
  )
  .map((o) => JSON.parse(JSON.stringify(o)) as Record<string, unknown>);
const targetDocs = fc.oneof(
  fc.array(text, { maxLength: 4 }),
  fc
    .array(fc.record({ path: text, section: fc.option(text, { nil: undefined }) }, { requiredKeys: ["path"] }), {
      maxLength: 4,
    })
    .map((docs) => docs.map((d) => (d.section === undefined ? { path: d.path } : d))),
);
const arbitraryEntry = fc.record(
  {
    id: text,
    from: text,
    to: text,
    project_id: text,
    kind: text,
    status: fc.constantFrom("open", "in_progress", "done", "error", "canceled"),
    payload: jsonObject,
    target_docs: targetDocs,
    created_at: iso,
    updated_at: iso,
    source_issue: fc.oneof(fc.nat(), text),
    source_comment_id: fc.oneof(fc.nat(), text),
    source_run_id: fc.oneof(fc.nat(), text),
    note: fc.string({ unit: "grapheme", maxLength: 40 }),
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
const blackboardType = fc.stringMatching(/^[A-Za-z0-9_.:-]{1,20}$/);

/** The same comment as a person or another workflow might have written it. */
function variant(
  entryJson: string,
  type: string,
  v: { fenced: boolean; crlf: boolean; bom: boolean; lead: string; blank: number; compact: boolean },
): string {
  const body = v.compact ? JSON.stringify(JSON.parse(entryJson)) : entryJson;
  const lines = [
    `<!-- blackboard:${type} -->`,
    ...Array.from({ length: v.blank }, () => ""),
    ...(v.fenced ? ["```json", body, "```"] : ["json", body]),
  ];
  const joined = lines.join("\n");
  return `${v.bom ? "\uFEFF" : ""}${v.lead}${v.crlf ? joined.replace(/\n/g, "\r\n") : joined}`;
}
const variants = fc.record({
  fenced: fc.boolean(),
  crlf: fc.boolean(),
  bom: fc.boolean(),
  lead: fc.constantFrom("", " ", "\n", "\r\n  "),
  blank: fc.nat(2),
  compact: fc.boolean(),
});

// ---- tests -------------------------------------------------------------------------------

describe("comment codec", () => {
  it("renders the canonical form: marker, blank line, json, pretty JSON in spec field order", () => {
    const { payload, id, ...rest } = entry;
    const shuffled = { payload, ...rest, id };
    expect(Object.keys(shuffled)[0]).toBe("payload");
    expect(renderComment(shuffled, "doc_update_v1")).toBe(`<!-- blackboard:doc_update_v1 -->\n\njson\n${json}`);
  });

  it("parses the canonical form and returns the marker's type", () => {
    expect(parseComment(`<!-- blackboard:doc_update_v1 -->\n\njson\n${json}`)).toEqual({
      type: "doc_update_v1",
      entry,
      form: "bare",
    });
    expect(parseComment(`<!-- blackboard:pm_snapshot_v2 -->\n\njson\n${json}`)?.type).toBe("pm_snapshot_v2");
  });

  it("accepts a fenced block, CRLF line endings, a BOM and leading whitespace", () => {
    const fenced = `\uFEFF  \r\n<!--  blackboard:doc_update_v1  -->\r\n\r\n\`\`\`json\r\n${json.replace(/\n/g, "\r\n")}\r\n\`\`\`\r\nthanks!`;
    expect(parseComment(fenced)).toEqual({ type: "doc_update_v1", entry, form: "fenced" });
  });

  it("ignores comments that are not blackboard comments", () => {
    for (const body of [
      "",
      "LGTM",
      `json\n${json}`,
      `Please see <!-- blackboard:doc_update_v1 -->\n\njson\n${json}`,
      "<!-- other:marker -->\n\njson\n{}",
    ]) {
      expect(parseComment(body)).toBeUndefined();
      expect(isBlackboardComment(body)).toBe(false);
    }
    expect(isBlackboardComment(" \uFEFF<!-- blackboard:x -->")).toBe(true);
  });

  it("round-trips arbitrary entries (unicode, both target_docs forms) through the canonical form", () => {
    fc.assert(
      fc.property(arbitraryEntry, blackboardType, (e, type) => {
        const body = renderComment(e, type);
        const decoded = parseComment(body);
        expect(decoded).toEqual({ type, entry: e, form: "bare" });
        expect(renderComment(decoded!.entry, decoded!.type)).toBe(body);
      }),
      { numRuns: 300 },
    );
  });

  it("reads every accepted variant (fenced/bare, CRLF, BOM, leading whitespace, compact JSON) as the same entry", () => {
    fc.assert(
      fc.property(arbitraryEntry, blackboardType, variants, (e, type, v) => {
        const canonical = renderComment(e, type);
        const json = canonical.slice(canonical.indexOf("\njson\n") + 6);
        const decoded = parseComment(variant(json, type, v));
        expect(decoded).toEqual({ type, entry: e, form: v.fenced ? "fenced" : "bare" });
        expect(renderComment(decoded!.entry, decoded!.type)).toBe(canonical);
      }),
      { numRuns: 300 },
    );
  });

  describe("reports malformed blackboard comments with the reason", () => {
    it("no json line", () => {
      expect(reason(`<!-- blackboard:doc_update_v1 -->\n\n${json}`)).toEqual({
        code: "bb_comment_no_json_line",
        message:
          'no `json` line after the blackboard marker: expected a line `json` (or a ```json fenced block) followed by the entry\'s JSON object, found "{" on line 3',
      });
      expect(reason("<!-- blackboard:doc_update_v1 -->").message).toBe(
        "no `json` line after the blackboard marker: expected a line `json` (or a ```json fenced block) followed by the entry's JSON object",
      );
      expect(reason("<!-- blackboard:x -->\n\n```yaml\na: 1\n```").code).toBe("bb_comment_no_json_line");
    });

    it("nothing after the json line", () => {
      expect(reason("<!-- blackboard:x -->\n\njson\n  \n")).toEqual({
        code: "bb_comment_empty",
        message: "nothing after the `json` line: expected the entry's JSON object",
      });
    });

    it("an unclosed fence", () => {
      expect(reason(`<!-- blackboard:x -->\n\n\`\`\`json\n${json}`)).toEqual({
        code: "bb_comment_unclosed_fence",
        message: "the ```json block opened on line 3 is never closed with ```",
      });
    });

    it("a bad marker", () => {
      expect(reason("<!-- blackboard: -->\n\njson\n{}")).toEqual({
        code: "bb_comment_bad_marker",
        message:
          "the blackboard marker names no type: expected <!-- blackboard:TYPE -->, e.g. <!-- blackboard:doc_update_v1 -->",
      });
      expect(reason("<!-- blackboard:doc_update_v1\n\njson\n{}").message).toBe(
        "the blackboard marker is not closed with `-->` on its line: expected <!-- blackboard:TYPE -->",
      );
      expect(reason("<!-- blackboard:doc update -->\n\njson\n{}").message).toBe(
        'the blackboard marker\'s type "doc update" is not valid: it must have no spaces or angle brackets',
      );
    });

    it("invalid JSON, with the line and column in the comment", () => {
      expect(reason('<!-- blackboard:x -->\n\njson\n{\n  "id": "a",\n  "from" "Human"\n}')).toEqual({
        code: "bb_comment_invalid_json",
        message: 'invalid JSON at line 6, column 10: unexpected character "\\"" (expected \':\' after property name)',
      });
      expect(reason("<!-- blackboard:x -->\r\n\r\njson\r\n{'id': 1}").message).toBe(
        'invalid JSON at line 4, column 2: unexpected character "\'" (expected a double-quoted property name)',
      );
      expect(reason('<!-- blackboard:x -->\n\njson\n{"a": 1,}').message).toBe(
        'invalid JSON at line 4, column 9: unexpected character "}" (expected a double-quoted property name)',
      );
      expect(reason('<!-- blackboard:x -->\n\njson\n{"a": 1').message).toBe(
        "invalid JSON at line 4, column 8: unexpected end of input (expected ',' or '}' after property value)",
      );
      expect(reason('<!-- blackboard:x -->\n\n```json\n{"a": tru}\n```').message).toBe(
        'invalid JSON at line 4, column 7: unexpected word "tru" (expected a value; literals are true, false and null)',
      );
      expect(reason('<!-- blackboard:x -->\n\njson\n{"a": 1}\n{"b": 2}').message).toBe(
        'invalid JSON at line 5, column 1: unexpected character "{" after the JSON value',
      );
      expect(reason('<!-- blackboard:x -->\n\njson\n{"a": "x').message).toBe(
        "invalid JSON at line 4, column 7: unterminated string (missing closing '\"')",
      );
    });

    it("JSON that is not an object", () => {
      expect(reason("<!-- blackboard:x -->\n\njson\n[1, 2]")).toEqual({
        code: "bb_comment_not_object",
        message: "the JSON after the `json` line is an array, not an object: an entry is one JSON object",
      });
      expect(reason("<!-- blackboard:x -->\n\njson\nnull").message).toContain("is null, not an object");
      expect(reason('<!-- blackboard:x -->\n\njson\n"entry"').message).toContain("is a string, not an object");
    });

    it("an object that fails the entry schema, with JSON paths", () => {
      const bad = { ...entry, status: "finished", target_docs: [{ section: "## 差分" }] } as Record<string, unknown>;
      delete bad.project_id;
      const { code, message } = reason(`<!-- blackboard:x -->\n\njson\n${JSON.stringify(bad)}`);
      expect(code).toBe("bb_comment_invalid_entry");
      expect(message).toMatch(/^the entry does not match the blackboard entry schema: /);
      expect(message).toContain("$.project_id:");
      expect(message).toContain("$.status:");
      expect(message).toContain("$.target_docs");
    });
  });

  it("refuses to render a type that would not survive the marker", () => {
    expect(() => renderComment(entry, "doc update")).toThrow(
      'blackboard type "doc update" is not valid: it must be non-empty, without spaces or angle brackets (e.g. doc_update_v1)',
    );
    expect(() => renderComment(entry, "")).toThrow(/is not valid/);
    expect(() => renderComment(entry, "a-->b")).toThrow(/is not valid/);
  });
});

describe("JSON syntax locator", () => {
  it("agrees with JSON.parse on what is valid", () => {
    const nearlyJson = fc.oneof(
      fc.json(),
      fc
        .json()
        .chain((s) =>
          fc
            .tuple(fc.nat(s.length), fc.string({ maxLength: 2 }))
            .map(([at, junk]) => s.slice(0, at) + junk + s.slice(at + 1)),
        ),
      fc.string({ maxLength: 12 }),
    );
    fc.assert(
      fc.property(nearlyJson, (s) => {
        let valid = true;
        try {
          JSON.parse(s);
        } catch {
          valid = false;
        }
        expect(findJsonSyntaxError(s) === undefined).toBe(valid);
      }),
      { numRuns: 2000 },
    );
  });

  it("handles deep nesting without overflowing the stack", () => {
    const deep = "[".repeat(100_000) + "]".repeat(100_000);
    expect(findJsonSyntaxError(deep)).toBeUndefined();
    expect(findJsonSyntaxError("[".repeat(100_000))).toEqual({
      position: 100_000,
      message: "unexpected end of input (expected a value)",
    });
  });
});
