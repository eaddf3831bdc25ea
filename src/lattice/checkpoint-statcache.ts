/**
 * The stat cache: for each file of a workspace, the (inode, size, mtime) it had when its content
 * hash was last computed. A file whose stat still matches is not read again, which is what makes
 * an incremental checkpoint cost only the changed files.
 *
 * "Racy" entries — files modified so recently that a later write within the same timestamp tick
 * would leave the stat unchanged — are never saved, so they are hashed again next time.
 */
import { readFileSync, type BigIntStats } from "node:fs";
import { join } from "node:path";
import { sha256Hex, writeFileAtomic } from "../core/index.js";

interface CacheFile {
  version: 1;
  workspace: string;
  /** path → [inode, size, mtime ns, sha256] */
  entries: Record<string, [string, number, string, string]>;
}

export interface CachedStat {
  ino: bigint;
  size: number;
  mtimeNs: bigint;
  sha256: string;
}

/** Filesystems with whole-second timestamps need a wider racy window than nanosecond ones. */
const RACY_NS_FINE = 100_000_000n;
const RACY_NS_COARSE = 2_000_000_000n;

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
    if (parsed?.version !== 1 || parsed.workspace !== cache.workspace || typeof parsed.entries !== "object") return cache;
    for (const [path, e] of Object.entries(parsed.entries)) {
      if (!Array.isArray(e) || e.length !== 4) continue;
      cache.entries.set(path, { ino: BigInt(e[0]), size: e[1], mtimeNs: BigInt(e[2]), sha256: e[3] });
    }
    return cache;
  }

  /** The content hash of `path` if its stat is unchanged since it was recorded. */
  lookup(path: string, stat: BigIntStats): string | undefined {
    const e = this.entries.get(path);
    if (!e) return undefined;
    return e.ino === stat.ino && BigInt(e.size) === stat.size && e.mtimeNs === stat.mtimeNs ? e.sha256 : undefined;
  }

  /** Record a hash unless the file is racy (modified within the timestamp granularity of `nowNs`). */
  record(path: string, stat: BigIntStats, sha256: string, nowNs: bigint): void {
    const window = stat.mtimeNs % 1_000_000_000n === 0n ? RACY_NS_COARSE : RACY_NS_FINE;
    if (stat.mtimeNs + window >= nowNs) {
      this.entries.delete(path);
      return;
    }
    this.entries.set(path, { ino: stat.ino, size: Number(stat.size), mtimeNs: stat.mtimeNs, sha256 });
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
    for (const [path, e] of this.entries) out.entries[path] = [e.ino.toString(), e.size, e.mtimeNs.toString(), e.sha256];
    writeFileAtomic(this.file, JSON.stringify(out));
  }
}
