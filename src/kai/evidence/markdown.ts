import type { StateSection } from "./types.js";

/**
 * The anchor GitHub gives a heading: the rendered text lowercased, everything but word characters
 * (letters of any script — Japanese included —, marks, decimal and letter numbers, `_`), `-` and
 * space removed, each space turned into `-` (GitHub's `[^\p{Word}\- ]`).
 */
export function githubSlug(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{Nd}\p{Nl}\p{Pc}\- ]/gu, "")
    .replace(/ /g, "-");
}

/** Repeated headings get `-1`, `-2`, … exactly as GitHub numbers them. */
export class Slugger {
  private readonly occurrences = new Map<string, number>();

  slug(text: string): string {
    const original = githubSlug(text);
    let result = original;
    while (this.occurrences.has(result)) {
      const n = (this.occurrences.get(original) ?? 0) + 1;
      this.occurrences.set(original, n);
      result = `${original}-${n}`;
    }
    this.occurrences.set(result, 0);
    return result;
  }
}

/** Heading text as GitHub renders it: inline markup removed (links, code, emphasis, HTML tags). */
export function headingText(raw: string): string {
  return raw
    .replace(/\s+#+\s*$/, "") // closing hashes
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/<[^>]+>/g, "")
    .replace(/`([^`]*)`/g, "$1")
    .replace(/(\*\*|__)(.+?)\1/g, "$2")
    .replace(/(^|[^\w*])[*_]([^*_]+)[*_](?=$|[^\w*])/g, "$1$2")
    .trim();
}

const FENCE = /^\s{0,3}(```+|~~~+)/;
const ATX = /^\s{0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$/;

/** ATX headings outside fenced code blocks, each with its own text up to the next heading. */
export function parseSections(markdown: string): StateSection[] {
  const lines = markdown.replace(/\r\n?/g, "\n").split("\n");
  const sections: StateSection[] = [];
  const slugger = new Slugger();
  const bodies: string[][] = [];
  const stack: number[] = [];
  let fence: string | null = null;
  lines.forEach((line, i) => {
    const f = FENCE.exec(line);
    if (f) {
      const marker = f[1] ?? "";
      if (fence === null) fence = marker;
      else if (marker[0] === fence[0] && marker.length >= fence.length) fence = null;
    } else if (fence === null) {
      const h = ATX.exec(line);
      if (h) {
        const level = (h[1] ?? "#").length;
        const title = headingText(h[2] ?? "");
        while (stack.length > 0 && (sections[stack[stack.length - 1]!]?.level ?? 0) >= level) stack.pop();
        sections.push({
          level,
          title,
          anchor: slugger.slug(title),
          line: i + 1,
          body: "",
          parent: stack.length > 0 ? stack[stack.length - 1]! : null,
        });
        stack.push(sections.length - 1);
        bodies.push([]);
        return;
      }
    }
    bodies[bodies.length - 1]?.push(line);
  });
  sections.forEach((s, i) => (s.body = (bodies[i] ?? []).join("\n").trim()));
  return sections;
}

/** Indexes of a section and all sections nested under it. */
export function subtree(sections: StateSection[], index: number): number[] {
  const out = [index];
  for (let i = index + 1; i < sections.length; i++) {
    if (out.includes(sections[i]!.parent ?? -1)) out.push(i);
    else if ((sections[i]?.level ?? 0) <= (sections[index]?.level ?? 0)) break;
  }
  return out;
}

const LIST_ITEM = /^\s*(?:[-*+]|\d+[.)])\s+(.*)$/;
const TOP_LEVEL_ITEM = /^ ?(?:[-*+]|\d+[.)])\s+(.*)$/;

/** Top-level list items of a text; checked task items (`[x]`) are done and left out. */
export function listItems(text: string): string[] {
  const items: string[] = [];
  for (const line of text.split("\n")) {
    const item = TOP_LEVEL_ITEM.exec(line.trimEnd())?.[1]?.trim();
    if (item === undefined || /^\[[xX]\]/.test(item)) continue;
    const rest = item.replace(/^\[ \]\s*/, "");
    if (rest !== "") items.push(rest);
  }
  return items;
}

/** First line of prose in a text (not a heading, list marker stripped), collapsed to one line. */
export function firstLine(text: string, max = 200): string {
  for (const raw of text.split("\n")) {
    const line = raw.replace(LIST_ITEM, "$1").replace(/^>\s?/, "").trim();
    if (line === "" || line.startsWith("#") || /^(```|~~~|<!--|\|?\s*-{3,})/.test(line)) continue;
    const flat = headingText(line).replace(/\s+/g, " ");
    return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
  }
  return "";
}
