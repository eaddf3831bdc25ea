import { sha256Hex } from "./json.js";

/**
 * contentHash of a JSON text's value, from the text's UTF-8 bytes (`bytes` from `start` to `end`),
 * without building the value or a string. The canonical form differs from such a text only in the
 * order of object members, so the scan notes where each value lies and hashes the text's own bytes
 * when every object is in key order already, or writes them out with the members reordered.
 * Returns null when the text holds what this scan leaves to the value path
 * (`contentHash(JSON.parse(text))`): a backslash (escapes), whitespace, a number other than a
 * short integer, a key that is not ASCII, is empty, starts with a digit (an array index, which
 * objects order first), is duplicated or is `__proto__`. The text must be valid JSON (callers parse
 * it first); anything unexpected returns null.
 */
export function contentHashOfJson(bytes: Uint8Array, start: number, end: number): string | null {
  if (end - start > CANON_MAX_BYTES) return null;
  scan.src = bytes;
  scan.end = end;
  scan.at = start;
  scan.entries = 0;
  scan.nodes = 0;
  scan.ordered = 0;
  scan.open = 0;
  scan.depth = 0;
  const root = scanValue();
  let id: string | null = null;
  if (root !== FAIL && scan.at === end)
    id = sha256Hex(root === AS_IS ? bytes.subarray(start, end) : scan.out.subarray(0, write(root, 0)));
  scan.src = EMPTY;
  return id;
}

const EMPTY: Uint8Array = new Uint8Array(0);
/** Texts longer than this take the value path (the output buffer is this size). */
const CANON_MAX_BYTES = 64 * 1024;
/**
 * Values noted at once: those of the containers being scanned, and of those whose bytes are not
 * canonical as written (a canonical container's are given back). A text needing more takes the
 * value path.
 */
const MAX_ENTRIES = 8192;
/** An object out of key order with more members than this takes the value path (its members are insertion-sorted). */
const MAX_REORDERED_MEMBERS = 32;
/** Nesting deeper than this takes the value path (the scan recurses). */
const MAX_DEPTH = 512;

/** What scanning a value gives: its bytes are canonical as they are, or the text is not for this scan; else a node. */
const AS_IS = -1;
const FAIL = -2;

/**
 * The scan's state (one scan at a time: it never yields). Each member of an object and item of an
 * array is an entry: where its key lies (members), where its value lies, and the node that says
 * how to write the value when its bytes are not canonical as they are (`AS_IS` otherwise). A node
 * is an object or array to write out: its entries, in the order to write them, are
 * `order[first … first + count)`. `stack` holds the entries of the containers being scanned, `open`
 * its height; entries of a container found canonical as it is are given back.
 */
const scan = {
  src: EMPTY,
  at: 0,
  end: 0,
  depth: 0,
  keyStart: new Int32Array(MAX_ENTRIES),
  keyEnd: new Int32Array(MAX_ENTRIES),
  valueStart: new Int32Array(MAX_ENTRIES),
  valueEnd: new Int32Array(MAX_ENTRIES),
  child: new Int32Array(MAX_ENTRIES),
  entries: 0,
  stack: new Int32Array(MAX_ENTRIES),
  open: 0,
  order: new Int32Array(MAX_ENTRIES),
  ordered: 0,
  nodeFirst: new Int32Array(MAX_ENTRIES),
  nodeCount: new Int32Array(MAX_ENTRIES),
  nodeIsObject: new Uint8Array(MAX_ENTRIES),
  nodes: 0,
  out: new Uint8Array(CANON_MAX_BYTES),
};

const QUOTE = 0x22;
const COMMA = 0x2c;
const COLON = 0x3a;
const BACKSLASH = 0x5c;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;

function scanValue(): number {
  const { src, end } = scan;
  const at = scan.at;
  const c = src[at];
  if (c === QUOTE) {
    for (let i = at + 1; i < end; i++) {
      const b = src[i]!;
      if (b === QUOTE) {
        scan.at = i + 1;
        return AS_IS;
      }
      if (b === BACKSLASH) return FAIL; // escapes are the value path's
    }
    return FAIL;
  }
  if (c === OPEN_BRACE || c === OPEN_BRACKET) {
    if (++scan.depth > MAX_DEPTH) return FAIL;
    const v = scanContainer(c === OPEN_BRACE);
    scan.depth--;
    return v;
  }
  // true, false, null or a number: canonical as they are when a literal or an integer of up to 15
  // digits without a leading zero (JSON.stringify writes those so).
  let i = at;
  while (i < end) {
    const b = src[i]!;
    if (b === COMMA || b === CLOSE_BRACE || b === CLOSE_BRACKET) break;
    i++;
  }
  const len = i - at;
  if (c === 0x74 || c === 0x6e || c === 0x66) {
    // Valid JSON: a token of the word's length starting so is the word (one with a space is longer).
    if (len !== (c === 0x66 ? 5 : 4)) return FAIL;
  } else {
    const neg = c === 0x2d ? 1 : 0;
    const digits = len - neg;
    if (
      digits < 1 ||
      digits > 15 ||
      (src[at + neg] === 0x30 && digits > 1) ||
      (neg === 1 && digits === 1 && src[at + 1] === 0x30)
    )
      return FAIL;
    for (let k = at + neg; k < i; k++) if (src[k]! < 0x30 || src[k]! > 0x39) return FAIL;
  }
  scan.at = i;
  return AS_IS;
}

/**
 * An object (its keys checked as the scan takes them, its members put in key order) or an array,
 * from its opening bracket: AS_IS when it and everything in it is canonical as written.
 */
function scanContainer(isObject: boolean): number {
  const { src, end, keyStart, keyEnd, valueStart, valueEnd, child, stack } = scan;
  const close = isObject ? CLOSE_BRACE : CLOSE_BRACKET;
  scan.at++;
  if (src[scan.at] === close) {
    scan.at++;
    return AS_IS;
  }
  const firstEntry = scan.entries;
  const base = scan.open;
  let sorted = true;
  let asIs = true;
  let previous = -1;
  for (;;) {
    const m = scan.entries++;
    if (m >= MAX_ENTRIES) return FAIL;
    if (isObject) {
      const at = scan.at;
      if (src[at] !== QUOTE) return FAIL;
      // A key starting with a digit may be an array index (objects order those first): the value
      // path's, as is the rare empty key.
      const first = src[at + 1]!;
      if (first === QUOTE || (first >= 0x30 && first <= 0x39)) return FAIL;
      let i = at + 1;
      for (;;) {
        if (i >= end) return FAIL;
        const b = src[i]!;
        if (b === QUOTE) break;
        if (b === BACKSLASH || b >= 0x80) return FAIL; // keys are compared as ASCII
        i++;
      }
      if (src[i + 1] !== COLON) return FAIL;
      keyStart[m] = at + 1;
      keyEnd[m] = i;
      if (i - at - 1 === PROTO.length && isProto(at + 1)) return FAIL;
      if (previous !== -1) {
        const d = compareKeys(previous, m);
        if (d === 0) return FAIL; // a duplicate key: JSON.parse keeps the last
        if (d > 0) sorted = false;
      }
      previous = m;
      scan.at = i + 2;
    }
    valueStart[m] = scan.at;
    const v = scanValue();
    if (v === FAIL) return FAIL;
    if (v !== AS_IS) asIs = false;
    child[m] = v;
    valueEnd[m] = scan.at;
    stack[scan.open++] = m;
    const c = src[scan.at++];
    if (c === close) break;
    if (c !== COMMA) return FAIL;
  }
  const count = scan.open - base;
  scan.open = base;
  if (sorted && asIs) {
    scan.entries = firstEntry;
    return AS_IS;
  }
  if (!sorted && count > MAX_REORDERED_MEMBERS) return FAIL;
  // The entries in the order to write them: an object's members by key (insertion sort: few
  // members), checked for duplicates on the way.
  const order = scan.order;
  const o = scan.ordered;
  scan.ordered += count;
  for (let k = 0; k < count; k++) {
    const m = stack[base + k]!;
    let j = k - 1;
    if (!sorted)
      while (j >= 0) {
        const d = compareKeys(order[o + j]!, m);
        if (d === 0) return FAIL;
        if (d < 0) break;
        order[o + j + 1] = order[o + j]!;
        j--;
      }
    order[o + j + 1] = m;
  }
  const n = scan.nodes++;
  scan.nodeFirst[n] = o;
  scan.nodeCount[n] = count;
  scan.nodeIsObject[n] = isObject ? 1 : 0;
  return n;
}

/** Writes node `n` into `out` from `at`, its members in key order; returns where it ends. */
function write(n: number, at: number): number {
  const { out, order, keyStart, valueStart, valueEnd, child } = scan;
  const isObject = scan.nodeIsObject[n] === 1;
  const first = scan.nodeFirst[n]!;
  const count = scan.nodeCount[n]!;
  out[at++] = isObject ? OPEN_BRACE : OPEN_BRACKET;
  for (let k = 0; k < count; k++) {
    if (k > 0) out[at++] = COMMA;
    const m = order[first + k]!;
    if (isObject) at = copy(keyStart[m]! - 1, valueStart[m]!, at); // `"key":`
    const c = child[m]!;
    at = c === AS_IS ? copy(valueStart[m]!, valueEnd[m]!, at) : write(c, at);
  }
  out[at++] = isObject ? CLOSE_BRACE : CLOSE_BRACKET;
  return at;
}

/** Copies the text's bytes `from`–`to` into `out` at `at`; returns where they end. */
function copy(from: number, to: number, at: number): number {
  const { src, out } = scan;
  // Byte by byte for the short runs (keys, numbers, most strings); a view for long ones.
  if (to - from > 64) {
    out.set(src.subarray(from, to), at);
    return at + to - from;
  }
  for (let k = from; k < to; k++) out[at++] = src[k]!;
  return at;
}

const PROTO = "__proto__";
/** The key at `from` in the text is `__proto__` (its length already checked). */
function isProto(from: number): boolean {
  for (let k = 0; k < PROTO.length; k++) if (scan.src[from + k] !== PROTO.charCodeAt(k)) return false;
  return true;
}

/** Entries `a` and `b`'s keys (ASCII) in code-unit order, as canonicalJson sorts them. */
function compareKeys(a: number, b: number): number {
  const { src, keyStart, keyEnd } = scan;
  const as = keyStart[a]!;
  const bs = keyStart[b]!;
  const al = keyEnd[a]! - as;
  const bl = keyEnd[b]! - bs;
  const l = Math.min(al, bl);
  for (let k = 0; k < l; k++) {
    const d = src[as + k]! - src[bs + k]!;
    if (d !== 0) return d;
  }
  return al - bl;
}
