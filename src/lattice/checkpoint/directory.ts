/**
 * A checkpoint directory as a whole: where it is, which checkpoints it holds, and pruning the old
 * ones with the blobs only they used.
 */
import { existsSync, lstatSync, readdirSync, unlinkSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { UsageError } from "../../core/index.js";
import { CHECKPOINT_ID } from "../protocol/index.js";
import type { CheckpointSummary } from "./create.js";
import { withDirLock } from "./lock.js";
import { manifestPath, readManifest } from "./manifest.js";
import { StatCache } from "./statcache.js";

export const CHECKPOINT_DIR_ENV = "LATTICE_CHECKPOINT_DIR";

/**
 * Where checkpoints of `workspace` go: `$LATTICE_CHECKPOINT_DIR` when set (the supervisor sets
 * it), else `<parent of workspace>/.lattice-checkpoints/<workspace name>` — outside the
 * workspace, so restoring never touches it, and one directory per workspace.
 */
export function defaultCheckpointDir(workspace: string, env: NodeJS.ProcessEnv = process.env): string {
  const fromEnv = env[CHECKPOINT_DIR_ENV];
  if (fromEnv) return resolve(fromEnv);
  const ws = resolve(workspace);
  return join(dirname(ws), ".lattice-checkpoints", basename(ws) || "workspace");
}

export function checkpointExists(dir: string, id: string): boolean {
  return CHECKPOINT_ID.test(id) && existsSync(manifestPath(dir, id));
}

/** Every checkpoint in `dir`, oldest first. */
export function listCheckpoints(dir: string): CheckpointSummary[] {
  let names: string[];
  try {
    names = readdirSync(join(dir, "manifests"));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw err;
  }
  const out: CheckpointSummary[] = [];
  for (const name of names) {
    const id = name.replace(/\.json$/, "");
    if (!name.endsWith(".json") || !CHECKPOINT_ID.test(id)) continue;
    const m = readManifest(dir, id);
    out.push({ id: m.id, created_at: m.created_at, workspace: m.workspace, files: m.files, bytes: m.bytes });
  }
  return out.sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id));
}

export interface PruneResult {
  removed_checkpoints: string[];
  kept: number;
  removed_blobs: number;
  freed_bytes: number;
}

/** Keep the newest `keep` checkpoints, delete the others and every blob no kept checkpoint uses. */
export function pruneCheckpoints(dir: string, keep: number): PruneResult {
  if (!Number.isInteger(keep) || keep < 0)
    throw new UsageError(
      "invalid_option",
      `--keep expects a whole number of checkpoints to keep (0 or more), got ${keep}`,
    );
  if (!existsSync(dir)) return { removed_checkpoints: [], kept: 0, removed_blobs: 0, freed_bytes: 0 };
  return withDirLock(dir, () => {
    const all = listCheckpoints(dir);
    const doomed = all.slice(0, Math.max(0, all.length - keep));
    const kept = all.slice(doomed.length);
    for (const c of doomed) unlinkSync(manifestPath(dir, c.id));
    const referenced = new Set<string>();
    for (const c of kept)
      for (const e of readManifest(dir, c.id).entries) if (e.type === "file") referenced.add(e.sha256);
    let removedBlobs = 0;
    let freed = 0;
    const blobRoot = join(dir, "blobs");
    if (existsSync(blobRoot)) {
      for (const prefix of readdirSync(blobRoot)) {
        const prefixDir = join(blobRoot, prefix);
        // Leftover temporary files of an interrupted create go too (we hold the lock).
        if (prefix.startsWith(".tmp-")) {
          unlinkSync(prefixDir);
          continue;
        }
        for (const rest of readdirSync(prefixDir)) {
          if (referenced.has(prefix + rest)) continue;
          const p = join(prefixDir, rest);
          freed += lstatSync(p).size;
          unlinkSync(p);
          removedBlobs++;
        }
      }
    }
    const cacheDir = join(dir, "statcache");
    if (existsSync(cacheDir)) {
      for (const name of readdirSync(cacheDir)) {
        if (!name.endsWith(".json")) continue;
        const cache = StatCache.loadFile(join(cacheDir, name));
        cache.retainBlobs((sha) => referenced.has(sha));
        cache.save();
      }
    }
    return {
      removed_checkpoints: doomed.map((c) => c.id),
      kept: kept.length,
      removed_blobs: removedBlobs,
      freed_bytes: freed,
    };
  });
}
