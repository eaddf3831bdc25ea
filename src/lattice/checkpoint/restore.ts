/**
 * Restoring a checkpoint into a workspace: files that differ are written from blobs, what the
 * checkpoint does not have is removed, `.lattice/` is left alone.
 *
 * The workspace is a sprite's and so is the manifest's origin, and the supervisor restores
 * outside the sandbox. So nothing here follows a link: the workspace is walked with lstat, every
 * path written goes through `beneath` (each directory on the way a real one), files are created
 * with O_EXCL | O_NOFOLLOW or renamed over what is there, modes never carry setuid, setgid or
 * sticky bits, and every blob is checked (regular file, size, hash) before its bytes land.
 */
import {
  chmodSync,
  closeSync,
  constants,
  fchmodSync,
  fstatSync,
  futimesSync,
  mkdirSync,
  openSync,
  readlinkSync,
  renameSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  type Stats,
} from "node:fs";
import { NotFoundError, randomHex } from "../../core/index.js";
import { beneath } from "../protocol/index.js";
import { BlobDamagedError, BlobStore, hashFile } from "./blobs.js";
import { checkpointExists } from "./directory.js";
import { withDirLock } from "./lock.js";
import {
  checkId,
  checkpointNotFound,
  readManifest,
  type FileEntry,
  type Manifest,
  type ManifestEntry,
} from "./manifest.js";
import { isRacy, StatCache } from "./statcache.js";
import { excludedPaths, walkWorkspace, workspaceRoot, type WalkedNode } from "./walk.js";

export interface RestoreResult {
  id: string;
  /** Files written from blobs (missing or different in the workspace). */
  written: number;
  /** Files, symlinks and directories removed because the checkpoint does not have them. */
  removed: number;
  /** Files left alone because they already matched. */
  unchanged: number;
}

/** Only the permission bits are restored: a sprite's checkpoint never makes a setuid file. */
const PERMISSIONS = 0o777;
const WRITE_NEW = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;
/** Up to this size a blob is checked in memory before a byte is written, so a new file is written in place. */
const IN_PLACE_MAX = 16 * 1024 * 1024;

/** What a restore will do, worked out before anything in the workspace changes. */
interface RestorePlan {
  remove: WalkedNode[];
  /** Manifest entries to (re)create, with what is in their place now. */
  make: Array<{ entry: ManifestEntry; have: WalkedNode | undefined }>;
  /** Files that already match, with their current stat. */
  keep: Array<{ entry: FileEntry; have: WalkedNode }>;
}

const permissions = (mode: number) => mode & PERMISSIONS;

/**
 * Whether a workspace file holds an entry's content. Its size and mtime as the checkpoint
 * recorded them (restore writes the recorded mtime back), unless the checkpoint was taken so soon
 * after the write that a second write in the same tick would not show, stand for its content;
 * else it is hashed.
 */
function sameContent(have: WalkedNode, e: FileEntry, createdMs: number): boolean {
  if (have.stat.size !== e.size) return false;
  if (have.stat.mtimeMs === e.mtime_ms && !isRacy(e.mtime_ms, createdMs)) return true;
  return hashFile(have.abs).sha256 === e.sha256;
}

/** The excluded path `path` is (or lies under), if any. */
function excludedBy(path: string, excluded: Set<string>): string | undefined {
  for (let i = path.indexOf("/"); ; i = path.indexOf("/", i + 1)) {
    const prefix = i === -1 ? path : path.slice(0, i);
    if (excluded.has(prefix)) return prefix;
    if (i === -1) return undefined;
  }
}

function plan(root: string, manifest: Manifest, excluded: Set<string>): RestorePlan {
  const wanted = new Map(manifest.entries.map((e) => [e.path, e]));
  const current = new Map<string, WalkedNode>();
  const out: RestorePlan = { remove: [], make: [], keep: [] };
  const createdMs = Date.parse(manifest.created_at);
  // What the checkpoint does not have goes; a removed directory takes its contents with it.
  let removedDir: string | undefined;
  for (const node of walkWorkspace(root, excluded)) {
    if (removedDir !== undefined && node.path.startsWith(`${removedDir}/`)) continue;
    if (wanted.has(node.path)) current.set(node.path, node);
    else {
      out.remove.push(node);
      if (node.type === "dir") removedDir = node.path;
    }
  }
  for (const entry of manifest.entries) {
    // What a sandboxed sprite saw of pmagent's own files (its view of them) is not restored over them.
    if (excludedBy(entry.path, excluded) !== undefined) continue;
    const have = current.get(entry.path);
    if (entry.type === "dir" && have?.type === "dir" && permissions(have.stat.mode) === permissions(entry.mode))
      continue;
    if (entry.type === "symlink" && have?.type === "symlink" && readlinkSync(have.abs) === entry.target) continue;
    if (
      entry.type === "file" &&
      have?.type === "file" &&
      sameContent(have, entry, Number.isNaN(createdMs) ? Infinity : createdMs)
    )
      out.keep.push({ entry, have });
    else out.make.push({ entry, have });
  }
  return out;
}

function removeNode(abs: string): void {
  // rm never follows a link: a link is removed, not what it points to.
  rmSync(abs, { recursive: true, force: true });
}

export interface RestoreSource {
  manifest: Manifest;
  blobs: BlobStore;
  /** Where the checkpoint is, for messages. */
  where: string;
}

/**
 * Make the workspace at `root` (a real directory) exactly what the checkpoint recorded. Every
 * blob needed is checked (present, a regular file, its size) before the workspace is touched,
 * and its hash before its bytes are used. `onFile` sees each file's stat once it is in place.
 */
export function restoreInto(
  root: string,
  source: RestoreSource,
  excluded: Set<string>,
  onFile?: (entry: FileEntry, stat: Stats) => void,
): RestoreResult {
  const { manifest, blobs } = source;
  const todo = plan(root, manifest, excluded);
  for (const { entry } of todo.make) {
    if (entry.type !== "file") continue;
    const problem = blobs.problem(entry.sha256, entry.size);
    if (problem !== undefined) {
      throw new NotFoundError(
        "checkpoint_damaged",
        `checkpoint ${manifest.id} cannot be restored: the content of ${entry.path} (blob ${entry.sha256.slice(0, 12)}…) ${problem} in ${source.where}`,
      );
    }
  }
  // Directories known to be real ones (walked, or made here): paths under them need no new check.
  const verified = new Set<string>();
  for (const node of todo.remove) removeNode(node.abs);
  let written = 0;
  for (const { entry, have } of todo.make) {
    const abs = beneath(root, entry.path, "checkpoint entry", verified);
    if (entry.type === "dir") {
      if (have?.type !== "dir") {
        if (have) removeNode(abs);
        mkdirSync(abs);
      }
      chmodSync(abs, permissions(entry.mode));
      verified.add(abs);
    } else if (entry.type === "symlink") {
      if (have) removeNode(abs);
      symlinkSync(entry.target, abs);
    } else {
      if (have && have.type === "dir") removeNode(abs);
      const stat = writeFromBlob(source, abs, entry, have !== undefined && have.type !== "dir");
      onFile?.(entry, stat);
      written++;
    }
  }
  for (const { entry, have } of todo.keep) {
    if (permissions(have.stat.mode) !== permissions(entry.mode)) chmodSync(have.abs, permissions(entry.mode));
    onFile?.(entry, have.stat);
  }
  return { id: manifest.id, written, removed: todo.remove.length, unchanged: todo.keep.length };
}

/** Write a file from its blob with its permissions and mtime; returns its stat. */
function writeFromBlob(source: RestoreSource, abs: string, e: FileEntry, replacing: boolean): Stats {
  // A file being replaced, or one too large to check before writing, is written beside it and
  // renamed into place (atomic; never writes through a hard link or a link); a new small file
  // is written in place, O_EXCL | O_NOFOLLOW.
  const aside = replacing || e.size > IN_PLACE_MAX;
  const target = aside ? `${abs}.lattice-restore-${randomHex(4)}` : abs;
  const fd = openSync(target, WRITE_NEW, 0o600);
  let stat: Stats;
  try {
    source.blobs.writeTo(e.sha256, e.size, fd);
    fchmodSync(fd, permissions(e.mode));
    const mtime = e.mtime_ms / 1000;
    futimesSync(fd, mtime, mtime);
    stat = fstatSync(fd);
  } catch (err) {
    closeSync(fd);
    unlinkSync(target);
    if (err instanceof BlobDamagedError)
      throw new NotFoundError(
        "checkpoint_damaged",
        `checkpoint ${source.manifest.id} cannot be restored: the content of ${e.path} (${err.message}) in ${source.where}`,
      );
    throw err;
  }
  closeSync(fd);
  if (aside) renameSync(target, abs);
  return stat;
}

/**
 * Restore checkpoint `id` of checkpoint directory `dir` into `workspace` (made when missing), as
 * `pmagent checkpoint restore` does: under the directory's lock, with the stat cache told what
 * is in place so the next checkpoint does not read it again.
 */
export function restoreCheckpoint(workspace: string, dir: string, id: string): RestoreResult {
  checkId(id);
  if (!checkpointExists(dir, id)) throw checkpointNotFound(dir, id);
  mkdirSync(workspace, { recursive: true });
  const root = workspaceRoot(workspace);
  return withDirLock(dir, () => {
    // Read under the lock: a prune may have removed the checkpoint in the meantime.
    const manifest = readManifest(dir, id);
    const now = Date.now();
    const cache = StatCache.load(dir, root);
    const result = restoreInto(
      root,
      { manifest, blobs: new BlobStore(dir), where: dir },
      excludedPaths(root, dir),
      (entry, stat) => cache.record(entry.path, stat, entry.sha256, now),
    );
    cache.retain(new Set(manifest.entries.filter((e) => e.type === "file").map((e) => e.path)));
    cache.save();
    return result;
  });
}
