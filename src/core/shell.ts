/** Single-quote `s` for sh. */
export const sh = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
