/** IN lists stay well under SQLite's and PostgreSQL's parameter limits. */
const IN_CHUNK = 500;

/** Run `f` over `values` in chunks of at most 500 (one `IN (…)` query each) and concatenate the rows. */
export async function inChunks<T, R>(values: readonly T[], f: (chunk: T[]) => Promise<R[]>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < values.length; i += IN_CHUNK) out.push(...(await f(values.slice(i, i + IN_CHUNK))));
  return out;
}

/** `?, ?, …` for n parameters. */
export const marks = (n: number): string => Array.from({ length: n }, () => "?").join(", ");
