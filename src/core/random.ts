/**
 * `bytes` random bytes as hex: the unique part of ids and temporary names. node:crypto is loaded
 * on first use rather than at import: most commands never need it, so their start-up need not
 * load it.
 */
export function randomHex(bytes: number): string {
  return process.getBuiltinModule("node:crypto").randomBytes(bytes).toString("hex");
}
