import type { hash as cryptoHash } from "node:crypto";

/**
 * Canonical JSON: object keys sorted, no insignificant whitespace. Used wherever identity is a
 * hash of content (event identity, idempotent re-posts), so that key order never matters.
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

/**
 * The value with every object's keys in sorted order and undefined members dropped. A plain
 * object that is already so (often the case, e.g. most event payloads) is returned as it is
 * rather than copied: canonical JSON is computed for every event stored, and the copies were
 * most of its cost.
 */
function sortKeys(value: unknown): unknown {
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      const sorted = sortKeys(item);
      if (sorted !== item) (out ??= value.slice())[i] = sorted;
    }
    return out ?? value;
  }
  const object = value as Record<string, unknown>;
  const keys = Object.keys(object);
  let i = 1;
  while (i < keys.length && keys[i - 1]! < keys[i]!) i++;
  if (i < keys.length || Object.getPrototypeOf(object) !== Object.prototype) return rebuild(object, sortedKeys(keys));
  for (const key of keys) {
    const v = object[key];
    // An own "__proto__" (JSON.parse makes one) is lost by a rebuild, as it always was: so here too.
    if (v === undefined || key === "__proto__" || (v !== null && typeof v === "object" && sortKeys(v) !== v))
      return rebuild(object, keys);
  }
  return object;
}

function rebuild(object: Record<string, unknown>, keys: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of keys) {
    const v = object[key];
    if (v !== undefined) out[key] = sortKeys(v);
  }
  return out;
}

/** Keys in code-unit order, as Array.prototype.sort orders strings; small lists (the usual) by insertion, without sort's call overhead. */
function sortedKeys(keys: string[]): string[] {
  if (keys.length > 16) return keys.sort();
  for (let i = 1; i < keys.length; i++) {
    const key = keys[i]!;
    let j = i - 1;
    while (j >= 0 && keys[j]! > key) {
      keys[j + 1] = keys[j]!;
      j--;
    }
    keys[j + 1] = key;
  }
  return keys;
}

/**
 * crypto.hash is a one-shot digest: no Hash object per call, about twice as fast on short input.
 * node:crypto is loaded on the first hash rather than at import: most commands never hash, so their
 * start-up need not load it (memoized: the ingest hashes every event).
 */
let hash: typeof cryptoHash | undefined;
export function sha256Hex(data: string | Uint8Array): string {
  return (hash ??= process.getBuiltinModule("node:crypto").hash)("sha256", data, "hex");
}

/** Hash of the canonical JSON form of a value. */
export function contentHash(value: unknown): string {
  return sha256Hex(canonicalJson(value));
}

/**
 * contentHash of a JSON text's value, from the text's UTF-8 bytes (`bytes` from `start` to `end`),
 * without building the value or a string: the canonical form's bytes are the text's own when it is
 * canonical already (keys sorted, no whitespace, numbers as JSON.stringify writes them), or its
 * members reordered, copied into a scratch buffer. Returns null when the text holds what this scan
 * leaves to the value path (`contentHash(JSON.parse(text))`): a backslash (escapes), whitespace,
 * a number other than a short integer, a key that is not ASCII, starts with a digit (an array
 * index, which objects order first), is duplicated or is `__proto__`. The text must be valid JSON
 * (callers parse it first); anything unexpected returns null.
 */
export function contentHashOfJson(bytes: Uint8Array, start: number, end: number): string | null {
  if (end - start > canon.out.length) return null;
  canon.src = bytes;
  canon.end = end;
  canon.at = start;
  canon.n = 0;
  canon.members = 0;
  const ok = canonValue() && canon.at === end;
  canon.src = EMPTY;
  return ok ? sha256Hex(canon.out.subarray(0, canon.n)) : null;
}

const EMPTY: Uint8Array = new Uint8Array(0);
/** Texts longer than this take the value path (the scratch buffers are this size). */
const CANON_MAX_BYTES = 64 * 1024;

/**
 * The scan's state (one scan at a time: it never yields): the text, where the scan is, the
 * canonical bytes written so far (`out` up to `n`), and a stack of the members of the objects
 * being scanned (per member: where its key starts and ends in `out`, where the member ends).
 */
const canon = {
  src: EMPTY,
  at: 0,
  end: 0,
  out: new Uint8Array(CANON_MAX_BYTES),
  tmp: new Uint8Array(CANON_MAX_BYTES),
  n: 0,
  keyStart: new Int32Array(4096),
  keyEnd: new Int32Array(4096),
  memberEnd: new Int32Array(4096),
  members: 0,
  /** An object's members in key order, while it is reordered. */
  order: new Int32Array(4096),
};

function canonValue(): boolean {
  const { src, out, end } = canon;
  const at = canon.at;
  const c = src[at];
  if (c === 0x22) {
    // A string, copied as it is scanned (one pass): its bytes up to the closing quote.
    let n = canon.n;
    out[n++] = 0x22;
    for (let i = at + 1; i < end; i++) {
      const b = src[i]!;
      if (b === 0x22) {
        out[n++] = 0x22;
        canon.n = n;
        canon.at = i + 1;
        return true;
      }
      if (b === 0x5c) return false; // escapes are the value path's
      out[n++] = b;
    }
    return false;
  }
  if (c === 0x7b) return canonObject();
  if (c === 0x5b) return canonArray();
  // true, false, null or a number: bytes up to the next delimiter, copied as they are when they are
  // a literal or an integer of up to 15 digits without a leading zero (JSON.stringify writes those so).
  let i = at;
  let n = canon.n;
  while (i < end) {
    const b = src[i]!;
    if (b === 0x2c || b === 0x7d || b === 0x5d) break;
    out[n++] = b;
    i++;
  }
  const len = i - at;
  if (c === 0x74 || c === 0x6e || c === 0x66) {
    // Valid JSON: a token of the word's length starting so is the word (one with a space is longer).
    if (len !== (c === 0x66 ? 5 : 4)) return false;
  } else {
    const neg = c === 0x2d ? 1 : 0;
    const digits = len - neg;
    if (
      digits < 1 ||
      digits > 15 ||
      (src[at + neg] === 0x30 && digits > 1) ||
      (neg === 1 && digits === 1 && src[at + 1] === 0x30)
    )
      return false;
    for (let k = at + neg; k < i; k++) if (src[k]! < 0x30 || src[k]! > 0x39) return false;
  }
  canon.n = n;
  canon.at = i;
  return true;
}

function canonArray(): boolean {
  const { src, out } = canon;
  out[canon.n++] = 0x5b;
  canon.at++;
  if (src[canon.at] === 0x5d) {
    out[canon.n++] = 0x5d;
    canon.at++;
    return true;
  }
  for (;;) {
    if (!canonValue()) return false;
    const c = src[canon.at++];
    out[canon.n++] = c!;
    if (c === 0x5d) return true;
    if (c !== 0x2c) return false;
  }
}

function canonObject(): boolean {
  const { src, out, end, keyStart, keyEnd, memberEnd } = canon;
  const open = canon.n;
  out[canon.n++] = 0x7b;
  canon.at++;
  if (src[canon.at] === 0x7d) {
    out[canon.n++] = 0x7d;
    canon.at++;
    return true;
  }
  const base = canon.members;
  let sorted = true;
  for (;;) {
    const at = canon.at;
    if (src[at] !== 0x22) return false;
    // An empty key sorts first and is rare, a key starting with a digit may be an array index
    // (objects order those first): both are the value path's.
    const first = src[at + 1]!;
    if (first === 0x22 || (first >= 0x30 && first <= 0x39)) return false;
    const m = canon.members++;
    if (m >= keyStart.length) return false;
    // The member in `out` without its separator: `"key":value`. The key is copied as it is
    // scanned, ASCII only (no escape).
    let n = canon.n;
    out[n++] = 0x22;
    const kStart = n;
    let i = at + 1;
    for (;;) {
      if (i >= end) return false;
      const b = src[i]!;
      if (b === 0x22) break;
      if (b === 0x5c || b >= 0x80) return false;
      out[n++] = b;
      i++;
    }
    if (src[i + 1] !== 0x3a) return false;
    keyStart[m] = kStart;
    keyEnd[m] = n;
    if (n - kStart === PROTO.length && isProto(kStart)) return false;
    out[n++] = 0x22;
    out[n++] = 0x3a;
    canon.n = n;
    canon.at = i + 2;
    if (!canonValue()) return false;
    memberEnd[m] = canon.n;
    if (m > base && compareKeys(m - 1, m) >= 0) sorted = false;
    const c = src[canon.at++];
    if (c === 0x7d) break;
    if (c !== 0x2c) return false;
    out[canon.n++] = 0x2c;
  }
  out[canon.n++] = 0x7d;
  const count = canon.members - base;
  canon.members = base;
  if (sorted) return true;
  // Reorder the members (insertion sort of their indices by key: few members), through `tmp`.
  const order = canon.order;
  for (let i = 0; i < count; i++) {
    const m = base + i;
    let j = i - 1;
    while (j >= 0) {
      const d = compareKeys(order[j]!, m);
      if (d === 0) return false; // a duplicate key: JSON.parse keeps the last
      if (d < 0) break;
      order[j + 1] = order[j]!;
      j--;
    }
    order[j + 1] = m;
  }
  const tmp = canon.tmp;
  let t = 0;
  for (let i = 0; i < count; i++) {
    if (i > 0) tmp[t++] = 0x2c;
    const m = order[i]!;
    const to = memberEnd[m]!;
    for (let k = keyStart[m]! - 1; k < to; k++) tmp[t++] = out[k]!;
  }
  for (let k = 0; k < t; k++) out[open + 1 + k] = tmp[k]!;
  return true;
}

const PROTO = "__proto__";
/** The key copied to `out` at `from` is `__proto__`. */
function isProto(from: number): boolean {
  for (let k = 0; k < PROTO.length; k++) if (canon.out[from + k] !== PROTO.charCodeAt(k)) return false;
  return true;
}

/** Members `a` and `b`'s keys (ASCII) in code-unit order, as canonicalJson sorts them. */
function compareKeys(a: number, b: number): number {
  const { out, keyStart, keyEnd } = canon;
  const as = keyStart[a]!;
  const bs = keyStart[b]!;
  const al = keyEnd[a]! - as;
  const bl = keyEnd[b]! - bs;
  const l = Math.min(al, bl);
  for (let k = 0; k < l; k++) {
    const d = out[as + k]! - out[bs + k]!;
    if (d !== 0) return d;
  }
  return al - bl;
}
