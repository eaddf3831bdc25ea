/**
 * What `pmagent bb import` reads: entries as JSON (an array, one object, or JSON lines), or one or
 * more GitHub comment bodies in the comment form (bare or fenced, codec.ts) as a user pastes them.
 * A comment body that is not a valid entry is reported as sync reports a bad comment, and the
 * rest is read.
 */
import { UsageError, parseJsonText } from "../../core/index.js";
import { BlackboardCommentError, parseComment, splitComments } from "./codec.js";

export interface ImportBadComment {
  /** The comment's place in the text, from 1. */
  comment: number;
  /** The line of the text its marker is on. */
  line: number;
  code: string;
  reason: string;
}

export interface ImportText {
  form: "json" | "comments";
  /** The entries to import, as read (validated on import). */
  items: unknown[];
  bad_comments: ImportBadComment[];
}

export function readImportText(text: string, source: string): ImportText {
  const { preamble, bodies } = splitComments(text);
  if (bodies.length === 0) return { form: "json", items: parseEntriesText(text, source), bad_comments: [] };
  if (preamble.trim() !== "") {
    throw new UsageError(
      "bb_import_mixed",
      `${source}: text before the first <!-- blackboard:TYPE --> marker: give either entries as JSON or comment bodies, each starting with its marker`,
    );
  }
  const items: unknown[] = [];
  const bad: ImportBadComment[] = [];
  bodies.forEach(({ body, line }, i) => {
    try {
      items.push(parseComment(body)!.entry);
    } catch (err) {
      if (!(err instanceof BlackboardCommentError)) throw err;
      bad.push({ comment: i + 1, line, code: err.code, reason: err.message });
    }
  });
  return { form: "comments", items, bad_comments: bad };
}

/** Entries from a JSON array, one JSON object, or JSON lines. */
export function parseEntriesText(text: string, source: string): unknown[] {
  const trimmed = text.trim();
  if (trimmed === "")
    throw new UsageError(
      "empty_input",
      `${source} is empty: expected entries as a JSON array, a JSON object, JSON lines, or blackboard comment bodies`,
    );
  if (trimmed.startsWith("[")) {
    const v = parseJsonText(trimmed, source);
    return v as unknown[];
  }
  try {
    return [JSON.parse(trimmed)];
  } catch {
    return trimmed
      .split(/\r?\n/)
      .map((l, i) => ({ l: l.trim(), i }))
      .filter(({ l }) => l !== "")
      .map(({ l, i }) => parseJsonText(l, `${source} line ${i + 1}`));
  }
}
