/**
 * The review's guard (DESIGN.md §2, lessons from the original lane): an update is refused when it
 * would shrink its document below 70% of its lines, leave it ending mid-sentence, or touch a path
 * outside the lane's `allowed_paths`. Pure: the caller reads the current text.
 */
import { pathRefusal } from "../../config/index.js";
import type { DocUpdate } from "./schema.js";

/** A document may not lose more than 30% of its lines in one update. */
export const MIN_KEPT_LINE_RATIO = 0.7;

export interface GuardResult {
  /** Empty when the update is acceptable. */
  reasons: string[];
  /** The document's text after the update (undefined when it cannot be computed). */
  after?: string;
  linesBefore: number | null;
  linesAfter: number | null;
}

export function countLines(text: string): number {
  if (text === "") return 0;
  const lines = text.replace(/\r\n?/g, "\n").split("\n");
  return lines[lines.length - 1] === "" ? lines.length - 1 : lines.length;
}

/** The lane's path rule is config's, shared with the orchestrator's edit tools. */
export { pathRefusal };

const FENCE = /^\s{0,3}(```|~~~)/;
/** Lines that end a Markdown document cleanly without sentence punctuation. */
const STRUCTURAL = [
  /^#{1,6}(\s|$)/, // heading
  /^([-*+]|\d+[.)])\s+/, // list item (items are often fragments)
  /^\|.*\|$/, // table row
  /^(-{3,}|\*{3,}|_{3,})$/, // rule
  /^<!--.*-->$/, // comment
  /^\[[^\]]+\]:\s*\S+/, // link reference
];
const SENTENCE_END = /[.!?:;)\]"'`*_>。！？」』）]$/;

/** Whether the document stops in the middle of a sentence or inside an unclosed code fence. */
export function endsMidSentence(text: string): boolean {
  const lines = text.replace(/\r\n?/g, "\n").split("\n");
  let open = false;
  for (const line of lines) if (FENCE.test(line)) open = !open;
  if (open) return true;
  const last = [...lines]
    .reverse()
    .find((l) => l.trim() !== "")
    ?.trim();
  if (last === undefined) return false;
  if (FENCE.test(last) || STRUCTURAL.some((r) => r.test(last))) return false;
  return !SENTENCE_END.test(last);
}

function applied(before: string | null, update: DocUpdate): { after?: string; reason?: string } {
  const md = update.suggested_markdown.replace(/\r\n?/g, "\n").trimEnd();
  switch (update.change_type) {
    case "create":
      return before === null
        ? { after: `${md}\n` }
        : { reason: `${update.path} already exists: use change_type "replace" or "append"` };
    case "replace":
      return before === null
        ? { reason: `${update.path} does not exist: use change_type "create"` }
        : { after: `${md}\n` };
    case "append": {
      if (before === null) return { reason: `${update.path} does not exist: use change_type "create"` };
      const base = before.replace(/\s+$/, "");
      return { after: base === "" ? `${md}\n` : `${base}\n\n${md}\n` };
    }
    case "section":
      if (before === null) return { reason: `${update.path} does not exist: use change_type "create"` };
      return replaceSection(before, update.section_hint, md, update.path);
  }
}

const HEADING = /^(#{1,6})\s+(.*?)\s*#*\s*$/;

/**
 * Replace the section whose heading names `hint` (the heading's text contains it, or it contains
 * the heading's): from that heading to the next one of its level or above. A suggestion that starts
 * with a heading replaces the heading too; otherwise the heading stays and the suggestion is its body.
 */
function replaceSection(
  before: string,
  hint: string | undefined,
  md: string,
  path: string,
): { after?: string; reason?: string } {
  if (hint === undefined)
    return { reason: `an edit of ${path} names no section (section_hint): say which heading it replaces, or append` };
  const lines = before.replace(/\r\n?/g, "\n").replace(/\s+$/, "").split("\n");
  const want = hint.trim().toLowerCase();
  let fenced = false;
  const headings: Array<{ at: number; level: number; title: string }> = [];
  lines.forEach((line, at) => {
    if (FENCE.test(line)) fenced = !fenced;
    const m = fenced ? null : HEADING.exec(line);
    if (m) headings.push({ at, level: m[1]!.length, title: m[2]!.trim().toLowerCase() });
  });
  const found =
    headings.find((h) => h.title === want) ??
    headings.find((h) => h.title !== "" && (h.title.includes(want) || want.includes(h.title)));
  if (!found) return { reason: `${path} has no section "${hint}": name one of its headings in section_hint` };
  const end = headings.find((h) => h.at > found.at && h.level <= found.level)?.at ?? lines.length;
  const replacement = HEADING.test(md.split("\n")[0] ?? "")
    ? md.split("\n")
    : [lines[found.at]!, "", ...md.split("\n")];
  const rest = lines.slice(end);
  const out = [...lines.slice(0, found.at), ...replacement, ...(rest.length > 0 ? ["", ...rest] : [])];
  return { after: `${out.join("\n")}\n` };
}

/** Check one update against the document's current text (`null`: the file does not exist). */
export function guardUpdate(update: DocUpdate, before: string | null, allowedPaths: readonly string[]): GuardResult {
  const linesBefore = before === null ? null : countLines(before);
  const refused = pathRefusal(update.path, allowedPaths);
  if (refused) return { reasons: [refused], linesBefore, linesAfter: null };
  const { after, reason } = applied(before, update);
  if (after === undefined) return { reasons: [reason!], linesBefore, linesAfter: null };
  const linesAfter = countLines(after);
  const reasons: string[] = [];
  if (linesBefore !== null && linesAfter < linesBefore * MIN_KEPT_LINE_RATIO) {
    reasons.push(
      `would shrink ${update.path} from ${linesBefore} to ${linesAfter} lines (below ${MIN_KEPT_LINE_RATIO * 100}% of its lines): a truncated document`,
    );
  }
  if (endsMidSentence(after))
    reasons.push(`would leave ${update.path} ending mid-sentence or inside an open code block`);
  return { reasons, after, linesBefore, linesAfter };
}

/**
 * Check a review's `final_content` for `path` (the whole new text Tsugu writes) the same way: the
 * allowed paths, no shrinking below 70% of the lines, no mid-sentence ending.
 */
export function guardFinalContent(
  path: string,
  finalContent: string,
  before: string | null,
  allowedPaths: readonly string[],
): GuardResult {
  const linesBefore = before === null ? null : countLines(before);
  const refused = pathRefusal(path, allowedPaths);
  if (refused) return { reasons: [refused], linesBefore, linesAfter: null };
  if (finalContent.trim() === "")
    return { reasons: [`the final_content of ${path} is empty`], linesBefore, linesAfter: null };
  const after = wholeFileText(finalContent);
  const linesAfter = countLines(after);
  const reasons: string[] = [];
  if (linesBefore !== null && linesAfter < linesBefore * MIN_KEPT_LINE_RATIO) {
    reasons.push(
      `would shrink ${path} from ${linesBefore} to ${linesAfter} lines (below ${MIN_KEPT_LINE_RATIO * 100}% of its lines): a truncated document`,
    );
  }
  if (endsMidSentence(after)) reasons.push(`would leave ${path} ending mid-sentence or inside an open code block`);
  return { reasons, after, linesBefore, linesAfter };
}

/** A final_content as the file's text: trailing blank space trimmed, one final newline (as the origin's Tsugu writes it). */
export function wholeFileText(finalContent: string): string {
  return `${finalContent.replace(/\s+$/, "")}\n`;
}
