/**
 * The supervisor's checkpoint store (the vault): where a run's checkpoints are kept once its
 * sprite has named them in WAITING, and what a resume restores from.
 *
 *   <vault>/blobs/ab/cdef…                  content shared by every run of the project
 *   <vault>/runs/<run id>/manifests/chk_….json
 *
 * A sprite writes its checkpoints into a directory of its own (`LATTICE_CHECKPOINT_DIR`), which it
 * can change at will. The vault is out of its sandbox's sight and nothing in it is taken from a
 * sprite unchecked: `adopt` reads the sprite's manifest and blobs without following links, checks
 * the manifest (each path once, parents before children) and copies each blob only when its
 * bytes hash to its name. Manifests are kept per run, so a sprite cannot name another run's
 * checkpoint. Writes are renames of whole files, so two processes adopting the same content at
 * once both succeed, and no lock is needed (nothing here deletes blobs).
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { UsageError, writeFileAtomic } from "../../core/index.js";
import { BlobStore } from "./blobs.js";
import { checkId, checkManifest, manifestPath, readManifest, type Manifest } from "./manifest.js";
import { restoreInto, type RestoreResult } from "./restore.js";
import { LATTICE_DIR } from "../protocol/index.js";
import { workspaceRoot } from "./walk.js";

const RUN_ID = /^[A-Za-z0-9_-]{1,128}$/;

export interface AdoptResult {
  id: string;
  files: number;
  bytes: number;
  /** Blobs the vault did not have and copied from the sprite's directory, and their size. */
  new_blobs: number;
  new_bytes: number;
}

export class CheckpointVault {
  /** The project's blobs (shared through the store by `SharedCheckpoints`). */
  readonly blobs: BlobStore;

  constructor(readonly dir: string) {
    this.blobs = new BlobStore(dir);
  }

  private runDir(runId: string): string {
    if (!RUN_ID.test(runId)) throw new UsageError("invalid_run_id", `"${runId}" is not a run id`);
    return join(this.dir, "runs", runId);
  }

  /** Whether the vault holds checkpoint `id` of run `runId`. */
  has(runId: string, id: string): boolean {
    checkId(id);
    return existsSync(manifestPath(this.runDir(runId), id));
  }

  manifest(runId: string, id: string): Manifest {
    return readManifest(this.runDir(runId), id);
  }

  /**
   * Take checkpoint `id` from the sprite's checkpoint directory `spriteDir` into the vault (a
   * no-op when it is there already). Throws a typed error saying what is wrong when the
   * checkpoint is missing or damaged; nothing of it is kept then.
   */
  adopt(runId: string, spriteDir: string, id: string): AdoptResult {
    const runDir = this.runDir(runId);
    if (this.has(runId, id)) {
      const m = this.manifest(runId, id);
      return { id, files: m.files, bytes: m.bytes, new_blobs: 0, new_bytes: 0 };
    }
    const manifest = readManifest(spriteDir, id);
    const source = new BlobStore(spriteDir);
    const seen = new Set<string>();
    let newBlobs = 0;
    let newBytes = 0;
    for (const e of manifest.entries) {
      if (e.type !== "file" || seen.has(e.sha256)) continue;
      seen.add(e.sha256);
      if (this.blobs.adoptFrom(source, e.sha256, e.size)) {
        newBlobs++;
        newBytes += e.size;
      }
    }
    // The figures are recounted: a sprite's own count is not taken on trust.
    const files = manifest.entries.filter((e) => e.type === "file");
    const kept: Manifest = { ...manifest, files: files.length, bytes: files.reduce((n, e) => n + e.size, 0) };
    writeFileAtomic(manifestPath(runDir, id), JSON.stringify(kept));
    return { id, files: kept.files, bytes: kept.bytes, new_blobs: newBlobs, new_bytes: newBytes };
  }

  /**
   * Keep checkpoint `id` of run `runId` as `raw` names it (a manifest another machine's supervisor
   * stored), after the same checks as a sprite's; its blobs must be here before it is restored.
   */
  keep(runId: string, id: string, raw: unknown): Manifest {
    const manifest = this.checkShared(id, raw);
    writeFileAtomic(manifestPath(this.runDir(runId), id), JSON.stringify(manifest));
    return manifest;
  }

  /** `raw` as the manifest of checkpoint `id`, checked as a sprite's is; nothing is written. */
  checkShared(id: string, raw: unknown): Manifest {
    checkId(id);
    const checked = checkManifest(raw);
    if (!checked.ok)
      throw new UsageError(
        "checkpoint_damaged",
        `the shared manifest of checkpoint ${id} is damaged: ${checked.problem}`,
      );
    if (checked.manifest.id !== id)
      throw new UsageError(
        "checkpoint_damaged",
        `the shared manifest of checkpoint ${id} names ${checked.manifest.id}`,
      );
    return checked.manifest;
  }

  /**
   * Make `workspace` exactly what checkpoint `id` of run `runId` recorded. `protect`: paths in the
   * workspace (relative, `/`-separated) that a restore never removes or writes, besides
   * `.lattice/` (pmagent's own files when the workspace is the project itself).
   */
  restore(runId: string, id: string, workspace: string, protect: readonly string[] = []): RestoreResult {
    const manifest = this.manifest(runId, id);
    const root = workspaceRoot(workspace);
    return restoreInto(
      root,
      { manifest, blobs: this.blobs, where: `the checkpoint store ${this.dir}` },
      new Set([LATTICE_DIR, ...protect]),
    );
  }
}
