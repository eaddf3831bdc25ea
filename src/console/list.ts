/// <reference lib="dom" />
/**
 * The one way the console fetches a list: the API's cursor paging (`limit`, `order=newest`,
 * `cursor`), answered with `{ items, next }`.
 */
import { api } from "./dom.js";

export interface Page<T> {
  items: T[];
  /** The cursor of the next page, or null when this was the last. */
  next: string | null;
}

export interface ListRequest {
  /** Filters the route understands (sent as query parameters). */
  params?: Record<string, string | undefined>;
  limit: number;
  cursor?: string | null;
}

function query(params: Record<string, string | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== "") q.set(k, v);
  const s = q.toString();
  return s ? `?${s}` : "";
}

export async function fetchList<T>(path: string, r: ListRequest): Promise<Page<T>> {
  const data = await api<Page<T>>(
    "GET",
    `${path}${query({ ...(r.params ?? {}), limit: String(r.limit), order: "newest", cursor: r.cursor ?? undefined })}`,
  );
  return { items: data.items, next: data.next ?? null };
}
