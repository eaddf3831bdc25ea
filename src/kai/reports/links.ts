import type { Evidence } from "./schema.js";

export interface LinkBase {
  /** `https://github.com/owner/name`. */
  web_url: string;
  /** The revision files are linked at (a path's own when given, else this; default `HEAD`, GitHub's default branch). */
  revision?: string | null;
  /** Revisions of particular files (the STATE document at its last change before the cutoff). */
  file_revisions?: Record<string, string | null>;
}

/** The evidence's page on GitHub, or null for what GitHub does not show (entries, pmagent runs, proposals). */
export function evidenceUrl(e: Pick<Evidence, "type" | "id" | "path">, base: LinkBase): string | null {
  const root = base.web_url.replace(/\/$/, "");
  switch (e.type) {
    case "pr":
      return /^\d+$/.test(e.id) ? `${root}/pull/${e.id}` : null;
    case "issue":
      return /^\d+$/.test(e.id) ? `${root}/issues/${e.id}` : null;
    case "commit":
      return /^[0-9a-f]{7,40}$/i.test(e.id) ? `${root}/commit/${e.id}` : null;
    case "workflow_run":
      return /^\d+$/.test(e.id) ? `${root}/actions/runs/${e.id}` : null;
    case "file": {
      // A path may point into the file (`STATE/x.md#section`): the anchor stays the URL's fragment.
      const [path = "", anchor] = (e.path ?? e.id).split(/#(.*)/s);
      const rev = base.file_revisions?.[path] ?? base.revision ?? "HEAD";
      return `${root}/blob/${rev}/${path.split("/").map(encodeURIComponent).join("/")}${anchor ? `#${anchor}` : ""}`;
    }
    default:
      return null;
  }
}

const EVIDENCE_TYPES = new Set(["issue", "pr", "commit", "file", "workflow_run"]);

/**
 * A payload with a URL on every piece of evidence GitHub shows that has none yet, and on every
 * pull request row of `by_category.prs`. Walks the payload, so new evidence lists get links too.
 */
export function withUrls<T>(data: T, base: LinkBase): T {
  const walk = (v: unknown, key: string | null): unknown => {
    if (Array.isArray(v)) return v.map((x) => walk(x, key));
    if (v === null || typeof v !== "object") return v;
    const o = Object.fromEntries(Object.entries(v as Record<string, unknown>).map(([k, x]) => [k, walk(x, k)]));
    if (typeof o.type === "string" && EVIDENCE_TYPES.has(o.type) && typeof o.id === "string" && o.url === undefined) {
      const url = evidenceUrl(o as Evidence, base);
      if (url !== null) o.url = url;
    }
    if (key === "prs" && typeof o.number === "number" && o.url === null)
      o.url = `${base.web_url.replace(/\/$/, "")}/pull/${o.number}`;
    return o;
  };
  return walk(data, null) as T;
}
