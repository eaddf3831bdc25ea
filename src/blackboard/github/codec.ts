/**
 * The GitHub-comment form of a blackboard entry (spec §4.1, DESIGN.md §2):
 *
 *     <!-- blackboard:<type> -->
 *
 *     json
 *     { ...the entry, pretty-printed... }
 *
 * Writers emit exactly that. Readers also accept a fenced ```json block (the original workflows
 * wrote both), CRLF line endings, and leading whitespace or a BOM, and return the marker's type.
 */
import { UsageError, formatZodIssues, type CodeOf } from "../../core/index.js";
import { DEFAULT_BLACKBOARD_TYPE } from "../entry.js";
import { EntrySchema, type Entry } from "../schema.js";

export { DEFAULT_BLACKBOARD_TYPE };
import { findJsonSyntaxError } from "./json-syntax.js";
import { withCompatDefaults } from "../shapes.js";

export interface DecodedComment {
  /** The blackboard type named in the marker, e.g. "doc_update_v1". */
  type: string;
  entry: Entry;
  /** Which body form the comment used: the canonical bare `json` line or a fenced block. */
  form: "bare" | "fenced";
}

/** A comment that carries the blackboard marker but whose body is not a valid entry. */
export class BlackboardCommentError extends UsageError {
  constructor(code: CodeOf<"usage">, reason: string, details?: Record<string, unknown>) {
    super(code, reason, details);
  }
}

const MARKER_START = /^<!--\s*blackboard:/i;
/** Any type round-trips through the marker as long as it has no whitespace and no angle bracket. */
const TYPE = /^[^\s<>]+$/;
/** Fields in the order the spec lists them; rendered first so written comments read the same. */
const FIELD_ORDER = [
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
  "source_issue",
  "source_comment_id",
  "source_run_id",
  "note",
];

/** Whether a comment body starts with a blackboard marker (after whitespace or a BOM). */
export function isBlackboardComment(body: string): boolean {
  return MARKER_START.test(body.replace(/^\uFEFF/, "").trimStart());
}

/**
 * Parse a comment body. Returns undefined for a comment that is not a blackboard comment (to be
 * ignored); throws BlackboardCommentError with the reason when the marker is there but the body
 * is not a valid entry.
 */
export function parseComment(body: string): DecodedComment | undefined {
  const text = body.replace(/^\uFEFF/, "").replace(/\r\n?/g, "\n");
  const lead = /^\s*/.exec(text)![0];
  if (!MARKER_START.test(text.slice(lead.length))) return undefined;
  const lines = text.split("\n");
  // Line numbers in messages count from the comment's first line.
  let n = lead.split("\n").length - 1;
  const type = markerType(lines[n]!.trim());
  n++;
  while (n < lines.length && lines[n]!.trim() === "") n++;
  const opener = lines[n]?.trim();
  let jsonLines: string[];
  let form: DecodedComment["form"];
  if (opener === "json") {
    form = "bare";
    jsonLines = lines.slice(n + 1);
  } else if (opener !== undefined && /^```\s*(json)?$/i.test(opener)) {
    form = "fenced";
    const close = lines.findIndex((l, i) => i > n && /^```\s*$/.test(l.trim()));
    if (close < 0)
      throw new BlackboardCommentError(
        "bb_comment_unclosed_fence",
        `the \`\`\`json block opened on line ${n + 1} is never closed with \`\`\``,
        { type, line: n + 1 },
      );
    jsonLines = lines.slice(n + 1, close);
  } else {
    throw new BlackboardCommentError(
      "bb_comment_no_json_line",
      `no \`json\` line after the blackboard marker: expected a line \`json\` (or a \`\`\`json fenced block) followed by the entry's JSON object${opener === undefined ? "" : `, found ${JSON.stringify(opener.slice(0, 40))} on line ${n + 1}`}`,
      { type },
    );
  }
  const firstJsonLine = n + 2;
  const json = jsonLines.join("\n");
  if (json.trim() === "")
    throw new BlackboardCommentError(
      "bb_comment_empty",
      "nothing after the `json` line: expected the entry's JSON object",
      { type },
    );
  const syntax = findJsonSyntaxError(json);
  if (syntax) {
    const before = json.slice(0, syntax.position).split("\n");
    const line = firstJsonLine + before.length - 1;
    const column = before[before.length - 1]!.length + 1;
    throw new BlackboardCommentError(
      "bb_comment_invalid_json",
      `invalid JSON at line ${line}, column ${column}: ${syntax.message}`,
      { type, line, column },
    );
  }
  const value: unknown = JSON.parse(json);
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    const what = value === null ? "null" : Array.isArray(value) ? "an array" : `a ${typeof value}`;
    throw new BlackboardCommentError(
      "bb_comment_not_object",
      `the JSON after the \`json\` line is ${what}, not an object: an entry is one JSON object`,
      { type },
    );
  }
  const result = EntrySchema.safeParse(withCompatDefaults(value));
  if (!result.success) {
    const issues = formatZodIssues(result.error);
    throw new BlackboardCommentError(
      "bb_comment_invalid_entry",
      `the entry does not match the blackboard entry schema: ${issues.join("; ")}`,
      { type, issues },
    );
  }
  return { type, entry: result.data, form };
}

/**
 * Split a text holding one or more comment bodies, as a user pastes them, into the bodies: each
 * starts at a line beginning with a blackboard marker and runs to the next one (a bare body's JSON
 * runs "to the end", spec §4.2). Text before the first marker is returned as `preamble`.
 */
export function splitComments(text: string): { preamble: string; bodies: Array<{ body: string; line: number }> } {
  const lines = text
    .replace(/^\uFEFF/, "")
    .replace(/\r\n?/g, "\n")
    .split("\n");
  const starts = lines.flatMap((l, i) => (MARKER_START.test(l.trimStart()) ? [i] : []));
  const preamble = lines.slice(0, starts[0] ?? lines.length).join("\n");
  const bodies = starts.map((start, k) => ({
    body: lines
      .slice(start, starts[k + 1] ?? lines.length)
      .join("\n")
      .trimEnd(),
    line: start + 1,
  }));
  return { preamble, bodies };
}

/** Render an entry in the canonical comment form. */
export function renderComment(entry: Entry, type: string = DEFAULT_BLACKBOARD_TYPE): string {
  assertBlackboardType(type);
  const ordered: Record<string, unknown> = {};
  for (const key of FIELD_ORDER)
    if ((entry as Record<string, unknown>)[key] !== undefined) ordered[key] = (entry as Record<string, unknown>)[key];
  for (const [key, value] of Object.entries(entry)) if (!(key in ordered) && value !== undefined) ordered[key] = value;
  return `<!-- blackboard:${type} -->\n\njson\n${JSON.stringify(ordered, null, 2)}`;
}

/** Refuse a type that would not survive a round trip through the marker. */
export function assertBlackboardType(type: string): void {
  if (!TYPE.test(type)) {
    throw new UsageError(
      "bb_bad_type",
      `blackboard type ${JSON.stringify(type)} is not valid: it must be non-empty, without spaces or angle brackets (e.g. doc_update_v1)`,
    );
  }
}

function markerType(line: string): string {
  const m = /^<!--\s*blackboard:(.*?)-->/i.exec(line);
  if (!m)
    throw new BlackboardCommentError(
      "bb_comment_bad_marker",
      "the blackboard marker is not closed with `-->` on its line: expected <!-- blackboard:TYPE -->",
    );
  const type = m[1]!.trim();
  if (type === "")
    throw new BlackboardCommentError(
      "bb_comment_bad_marker",
      "the blackboard marker names no type: expected <!-- blackboard:TYPE -->, e.g. <!-- blackboard:doc_update_v1 -->",
    );
  if (!TYPE.test(type))
    throw new BlackboardCommentError(
      "bb_comment_bad_marker",
      `the blackboard marker's type ${JSON.stringify(type.slice(0, 40))} is not valid: it must have no spaces or angle brackets`,
    );
  return type;
}
