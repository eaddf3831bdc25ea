import type { SqlParam } from "./types.js";

/** A WHERE clause built from optional filters: each condition is added only when its value is given. */
export class Where {
  private readonly parts: string[] = [];
  readonly params: SqlParam[] = [];

  constructor(sql?: string, ...params: SqlParam[]) {
    if (sql !== undefined) this.add(sql, ...params);
  }

  add(sql: string, ...params: SqlParam[]): this {
    this.parts.push(sql);
    this.params.push(...params);
    return this;
  }

  /** `sql` with its one `?`, when `value` is defined. */
  when(sql: string, value: SqlParam | undefined): this {
    return value === undefined ? this : this.add(sql, value);
  }

  /** `column IN (…)`, when there are values. */
  in(column: string, values: readonly SqlParam[]): this {
    return values.length === 0 ? this : this.add(`${column} IN (${values.map(() => "?").join(", ")})`, ...values);
  }

  toString(): string {
    return this.parts.join(" AND ");
  }
}

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

/** ` LIMIT n` for a given limit (a whole number, never a parameter), else "". */
export function limitClause(limit: number | undefined): string {
  return limit === undefined ? "" : ` LIMIT ${Math.max(0, Math.floor(limit))}`;
}
