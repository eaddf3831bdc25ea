import { posix } from "node:path";

/**
 * Why `path` may not be edited, or null when it is inside one of `allowedPaths` (a lane's
 * `allowed_paths`: a prefix ending in '/' is a directory, anything else a file or a directory of
 * that name). The one rule for the doc_update lane's guard and the orchestrator's edit tools.
 */
export function pathRefusal(path: string, allowedPaths: readonly string[]): string | null {
  if (path.includes("\\") || path.includes("\0"))
    return `path "${path}" has a backslash or NUL: use a repository-relative path with '/'`;
  const normal = posix.normalize(path);
  if (posix.isAbsolute(path) || normal === ".." || normal.startsWith("../"))
    return `path "${path}" leaves the repository`;
  if (normal === ".git" || normal.startsWith(".git/")) return `path "${path}" is inside .git`;
  const allowed = allowedPaths.some((a) =>
    a.endsWith("/") ? normal.startsWith(a) : normal === a || normal.startsWith(`${a}/`),
  );
  return allowed ? null : `path "${path}" is outside the allowed paths (${allowedPaths.join(", ")})`;
}
