/**
 * Creating a checkpoint: a content-addressed snapshot of a workspace in a checkpoint directory.
 *
 *   <dir>/blobs/ab/cdef…       one read-only file per distinct content (sha256)
 *   <dir>/manifests/chk_….json one manifest per checkpoint (see manifest.ts)
 *   <dir>/statcache/….json     per workspace: stat → hash, so unchanged files are not read again
 *
 * `.lattice/` is never part of a checkpoint and survives a restore (the outbox and the resume
 * marker must not be rewound). `.git/` is part of it: a sprite that commits before WAITING gets
 * its commits and branch back on resume.
 */
import { mkdirSync, readlinkSync } from "node:fs";
import { nowIso, RefusedError, writeFileAtomic, randomHex } from "../../core/index.js";
import { BlobStore } from "./blobs.js";
import { withDirLock } from "./lock.js";
import { manifestPath, MANIFEST_VERSION, type Manifest, type ManifestEntry } from "./manifest.js";
import { StatCache } from "./statcache.js";
import { excludedPaths, walkWorkspace, workspaceRoot, type WalkedNode } from "./walk.js";

export interface CheckpointSummary {
  id: string;
  created_at: string;
  workspace: string;
  /** Regular files in the snapshot and their total size. */
  files: number;
  bytes: number;
}

export interface CreateResult extends CheckpointSummary {
  /** Files whose content was read (new or changed since the stat cache saw them). */
  hashed_files: number;
  /** Blobs written by this checkpoint and their size: what the checkpoint cost on disk. */
  new_blobs: number;
  new_bytes: number;
}

const modeOf = (node: WalkedNode) => node.stat.mode & 0o7777;

/** A file or link deleted while the checkpoint runs is simply not in it; an unreadable one is an error. */
function readOrSkip<T>(node: WalkedNode, read: () => T): T | undefined {
  try {
    return read();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return undefined;
    if (code === "EACCES" || code === "EPERM") {
      throw new RefusedError(
        "checkpoint_unreadable",
        `cannot checkpoint ${node.path}: permission denied (make it readable by the sprite's user, or remove it from the workspace)`,
      );
    }
    throw err;
  }
}

/** Snapshot `workspace` into checkpoint directory `dir`; returns the new checkpoint's id and figures. */
export function createCheckpoint(workspace: string, dir: string): CreateResult {
  const root = workspaceRoot(workspace);
  mkdirSync(dir, { recursive: true });
  return withDirLock(dir, () => {
    const scanStart = Date.now();
    const blobs = new BlobStore(dir);
    const cache = StatCache.load(dir, root);
    const nodes = walkWorkspace(root, excludedPaths(root, dir));
    const entries: ManifestEntry[] = [];
    const seen = new Set<string>();
    let files = 0;
    let bytes = 0;
    let hashed = 0;
    let newBlobs = 0;
    let newBytes = 0;
    for (const node of nodes) {
      if (node.type === "dir") entries.push({ type: "dir", path: node.path, mode: modeOf(node) });
      else if (node.type === "symlink") {
        const target = readOrSkip(node, () => readlinkSync(node.abs));
        if (target !== undefined) entries.push({ type: "symlink", path: node.path, target });
      } else {
        let sha256 = cache.lookup(node.path, node.stat);
        let size = node.stat.size;
        if (sha256 === undefined) {
          const put = readOrSkip(node, () => blobs.putFile(node.abs, size));
          if (put === undefined) continue;
          hashed++;
          sha256 = put.sha256;
          size = put.size;
          if (put.added) {
            newBlobs++;
            newBytes += put.size;
          }
          cache.record(node.path, node.stat, sha256, scanStart);
        }
        seen.add(node.path);
        files++;
        bytes += size;
        entries.push({ type: "file", path: node.path, mode: modeOf(node), size, sha256, mtime_ms: node.stat.mtimeMs });
      }
    }
    const id = `chk_${randomHex(12)}`;
    const manifest: Manifest = {
      version: MANIFEST_VERSION,
      id,
      created_at: nowIso(),
      workspace: root,
      files,
      bytes,
      entries,
    };
    writeFileAtomic(manifestPath(dir, id), JSON.stringify(manifest));
    cache.retain(seen);
    cache.save();
    return {
      id,
      created_at: manifest.created_at,
      workspace: root,
      files,
      bytes,
      hashed_files: hashed,
      new_blobs: newBlobs,
      new_bytes: newBytes,
    };
  });
}
