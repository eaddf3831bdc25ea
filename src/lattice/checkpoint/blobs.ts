/**
 * Content-addressed blob store: each distinct file content once, under `blobs/<sha[0:2]>/<sha[2:]>`,
 * read-only. A blob is written to a temporary name and renamed, so a blob that exists was written
 * whole; content already stored costs nothing.
 *
 * Blobs are not fsync'd one by one (5,000 fsyncs made a first checkpoint 10x slower than `cp -r`):
 * they survive any process crash through the page cache, the manifest that names them is fsync'd,
 * and a restore checks each blob's size, so a blob cut short by a power loss is reported, never
 * restored.
 */
import { closeSync, constants, copyFileSync, existsSync, mkdirSync, openSync, readFileSync, readSync, renameSync, statSync, unlinkSync, writeSync } from "node:fs";
import { createHash, randomBytes } from "node:crypto";
import { join } from "node:path";

/** Files up to this size are read into memory once (hash and write from the same bytes). */
const IN_MEMORY_MAX = 16 * 1024 * 1024;
const HASH_CHUNK = 1024 * 1024;

export interface PutResult {
  sha256: string;
  size: number;
  /** True when this content was not stored before. */
  added: boolean;
}

export class BlobStore {
  private readonly madeDirs = new Set<string>();

  constructor(readonly root: string) {}

  path(sha256: string): string {
    return join(this.root, sha256.slice(0, 2), sha256.slice(2));
  }

  has(sha256: string): boolean {
    return existsSync(this.path(sha256));
  }

  /** Hash a file and store its content unless that content is already stored. */
  putFile(abs: string, size: number): PutResult {
    return size <= IN_MEMORY_MAX ? this.putSmall(abs) : this.putLarge(abs);
  }

  private tmpPath(): string {
    mkdirSync(this.root, { recursive: true });
    return join(this.root, `.tmp-${process.pid}-${randomBytes(6).toString("hex")}`);
  }

  private prefixDir(sha256: string): void {
    const dir = join(this.root, sha256.slice(0, 2));
    if (this.madeDirs.has(dir)) return;
    mkdirSync(dir, { recursive: true });
    this.madeDirs.add(dir);
  }

  private putSmall(abs: string): PutResult {
    const data = readFileSync(abs);
    const sha256 = createHash("sha256").update(data).digest("hex");
    if (this.has(sha256)) return { sha256, size: data.length, added: false };
    const tmp = this.tmpPath();
    const fd = openSync(tmp, "wx", 0o444);
    try {
      writeSync(fd, data);
    } finally {
      closeSync(fd);
    }
    this.prefixDir(sha256);
    renameSync(tmp, this.path(sha256));
    return { sha256, size: data.length, added: true };
  }

  /** Large files are copied first (a reflink where the filesystem can) and hashed from the copy, so the blob's name always matches its bytes. */
  private putLarge(abs: string): PutResult {
    const tmp = this.tmpPath();
    copyFileSync(abs, tmp, constants.COPYFILE_FICLONE);
    const hash = createHash("sha256");
    const buf = Buffer.allocUnsafe(HASH_CHUNK);
    const fd = openSync(tmp, "r");
    let size = 0;
    try {
      for (;;) {
        const n = readSync(fd, buf, 0, buf.length, null);
        if (n === 0) break;
        hash.update(buf.subarray(0, n));
        size += n;
      }
    } finally {
      closeSync(fd);
    }
    const sha256 = hash.digest("hex");
    if (this.has(sha256)) {
      unlinkSync(tmp);
      return { sha256, size, added: false };
    }
    this.prefixDir(sha256);
    renameSync(tmp, this.path(sha256));
    return { sha256, size, added: true };
  }

  /** Size of a stored blob, or undefined when it is missing. */
  sizeOf(sha256: string): number | undefined {
    try {
      return statSync(this.path(sha256)).size;
    } catch {
      return undefined;
    }
  }
}

/** sha256 of a file's content, read in chunks. */
export function hashFile(abs: string): string {
  const hash = createHash("sha256");
  const buf = Buffer.allocUnsafe(HASH_CHUNK);
  const fd = openSync(abs, "r");
  try {
    for (;;) {
      const n = readSync(fd, buf, 0, buf.length, null);
      if (n === 0) break;
      hash.update(buf.subarray(0, n));
    }
  } finally {
    closeSync(fd);
  }
  return hash.digest("hex");
}
