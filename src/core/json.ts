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
  if (i < keys.length || Object.getPrototypeOf(object) !== Object.prototype)
    return rebuild(object, sortedKeys(keys), 0);
  for (let k = 0; k < keys.length; k++) {
    const key = keys[k]!;
    const v = object[key];
    // An own "__proto__" (JSON.parse makes one) is lost by a rebuild, as it always was: so here too.
    if (v === undefined || key === "__proto__") return rebuild(object, keys, k);
    if (v !== null && typeof v === "object") {
      const sorted = sortKeys(v);
      if (sorted !== v) return rebuild(object, keys, k, sorted);
    }
  }
  return object;
}

/**
 * A copy of `object` with its members in the order of `keys`. The members before `from` are
 * canonical already and taken as they are, and `first`, when given, is member `from` sorted: each
 * member is sorted once (sorting it again here made a chain of objects cost twice as much per level).
 */
function rebuild(
  object: Record<string, unknown>,
  keys: string[],
  from: number,
  first?: unknown,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (let k = 0; k < keys.length; k++) {
    const key = keys[k]!;
    const v = object[key];
    if (v !== undefined) out[key] = k < from ? v : k === from && first !== undefined ? first : sortKeys(v);
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
