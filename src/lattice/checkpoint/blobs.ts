/**
 * Content-addressed blob store: each distinct file content once, under `blobs/<sha[0:2]>/<sha[2:]>`
 * of a checkpoint directory, read-only. A blob is written to a temporary name and renamed, so a
 * blob that exists was written whole; content already stored costs nothing.
 *
 * Blobs are not fsync'd one by one (5,000 fsyncs made a first checkpoint 10x slower than `cp -r`):
 * they survive any process crash through the page cache, the manifest that names them is fsync'd,
 * and every read checks the blob's size and hash, so a blob cut short by a power loss is reported,
 * never restored.
 *
 * A sprite writes the blobs of its own checkpoint directory, so every read here goes through
 * `openRegularFileBeneath` (no symbolic link followed, no FIFO or device opened) and is checked
 * against the name it was asked for: a blob whose bytes do not hash to its name is refused
 * before any of them is used.
 */
import {
  closeSync,
  constants,
  copyFileSync,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { createHash, type Hash } from "node:crypto";
import { join } from "node:path";
import { NotFoundError, randomHex } from "../../core/index.js";
import { openRegularFileBeneath } from "../protocol/index.js";

/** Files up to this size are read into memory once (hash and write from the same bytes). */
const IN_MEMORY_MAX = 16 * 1024 * 1024;
/** The unit blobs are read, copied and shared in (a row of the shared store each). */
export const BLOB_CHUNK_BYTES = 1024 * 1024;

export interface PutResult {
  sha256: string;
  size: number;
  /** True when this content was not stored before. */
  added: boolean;
}

/** A blob that cannot be used: missing, cut short, not a regular file, or not the content its name says. */
export class BlobDamagedError extends NotFoundError {
  constructor(sha256: string, problem: string) {
    super("checkpoint_damaged", `blob ${sha256.slice(0, 12)}… ${problem}`, { blob: sha256 });
  }
}

export class BlobStore {
  private readonly madeDirs = new Set<string>();
  /** Directories under `dir` already checked to be real ones (see `beneath`). */
  private readonly verified = new Set<string>();

  /** `dir`: the checkpoint directory; the blobs are under its `blobs/`. */
  constructor(readonly dir: string) {}

  get root(): string {
    return join(this.dir, "blobs");
  }

  private rel(sha256: string): string {
    return `blobs/${sha256.slice(0, 2)}/${sha256.slice(2)}`;
  }

  path(sha256: string): string {
    return join(this.dir, this.rel(sha256));
  }

  /** Why blob `sha256` cannot be used as `size` bytes (without reading it), or undefined when it looks whole. */
  problem(sha256: string, size: number): string | undefined {
    let st;
    try {
      st = lstatSync(this.path(sha256));
    } catch {
      return "is missing";
    }
    if (!st.isFile()) return "is not a regular file";
    return st.size === size ? undefined : `has ${st.size} bytes instead of ${size}`;
  }

  /** Hash a file and store its content unless that content is already stored. */
  putFile(abs: string, size: number): PutResult {
    return size <= IN_MEMORY_MAX ? this.putSmall(abs) : this.putLarge(abs);
  }

  private tmpPath(): string {
    mkdirSync(this.root, { recursive: true });
    return join(this.root, `.tmp-${process.pid}-${randomHex(6)}`);
  }

  private place(tmp: string, sha256: string): void {
    const dir = join(this.root, sha256.slice(0, 2));
    if (!this.madeDirs.has(dir)) {
      mkdirSync(dir, { recursive: true });
      this.madeDirs.add(dir);
    }
    renameSync(tmp, this.path(sha256));
  }

  private has(sha256: string, size: number): boolean {
    return this.problem(sha256, size) === undefined;
  }

  private putSmall(abs: string): PutResult {
    const data = readFileSync(abs);
    const sha256 = createHash("sha256").update(data).digest("hex");
    if (this.has(sha256, data.length)) return { sha256, size: data.length, added: false };
    const tmp = this.tmpPath();
    const fd = openSync(tmp, "wx", 0o444);
    try {
      writeSync(fd, data);
    } finally {
      closeSync(fd);
    }
    this.place(tmp, sha256);
    return { sha256, size: data.length, added: true };
  }

  /** Large files are copied first (a reflink where the filesystem can) and hashed from the copy, so the blob's name always matches its bytes. */
  private putLarge(abs: string): PutResult {
    const tmp = this.tmpPath();
    copyFileSync(abs, tmp, constants.COPYFILE_FICLONE);
    const { sha256, size } = hashFile(tmp);
    if (this.has(sha256, size)) {
      unlinkSync(tmp);
      return { sha256, size, added: false };
    }
    this.place(tmp, sha256);
    return { sha256, size, added: true };
  }

  /**
   * Write blob `sha256` (`size` bytes) to the open file `out`, or throw BlobDamagedError without
   * writing anything when it is not a regular file of that size hashing to its name. A blob over
   * the in-memory limit is written as it is read and checked at its end: the caller writes it to
   * a temporary file and renames it into place only when this returns.
   */
  writeTo(sha256: string, size: number, out: number): void {
    const fd = this.open(sha256, size);
    try {
      if (size <= IN_MEMORY_MAX) {
        const data = readFully(fd, size, sha256);
        verify(createHash("sha256").update(data), sha256);
        writeAll(out, data);
      } else {
        verify(copyHashing(fd, size, sha256, out), sha256);
      }
    } finally {
      closeSync(fd);
    }
  }

  /**
   * Store blob `sha256` of `size` bytes from another blob store (whose files may be a sprite's),
   * unless this store has it: copied to a temporary file while hashed, kept only when the bytes
   * hash to the name. Returns whether it was copied.
   */
  adoptFrom(source: BlobStore, sha256: string, size: number): boolean {
    if (this.has(sha256, size)) return false;
    const fd = source.open(sha256, size);
    const tmp = this.tmpPath();
    try {
      const out = openSync(tmp, "wx", 0o444);
      try {
        verify(copyHashing(fd, size, sha256, out), sha256);
      } finally {
        closeSync(out);
      }
      this.place(tmp, sha256);
    } catch (err) {
      rmSync(tmp, { force: true });
      throw err;
    } finally {
      closeSync(fd);
    }
    return true;
  }

  /** Whether this store holds blob `sha256` whole (by its size; its bytes are checked when read). */
  holds(sha256: string, size: number): boolean {
    return this.has(sha256, size);
  }

  /**
   * Blob `sha256` of `size` bytes in chunks of at most BLOB_CHUNK_BYTES bytes (a zero-size blob is no chunk),
   * hashed as read: the last chunk is given only when the whole blob hashed to its name.
   */
  *chunks(sha256: string, size: number): Generator<Buffer> {
    const fd = this.open(sha256, size);
    try {
      const hash = createHash("sha256");
      let off = 0;
      let held: Buffer | null = null;
      while (off < size) {
        const buf = Buffer.allocUnsafe(Math.min(BLOB_CHUNK_BYTES, size - off));
        const n = readSync(fd, buf, 0, buf.length, off);
        if (n === 0) throw new BlobDamagedError(sha256, `ended after ${off} of ${size} bytes`);
        const chunk = buf.subarray(0, n);
        hash.update(chunk);
        off += n;
        if (held) yield held;
        held = chunk;
      }
      verify(hash, sha256);
      if (held) yield held;
    } finally {
      closeSync(fd);
    }
  }

  /**
   * Store blob `sha256` of `size` bytes from `chunks` (another machine's copy, read from the
   * shared store) unless this store has it: written to a temporary file while hashed, kept only
   * when its bytes are `size` and hash to the name. One chunk is in memory at a time.
   */
  async receive(sha256: string, size: number, chunks: AsyncIterable<Buffer>): Promise<boolean> {
    if (this.has(sha256, size)) return false;
    const tmp = this.tmpPath();
    try {
      const out = openSync(tmp, "wx", 0o444);
      const hash = createHash("sha256");
      let got = 0;
      try {
        for await (const chunk of chunks) {
          got += chunk.length;
          if (got > size) throw new BlobDamagedError(sha256, `has more than the ${size} bytes its manifest says`);
          hash.update(chunk);
          writeAll(out, chunk);
        }
      } finally {
        closeSync(out);
      }
      if (got !== size) throw new BlobDamagedError(sha256, `ended after ${got} of ${size} bytes`);
      verify(hash, sha256);
      this.place(tmp, sha256);
    } catch (err) {
      rmSync(tmp, { force: true });
      throw err;
    }
    return true;
  }

  /** Open blob `sha256` for reading: a regular file (no link followed on the way) of `size` bytes. */
  private open(sha256: string, size: number): number {
    let fd: number | null;
    try {
      fd = openRegularFileBeneath(this.dir, this.rel(sha256), "the blob", this.verified);
    } catch (err) {
      throw new BlobDamagedError(sha256, `cannot be read: ${(err as Error).message}`);
    }
    if (fd === null) throw new BlobDamagedError(sha256, "is missing");
    const actual = fstatSync(fd).size;
    if (actual !== size) {
      closeSync(fd);
      throw new BlobDamagedError(sha256, `has ${actual} bytes instead of ${size}`);
    }
    return fd;
  }
}

function verify(hash: Hash, sha256: string): void {
  const actual = hash.digest("hex");
  if (actual !== sha256)
    throw new BlobDamagedError(
      sha256,
      `does not hold the content its name says (its bytes hash to ${actual.slice(0, 12)}…)`,
    );
}

function readFully(fd: number, size: number, sha256: string): Buffer {
  const data = Buffer.allocUnsafe(size);
  let off = 0;
  while (off < size) {
    const n = readSync(fd, data, off, size - off, off);
    if (n === 0) throw new BlobDamagedError(sha256, `ended after ${off} of ${size} bytes`);
    off += n;
  }
  return data;
}

function writeAll(fd: number, data: Buffer): void {
  let off = 0;
  while (off < data.length) off += writeSync(fd, data, off, data.length - off);
}

/** Copy `size` bytes from `fd` to `out` in chunks, hashing them; returns the hash. */
function copyHashing(fd: number, size: number, sha256: string, out: number): Hash {
  const hash = createHash("sha256");
  const buf = Buffer.allocUnsafe(Math.min(BLOB_CHUNK_BYTES, Math.max(size, 1)));
  let off = 0;
  while (off < size) {
    const n = readSync(fd, buf, 0, Math.min(buf.length, size - off), off);
    if (n === 0) throw new BlobDamagedError(sha256, `ended after ${off} of ${size} bytes`);
    hash.update(buf.subarray(0, n));
    writeAll(out, buf.subarray(0, n));
    off += n;
  }
  return hash;
}

/** sha256 and size of a file's content, read in chunks. */
export function hashFile(abs: string): { sha256: string; size: number } {
  const hash = createHash("sha256");
  const buf = Buffer.allocUnsafe(BLOB_CHUNK_BYTES);
  const fd = openSync(abs, "r");
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
  return { sha256: hash.digest("hex"), size };
}
