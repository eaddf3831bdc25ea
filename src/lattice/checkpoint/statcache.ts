/**
 * The stat cache: for each file of a workspace, the (inode, size, mtime) it had when its content
 * hash was last computed. A file whose stat still matches is not read again, which is what makes
 * an incremental checkpoint cost only the changed files.
 *
 * "Racy" entries — files modified so recently that a later write within the same timestamp tick
 * would leave the stat unchanged — are never saved, so they are hashed again next time.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync, type Stats } from "node:fs";
import { dirname, join } from "node:path";
import { sha256Hex } from "../../core/index.js";

interface CacheFile {
  version: 1;
  workspace: string;
  /** path → [inode, size, mtime ms (fractional), sha256] */
  entries: Record<string, [number, number, number, string]>;
}

export interface CachedStat {
  ino: number;
  size: number;
  mtimeMs: number;
  sha256: string;
}

/** Filesystems with whole-second timestamps need a wider racy window than nanosecond ones. */
const RACY_MS_FINE = 100;
const RACY_MS_COARSE = 2000;

/**
 * Whether a file modified at `mtimeMs` may have been written again within the same timestamp
 * tick by `nowMs`, so that an unchanged stat does not prove unchanged content.
 */
export function isRacy(mtimeMs: number, nowMs: number): boolean {
  const window = mtimeMs % 1000 === 0 ? RACY_MS_COARSE : RACY_MS_FINE;
  return mtimeMs + window >= nowMs;
}

export class StatCache {
  private readonly entries = new Map<string, CachedStat>();

  private constructor(
    private readonly file: string,
    private readonly workspace: string,
  ) {}

  static pathFor(checkpointDir: string, workspace: string): string {
    return join(checkpointDir, "statcache", `${sha256Hex(workspace).slice(0, 16)}.json`);
  }

  /** Load the cache of `workspace` (an absolute real path); a missing or unreadable cache is empty. */
  static load(checkpointDir: string, workspace: string): StatCache {
    return StatCache.read(StatCache.pathFor(checkpointDir, workspace), workspace);
  }

  /** Load a cache file for whichever workspace it belongs to (used by prune). */
  static loadFile(file: string): StatCache {
    return StatCache.read(file, undefined);
  }

  private static read(file: string, workspace: string | undefined): StatCache {
    let parsed: CacheFile | undefined;
    try {
      parsed = JSON.parse(readFileSync(file, "utf8")) as CacheFile;
    } catch {
      // No cache yet, or a damaged one: every file is simply hashed again.
    }
    const cache = new StatCache(file, workspace ?? parsed?.workspace ?? "");
    if (parsed?.version !== 1 || parsed.workspace !== cache.workspace || typeof parsed.entries !== "object")
      return cache;
    for (const [path, e] of Object.entries(parsed.entries)) {
      if (!Array.isArray(e) || e.length !== 4) continue;
      cache.entries.set(path, { ino: e[0], size: e[1], mtimeMs: e[2], sha256: e[3] });
    }
    return cache;
  }

  /** The content hash of `path` if its stat is unchanged since it was recorded. */
  lookup(path: string, stat: Stats): string | undefined {
    const e = this.entries.get(path);
    if (!e) return undefined;
    return e.ino === stat.ino && e.size === stat.size && e.mtimeMs === stat.mtimeMs ? e.sha256 : undefined;
  }

  /** Record a hash unless the file is racy (modified within the timestamp granularity of `nowMs`). */
  record(path: string, stat: Stats, sha256: string, nowMs: number): void {
    if (isRacy(stat.mtimeMs, nowMs)) {
      this.entries.delete(path);
      return;
    }
    this.entries.set(path, { ino: stat.ino, size: stat.size, mtimeMs: stat.mtimeMs, sha256 });
  }

  /** Keep only the given paths (files that no longer exist drop out). */
  retain(paths: Set<string>): void {
    for (const path of this.entries.keys()) if (!paths.has(path)) this.entries.delete(path);
  }

  /** Drop entries whose blob is gone (after a prune), so they are hashed and stored again. */
  retainBlobs(has: (sha256: string) => boolean): void {
    for (const [path, e] of this.entries) if (!has(e.sha256)) this.entries.delete(path);
  }

  save(): void {
    const out: CacheFile = { version: 1, workspace: this.workspace, entries: {} };
    for (const [path, e] of this.entries) out.entries[path] = [e.ino, e.size, e.mtimeMs, e.sha256];
    // Renamed into place but not fsync'd: losing the cache in a power cut only means hashing again.
    mkdirSync(dirname(this.file), { recursive: true });
    const tmp = `${this.file}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify(out));
    renameSync(tmp, this.file);
  }
}
