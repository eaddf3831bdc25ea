/// <reference lib="dom" />
/**
 * The one way the console fetches a list. The API's list routes answer either a bare array (the
 * routes as they were) or `{ items, next }` with cursor paging (`limit`, `order=newest`, `cursor`).
 * Both are taken: a bare array is sorted newest first and paged here; a route that refuses the
 * paging parameters (a strict query schema without them) is asked again without them, and is then
 * remembered, so it is refused once per page load at most.
 */
import { api, ApiError } from "./dom.js";

export interface Page<T> {
  items: T[];
  /** The cursor of the next page, or null when this was the last. */
  next: string | null;
}

export interface ListRequest<T> {
  /** Filters the route understands (sent as query parameters). */
  params?: Record<string, string | undefined>;
  limit: number;
  cursor?: string | null;
  /** The time a row is ordered by (newest first) when the API returns a bare array. */
  newest: (row: T) => string;
}

const LOCAL = "local:";
const unpaged = new Set<string>();

function query(params: Record<string, string | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== "") q.set(k, v);
  const s = q.toString();
  return s ? `?${s}` : "";
}

function localPage<T>(rows: T[], r: ListRequest<T>): Page<T> {
  // The API lists oldest first: reversed first, rows of the same time stay newest first.
  const sorted = [...rows].reverse().sort((a, b) => {
    const x = r.newest(a);
    const y = r.newest(b);
    return x < y ? 1 : x > y ? -1 : 0;
  });
  const from = r.cursor?.startsWith(LOCAL) ? Number(r.cursor.slice(LOCAL.length)) || 0 : 0;
  const to = from + r.limit;
  return { items: sorted.slice(from, to), next: to < sorted.length ? `${LOCAL}${to}` : null };
}

export async function fetchList<T>(path: string, r: ListRequest<T>): Promise<Page<T>> {
  const filters = r.params ?? {};
  if (!unpaged.has(path) && !r.cursor?.startsWith(LOCAL)) {
    try {
      const data = await api<T[] | Page<T>>("GET", `${path}${query({ ...filters, limit: String(r.limit), order: "newest", cursor: r.cursor ?? undefined })}`);
      if (Array.isArray(data)) return localPage(data, { ...r, cursor: null });
      return { items: data.items, next: data.next ?? null };
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 400 && err.code === "invalid_query")) throw err;
      unpaged.add(path);
    }
  }
  const rows = await api<T[] | Page<T>>("GET", `${path}${query(filters)}`);
  return localPage(Array.isArray(rows) ? rows : rows.items, r);
}
