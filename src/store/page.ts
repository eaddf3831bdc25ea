import { UsageError } from "../core/index.js";
import type { SqlParam } from "./types.js";
import type { Where } from "./where.js";

/** The two orders every paged list offers: by its sort key, descending or ascending. */
export const PAGE_ORDERS = ["newest", "oldest"] as const;
export type PageOrder = (typeof PAGE_ORDERS)[number];

export const DEFAULT_PAGE_LIMIT = 50;
export const MAX_PAGE_LIMIT = 500;

/** What a caller asks of a paged list: how many, which way, and where the previous page ended. */
export interface PageRequest {
  limit?: number;
  order?: PageOrder;
  /** The `next` of the previous page, unchanged; absent for the first page. */
  cursor?: string;
}

/** One page of a list and the cursor of the next (null on the last page). */
export interface Page<T> {
  items: T[];
  next: string | null;
}

/** A column of a list's sort key (the last ones make it unique, e.g. `created_ms, id`). */
export interface KeyColumn {
  sql: string;
  type: "number" | "string";
}

/**
 * A list paged by keyset: the sort key of the last item of a page is the cursor, and the next page
 * is the rows past it in the key's order. So a page costs a seek in the list's index and `limit`
 * rows whatever the size of the table, and rows added between pages are neither repeated nor
 * skipped (those added before the cursor, in the key's order, are not on later pages).
 */
export class Keyset {
  /**
   * @param list a short tag naming the list, kept in its cursors so that a cursor of another list
   *   is refused instead of read as a position in this one
   */
  constructor(
    readonly list: string,
    readonly columns: readonly KeyColumn[],
    readonly defaultOrder: PageOrder,
  ) {}

  /**
   * Add the cursor's condition to `where` and give the ORDER BY and LIMIT clauses (one row more
   * than the page, to know whether there is a next one).
   */
  plan(where: Where, request: PageRequest): { order: PageOrder; limit: number; sql: string } {
    const order = request.order ?? this.defaultOrder;
    const limit = pageLimit(request.limit);
    const dir = order === "newest" ? "DESC" : "ASC";
    if (request.cursor !== undefined) {
      const values = this.decode(request.cursor, order);
      const cols = this.columns.map((c) => c.sql);
      const op = order === "newest" ? "<" : ">";
      if (cols.length === 1) where.add(`${cols[0]} ${op} ?`, ...values);
      else where.add(`(${cols.join(", ")}) ${op} (${cols.map(() => "?").join(", ")})`, ...values);
    }
    return {
      order,
      limit,
      sql: ` ORDER BY ${this.columns.map((c) => `${c.sql} ${dir}`).join(", ")} LIMIT ${limit + 1}`,
    };
  }

  /** The page from the rows of a planned query: at most `limit` items, and the cursor after the last. */
  page<R, T>(
    rows: readonly R[],
    plan: { order: PageOrder; limit: number },
    key: (row: R) => readonly unknown[],
    map: (row: R) => T,
  ): Page<T> {
    const shown = rows.slice(0, plan.limit);
    const last = shown[shown.length - 1];
    const next = rows.length > plan.limit && last !== undefined ? this.encode(plan.order, key(last)) : null;
    return { items: shown.map(map), next };
  }

  private encode(order: PageOrder, values: readonly unknown[]): string {
    const typed = values.map((v, i) => (this.columns[i]!.type === "number" ? Number(v) : String(v)));
    return Buffer.from(JSON.stringify([this.list, order === "newest" ? "n" : "o", ...typed]), "utf8").toString(
      "base64url",
    );
  }

  private decode(cursor: string, order: PageOrder): SqlParam[] {
    const refuse = (why: string): never => {
      throw new UsageError(
        "invalid_cursor",
        `cursor is not valid for this list (${why}): pass the \`next\` of the previous page unchanged, with the same order, or leave cursor out for the first page`,
      );
    };
    if (cursor.length === 0 || cursor.length > 2048 || !/^[A-Za-z0-9_-]+$/.test(cursor))
      refuse("not a cursor this server gives");
    let parsed: unknown;
    try {
      parsed = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
    } catch {
      return refuse("not a cursor this server gives");
    }
    if (!Array.isArray(parsed) || parsed.length !== this.columns.length + 2)
      return refuse("not a cursor this server gives");
    const [list, dir, ...values] = parsed as unknown[];
    if (list !== this.list) refuse("it is a cursor of another list");
    if (dir !== (order === "newest" ? "n" : "o")) refuse(`it was given for order=${dir === "n" ? "newest" : "oldest"}`);
    return values.map((v, i) => {
      const want = this.columns[i]!.type;
      if (want === "number" ? typeof v !== "number" || !Number.isSafeInteger(v) : typeof v !== "string")
        refuse("not a cursor this server gives");
      return v as SqlParam;
    });
  }
}

/** A page size: the default when absent; refused outside 1..MAX_PAGE_LIMIT (the API refuses those first). */
export function pageLimit(limit: number | undefined): number {
  if (limit === undefined) return DEFAULT_PAGE_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE_LIMIT)
    throw new UsageError(
      "invalid_limit",
      `limit must be a whole number from 1 to ${MAX_PAGE_LIMIT}, got ${String(limit)}`,
    );
  return limit;
}
