/**
 * Limits on JSON that comes from outside (sprite output, entries, request bodies): how deep it
 * may nest, and text that no store can hold. Deep nesting is refused before anything recurses
 * over the value (canonical JSON, redaction, zod), which would otherwise overflow the stack and
 * surface as an untyped RangeError; U+0000 is refused because PostgreSQL text cannot hold it.
 */

/**
 * How deep JSON from outside may nest (objects and arrays, the outermost counting as 1). An event
 * envelope uses 2; 64 leaves payloads room while keeping every recursion over a value shallow.
 */
export const MAX_JSON_DEPTH = 64;

const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;

function count(text: string, ch: string, stopAbove: number): number {
  let n = 0;
  for (let i = text.indexOf(ch); i !== -1 && n <= stopAbove; i = text.indexOf(ch, i + 1)) n++;
  return n;
}

/**
 * Whether JSON `text` nests deeper than `max`. Cheap on the usual line: nesting needs as many
 * `{`/`[` as levels, and counting those is a native scan; only text with more of them than `max`
 * gets the exact scan (brackets inside strings do not count).
 */
export function jsonTooDeep(text: string, max = MAX_JSON_DEPTH): boolean {
  if (text.length <= 2 * max) return false;
  const braces = count(text, "{", max);
  if (braces + count(text, "[", max - braces) <= max) return false;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > max) return true;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return false;
}

/** Whether a parsed value nests deeper than `max` (recursion bounded by `max`, whatever the value). */
export function valueTooDeep(value: unknown, max = MAX_JSON_DEPTH): boolean {
  const walk = (v: unknown, depth: number): boolean => {
    if (v === null || typeof v !== "object") return false;
    if (depth > max) return true;
    for (const item of Array.isArray(v) ? v : Object.values(v as Record<string, unknown>))
      if (walk(item, depth + 1)) return true;
    return false;
  };
  return walk(value, 1);
}

/** The message for JSON nested too deep (one wording everywhere). */
export function tooDeepMessage(max = MAX_JSON_DEPTH): string {
  return `nests deeper than ${max} levels of objects and arrays (MAX_JSON_DEPTH); flatten it`;
}

/**
 * The JSON path (`$.a[2]["k"]`) of the first key or string in `value` holding U+0000, or null.
 * Callers look only when the text holds `\u0000` (a raw NUL is not valid inside JSON), so the
 * usual value is never walked. Bounded by MAX_JSON_DEPTH like valueTooDeep.
 */
export function nulPath(value: unknown, max = MAX_JSON_DEPTH): string | null {
  const key = (k: string) => (/^[A-Za-z_][A-Za-z0-9_]*$/.test(k) ? `.${k}` : `[${JSON.stringify(k)}]`);
  const walk = (v: unknown, path: string, depth: number): string | null => {
    if (typeof v === "string") return v.includes("\0") ? path : null;
    if (v === null || typeof v !== "object" || depth > max) return null;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        const found = walk(v[i], `${path}[${i}]`, depth + 1);
        if (found) return found;
      }
      return null;
    }
    for (const [k, item] of Object.entries(v as Record<string, unknown>)) {
      if (k.includes("\0")) return `${path}${key(k)} (the key)`;
      const found = walk(item, `${path}${key(k)}`, depth + 1);
      if (found) return found;
    }
    return null;
  };
  return walk(value, "$", 1);
}

/** The message for U+0000 in a value (one wording everywhere). */
export function nulMessage(path: string): string {
  return `${path} holds U+0000 (NUL), which the store cannot keep as text; leave it out or encode it (e.g. base64)`;
}

/**
 * Text as a store keeps it: U+0000 (which PostgreSQL text cannot hold) becomes U+FFFD, as bytes
 * that are not UTF-8 already do when decoded. For diagnostic text (logs, excerpts, reasons), the
 * same on both stores; events are refused instead (see nulPath).
 */
export function storableText(text: string): string {
  return text.includes("\0") ? text.replaceAll("\0", "\uFFFD") : text;
}
