/**
 * Checkpoints: content-addressed snapshots of a sprite's workspace.
 *
 *   <dir>/blobs/ab/cdef…       one read-only file per distinct content (sha256)
 *   <dir>/manifests/chk_….json one manifest per checkpoint (see checkpoint-manifest.ts)
 *   <dir>/statcache/….json     per workspace: stat → hash, so unchanged files are not read again
 *
 * `.lattice/` is never part of a checkpoint and survives a restore (the outbox and the resume
 * marker must not be rewound). `.git/` is part of it: a sprite that commits before WAITING gets
 * its commits and branch back on resume.
 */
import {
  chmodSync,
  closeSync,
  constants,
  copyFileSync,
  existsSync,
  fchmodSync,
  fstatSync,
  futimesSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  renameSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  utimesSync,
  writeSync,
  type Stats,
} from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { randomBytes } from "node:crypto";
import { confinePath, NotFoundError, nowIso, RefusedError, UsageError, writeFileAtomic } from "../../core/index.js";
import { CHECKPOINT_ID } from "../protocol/index.js";
import { BlobStore, hashFile } from "./blobs.js";
import { withDirLock } from "./lock.js";
import { checkManifest, MANIFEST_VERSION, type FileEntry, type Manifest, type ManifestEntry } from "./manifest.js";
import { StatCache } from "./statcache.js";
import { excludedPaths, walkWorkspace, type WalkedNode } from "./walk.js";

export { type Manifest, type ManifestEntry } from "./manifest.js";

/** Files up to this size are restored through memory (one read, one write on an open fd). */
const IN_MEMORY_RESTORE_MAX = 16 * 1024 * 1024;

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

export interface RestoreResult {
  id: string;
  /** Files written from blobs (missing or different in the workspace). */
  written: number;
  /** Files, symlinks and directories removed because the checkpoint does not have them. */
  removed: number;
  /** Files left alone because they already matched. */
  unchanged: number;
}

function manifestPath(dir: string, id: string): string {
  return join(dir, "manifests", `${id}.json`);
}

function checkpointNotFound(dir: string, id: string): NotFoundError {
  return new NotFoundError("checkpoint_not_found", `checkpoint ${id} does not exist in ${dir} (see pmagent checkpoint list)`);
}

function checkId(id: string): void {
  if (!CHECKPOINT_ID.test(id)) {
    throw new UsageError("invalid_checkpoint_id", `"${id}" is not a checkpoint id (expected chk_ followed by letters, digits, '_' or '-', as printed by pmagent checkpoint create)`);
  }
}

function workspaceRoot(workspace: string): string {
  try {
    const real = realpathSync(workspace);
    if (!lstatSync(real).isDirectory()) throw new UsageError("workspace_not_directory", `workspace ${workspace} is not a directory`);
    return real;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") {
      throw new NotFoundError("workspace_missing", `workspace ${workspace} does not exist (set LATTICE_WORKSPACE or pass --workspace)`);
    }
    throw err;
  }
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
      throw new RefusedError("checkpoint_unreadable", `cannot checkpoint ${node.path}: permission denied (make it readable by the sprite's user, or remove it from the workspace)`);
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
    const blobs = new BlobStore(join(dir, "blobs"));
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
    const id = `chk_${randomBytes(12).toString("hex")}`;
    const manifest: Manifest = { version: MANIFEST_VERSION, id, created_at: nowIso(), workspace: root, files, bytes, entries };
    writeFileAtomic(manifestPath(dir, id), JSON.stringify(manifest));
    cache.retain(seen);
    cache.save();
    return { id, created_at: manifest.created_at, workspace: root, files, bytes, hashed_files: hashed, new_blobs: newBlobs, new_bytes: newBytes };
  });
}

export function checkpointExists(dir: string, id: string): boolean {
  return CHECKPOINT_ID.test(id) && existsSync(manifestPath(dir, id));
}

/** Read and check a checkpoint's manifest (paths confined, every parent before its children). */
export function readManifest(dir: string, id: string): Manifest {
  checkId(id);
  const path = manifestPath(dir, id);
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") throw checkpointNotFound(dir, id);
    throw err;
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new UsageError("checkpoint_damaged", `manifest ${path} is not valid JSON: ${(err as Error).message}`);
  }
  const checked = checkManifest(raw);
  if (!checked.ok) throw new UsageError("checkpoint_damaged", `manifest ${path} is damaged: ${checked.problem}`);
  return checked.manifest;
}

function removeNode(abs: string): void {
  rmSync(abs, { recursive: true, force: true });
}

/** What a restore will do, worked out before anything in the workspace changes. */
interface RestorePlan {
  remove: WalkedNode[];
  /** Manifest entries to (re)create, with what is in their place now. */
  make: Array<{ entry: ManifestEntry; have: WalkedNode | undefined }>;
  /** Files that already match, with their current stat (for the stat cache). */
  keep: Array<{ entry: FileEntry; have: WalkedNode }>;
}

function planRestore(root: string, dir: string, manifest: Manifest, cache: StatCache): RestorePlan {
  const wanted = new Map(manifest.entries.map((e) => [e.path, e]));
  const current = new Map<string, WalkedNode>();
  const plan: RestorePlan = { remove: [], make: [], keep: [] };
  // What the checkpoint does not have goes; a removed directory takes its contents with it.
  let removedDir: string | undefined;
  for (const node of walkWorkspace(root, excludedPaths(root, dir))) {
    if (removedDir !== undefined && node.path.startsWith(`${removedDir}/`)) continue;
    if (wanted.has(node.path)) current.set(node.path, node);
    else {
      plan.remove.push(node);
      if (node.type === "dir") removedDir = node.path;
    }
  }
  for (const entry of manifest.entries) {
    const have = current.get(entry.path);
    if (entry.type === "dir" && have?.type === "dir" && modeOf(have) === entry.mode) continue;
    if (entry.type === "symlink" && have?.type === "symlink" && readlinkSync(have.abs) === entry.target) continue;
    if (entry.type === "file" && have?.type === "file" && sameContent(have, entry, cache)) plan.keep.push({ entry, have });
    else plan.make.push({ entry, have });
  }
  return plan;
}

/**
 * Make `workspace` exactly what checkpoint `id` recorded: files that differ are written from
 * blobs, files the checkpoint does not have are removed, `.lattice/` is left alone. Every blob
 * needed is checked before the workspace is touched.
 */
export function restoreCheckpoint(workspace: string, dir: string, id: string): RestoreResult {
  checkId(id);
  if (!checkpointExists(dir, id)) throw checkpointNotFound(dir, id);
  mkdirSync(workspace, { recursive: true });
  const root = workspaceRoot(workspace);
  return withDirLock(dir, () => {
    // Read under the lock: a prune may have removed the checkpoint in the meantime.
    const manifest = readManifest(dir, id);
    const blobs = new BlobStore(join(dir, "blobs"));
    const now = Date.now();
    const cache = StatCache.load(dir, root);
    const plan = planRestore(root, dir, manifest, cache);
    for (const { entry } of plan.make) {
      if (entry.type !== "file") continue;
      const size = blobs.sizeOf(entry.sha256);
      if (size !== entry.size) {
        const what = size === undefined ? "is missing" : `has ${size} bytes instead of ${entry.size}`;
        throw new NotFoundError("checkpoint_damaged", `checkpoint ${id} cannot be restored: the content of ${entry.path} (blob ${entry.sha256.slice(0, 12)}…) ${what} in ${dir}`);
      }
    }
    for (const node of plan.remove) removeNode(node.abs);
    let written = 0;
    for (const { entry, have } of plan.make) {
      const abs = confinePath(root, entry.path, "checkpoint entry");
      if (entry.type === "dir") {
        if (have?.type !== "dir") {
          if (have) removeNode(abs);
          mkdirSync(abs);
        }
        chmodSync(abs, entry.mode);
      } else if (entry.type === "symlink") {
        if (have) removeNode(abs);
        symlinkSync(entry.target, abs);
      } else {
        if (have && have.type !== "file") removeNode(abs);
        cache.record(entry.path, writeFromBlob(blobs.path(entry.sha256), abs, entry, have?.type === "file"), entry.sha256, now);
        written++;
      }
    }
    for (const { entry, have } of plan.keep) {
      if (modeOf(have) !== entry.mode) chmodSync(have.abs, entry.mode);
      cache.record(entry.path, have.stat, entry.sha256, now);
    }
    cache.retain(new Set(manifest.entries.filter((e) => e.type === "file").map((e) => e.path)));
    cache.save();
    return { id, written, removed: plan.remove.length, unchanged: plan.keep.length };
  });
}

function sameContent(have: WalkedNode, e: FileEntry, cache: StatCache): boolean {
  if (have.stat.size !== e.size) return false;
  const cached = cache.lookup(e.path, have.stat);
  return (cached ?? hashFile(have.abs)) === e.sha256;
}

/** Write a file from its blob with its mode and mtime; returns its stat for the stat cache. */
function writeFromBlob(blob: string, abs: string, e: FileEntry, replacing: boolean): Stats {
  // A file being replaced is written beside it and renamed over it (atomic, and never writes
  // through a hard link); a new file is written in place.
  const target = replacing ? `${abs}.lattice-restore-${randomBytes(4).toString("hex")}` : abs;
  const mtime = e.mtime_ms / 1000;
  let stat: Stats;
  if (e.size > IN_MEMORY_RESTORE_MAX) {
    copyFileSync(blob, target, constants.COPYFILE_FICLONE);
    chmodSync(target, e.mode);
    utimesSync(target, mtime, mtime);
    stat = lstatSync(target);
  } else {
    const data = readFileSync(blob);
    const fd = openSync(target, "wx", 0o600);
    try {
      writeSync(fd, data);
      fchmodSync(fd, e.mode);
      futimesSync(fd, mtime, mtime);
      stat = fstatSync(fd);
    } finally {
      closeSync(fd);
    }
  }
  if (replacing) renameSync(target, abs);
  return stat;
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
  if (!Number.isInteger(keep) || keep < 0) throw new UsageError("invalid_option", `--keep expects a whole number of checkpoints to keep (0 or more), got ${keep}`);
  if (!existsSync(dir)) return { removed_checkpoints: [], kept: 0, removed_blobs: 0, freed_bytes: 0 };
  return withDirLock(dir, () => {
    const all = listCheckpoints(dir);
    const doomed = all.slice(0, Math.max(0, all.length - keep));
    const kept = all.slice(doomed.length);
    for (const c of doomed) unlinkSync(manifestPath(dir, c.id));
    const referenced = new Set<string>();
    for (const c of kept) for (const e of readManifest(dir, c.id).entries) if (e.type === "file") referenced.add(e.sha256);
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
    return { removed_checkpoints: doomed.map((c) => c.id), kept: kept.length, removed_blobs: removedBlobs, freed_bytes: freed };
  });
}
