/**
 * A checkpoint's manifest: every directory, file and symlink of the workspace at checkpoint time,
 * files by the sha256 of their content (the blob that holds it). Paths are relative, `/`-separated,
 * each listed once, parents listed (as directories) before their children. A sprite writes its
 * manifests, so whoever restores one checks it here first.
 *
 * Manifests are checked by hand rather than with zod: a 5,000-file manifest is read on every
 * restore, and the check must stay a small part of the 1 s budget.
 */
import { closeSync, fstatSync, readSync } from "node:fs";
import { join } from "node:path";
import { NotFoundError, UsageError } from "../../core/index.js";
import { CHECKPOINT_ID, openRegularFileBeneath } from "../protocol/index.js";

export const MANIFEST_VERSION = 1;

export type ManifestEntry =
  | { type: "dir"; path: string; mode: number }
  | { type: "file"; path: string; mode: number; size: number; sha256: string; mtime_ms: number }
  | { type: "symlink"; path: string; target: string };
export type FileEntry = Extract<ManifestEntry, { type: "file" }>;

export interface Manifest {
  version: typeof MANIFEST_VERSION;
  id: string;
  created_at: string;
  /** The workspace the checkpoint was taken of (informational: it restores anywhere). */
  workspace: string;
  files: number;
  bytes: number;
  entries: ManifestEntry[];
}

const SHA256 = /^[0-9a-f]{64}$/;
const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);
const isCount = (v: unknown): v is number => Number.isInteger(v) && (v as number) >= 0;
const isMode = (v: unknown): v is number => isCount(v) && v <= 0o7777;

function entryProblem(e: unknown, dirs: Set<string>, paths: Set<string>): string | undefined {
  if (!isObject(e)) return "is not an object";
  const path = e.path;
  if (
    typeof path !== "string" ||
    path === "" ||
    path.startsWith("/") ||
    path.includes("\0") ||
    path.split("/").some((s) => s === "" || s === "." || s === "..")
  ) {
    return "path: expected a relative path without '.', '..' or empty segments";
  }
  // One entry per path: a path listed as a directory and again as a link would have restore
  // write the files listed under it through the link.
  if (paths.has(path)) return `"${path}" is listed twice`;
  paths.add(path);
  // Writing `a/b` is only safe once `a` is known to be a real directory restore created or kept.
  const slash = path.lastIndexOf("/");
  if (slash !== -1 && !dirs.has(path.slice(0, slash))) return `"${path}" is not under a directory listed before it`;
  if (path.split("/")[0] === ".lattice") return `"${path}" is inside .lattice/, which checkpoints never hold`;
  switch (e.type) {
    case "dir":
      dirs.add(path);
      return isMode(e.mode) ? undefined : "mode: expected a file mode";
    case "symlink":
      return typeof e.target === "string" && e.target !== "" && !e.target.includes("\0")
        ? undefined
        : "target: expected the link's target";
    case "file":
      if (!isMode(e.mode)) return "mode: expected a file mode";
      if (!isCount(e.size)) return "size: expected a byte count";
      if (typeof e.sha256 !== "string" || !SHA256.test(e.sha256)) return "sha256: expected 64 hex digits";
      return typeof e.mtime_ms === "number" && Number.isFinite(e.mtime_ms) ? undefined : "mtime_ms: expected a number";
    default:
      return 'type: expected "dir", "file" or "symlink"';
  }
}

/** Check a parsed manifest; returns what is wrong (with the JSON path) or the manifest. */
export function checkManifest(raw: unknown): { ok: true; manifest: Manifest } | { ok: false; problem: string } {
  if (!isObject(raw)) return { ok: false, problem: "$: expected an object" };
  if (raw.version !== MANIFEST_VERSION) return { ok: false, problem: `$.version: expected ${MANIFEST_VERSION}` };
  if (typeof raw.id !== "string" || !CHECKPOINT_ID.test(raw.id))
    return { ok: false, problem: "$.id: expected a checkpoint id" };
  if (typeof raw.created_at !== "string" || typeof raw.workspace !== "string")
    return { ok: false, problem: "$.created_at, $.workspace: expected strings" };
  if (!isCount(raw.files) || !isCount(raw.bytes)) return { ok: false, problem: "$.files, $.bytes: expected counts" };
  if (!Array.isArray(raw.entries)) return { ok: false, problem: "$.entries: expected an array" };
  const dirs = new Set<string>();
  const paths = new Set<string>();
  for (let i = 0; i < raw.entries.length; i++) {
    const problem = entryProblem(raw.entries[i], dirs, paths);
    if (problem) return { ok: false, problem: `$.entries[${i}]: ${problem}` };
  }
  return { ok: true, manifest: raw as unknown as Manifest };
}

/** A manifest larger than this is refused unread (a 5,000-file manifest is about 1 MB). */
const MANIFEST_MAX_BYTES = 256 * 1024 * 1024;

export function manifestPath(dir: string, id: string): string {
  return join(dir, "manifests", `${id}.json`);
}

export function checkpointNotFound(dir: string, id: string): NotFoundError {
  return new NotFoundError(
    "checkpoint_not_found",
    `checkpoint ${id} does not exist in ${dir} (see pmagent checkpoint list)`,
  );
}

export function checkId(id: string): void {
  if (!CHECKPOINT_ID.test(id)) {
    throw new UsageError(
      "invalid_checkpoint_id",
      `"${id}" is not a checkpoint id (expected chk_ followed by letters, digits, '_' or '-', as printed by pmagent checkpoint create)`,
    );
  }
}

/**
 * Read and check a checkpoint's manifest in checkpoint directory `dir` (paths confined, each
 * once, every parent before its children). The file is opened without following a link and
 * must be a regular file: the directory may be a sprite's.
 */
export function readManifest(dir: string, id: string): Manifest {
  checkId(id);
  const path = manifestPath(dir, id);
  let fd: number | null;
  try {
    fd = openRegularFileBeneath(dir, `manifests/${id}.json`, "the manifest");
  } catch (err) {
    throw new UsageError("checkpoint_damaged", `manifest ${path} cannot be read: ${(err as Error).message}`);
  }
  if (fd === null) throw checkpointNotFound(dir, id);
  let text: string;
  try {
    const size = fstatSync(fd).size;
    if (size > MANIFEST_MAX_BYTES)
      throw new UsageError(
        "checkpoint_damaged",
        `manifest ${path} is ${size} bytes, more than the ${MANIFEST_MAX_BYTES} a manifest may have`,
      );
    const buf = Buffer.allocUnsafe(size);
    let off = 0;
    while (off < size) {
      const n = readSync(fd, buf, off, size - off, off);
      if (n === 0) break;
      off += n;
    }
    text = buf.toString("utf8", 0, off);
  } finally {
    closeSync(fd);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new UsageError("checkpoint_damaged", `manifest ${path} is not valid JSON: ${(err as Error).message}`);
  }
  const checked = checkManifest(raw);
  if (!checked.ok) throw new UsageError("checkpoint_damaged", `manifest ${path} is damaged: ${checked.problem}`);
  if (checked.manifest.id !== id)
    throw new UsageError(
      "checkpoint_damaged",
      `manifest ${path} is damaged: $.id: it names ${checked.manifest.id}, not ${id}`,
    );
  return checked.manifest;
}
