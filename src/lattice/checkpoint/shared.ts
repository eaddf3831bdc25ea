/**
 * Checkpoints shared through the store, so a run that waited on one machine resumes on another
 * (issue 33). The vault stays the one place a restore reads from: `push` copies a kept
 * checkpoint's manifest and the blobs the store lacks into it; `pull` copies them back into
 * another machine's vault. Blobs travel in chunks (one in memory at a time), each distinct content
 * once; a blob's bytes are checked against its name on both sides, so nothing a sprite or another
 * machine wrote is restored unchecked.
 */
import { NotFoundError, UsageError } from "../../core/index.js";
import type { Store } from "../../store/index.js";
import type { Manifest } from "./manifest.js";
import type { CheckpointVault } from "./vault.js";

/** Blob heads asked for in one statement. */
const HEADS_PER_QUERY = 500;

export interface PushResult {
  /** Blobs the store did not have, and their size. */
  new_blobs: number;
  new_bytes: number;
}

export class SharedCheckpoints {
  constructor(private readonly store: Store) {}

  /** Share checkpoint `id` of run `runId`, kept in `vault`, with every machine on this store (a no-op when shared already). */
  async push(vault: CheckpointVault, runId: string, id: string): Promise<PushResult> {
    const manifest = vault.manifest(runId, id);
    const shared = await this.store.get(
      "SELECT 1 AS x FROM lattice_checkpoint_manifests WHERE run_id = ? AND checkpoint_id = ?",
      [runId, id],
    );
    if (shared) return { new_blobs: 0, new_bytes: 0 };
    let newBlobs = 0;
    let newBytes = 0;
    for (const [sha256, size] of await this.missing(distinctBlobs(manifest))) {
      // One transaction per blob: its head appears with all its chunks or not at all.
      await this.store.transaction(async (tx) => {
        let seq = 0;
        for (const chunk of vault.blobs.chunks(sha256, size)) {
          await tx.run(
            "INSERT INTO lattice_checkpoint_chunks (sha256, seq, data) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
            [sha256, seq++, chunk],
          );
        }
        await tx.run("INSERT INTO lattice_checkpoint_blobs (sha256, size) VALUES (?, ?) ON CONFLICT DO NOTHING", [
          sha256,
          size,
        ]);
      });
      newBlobs++;
      newBytes += size;
    }
    // The manifest last: a machine that sees it finds every blob it names.
    await this.store.run(
      "INSERT INTO lattice_checkpoint_manifests (run_id, checkpoint_id, manifest, created_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
      [runId, id, JSON.stringify(manifest), new Date().toISOString()],
    );
    return { new_blobs: newBlobs, new_bytes: newBytes };
  }

  /**
   * Bring checkpoint `id` of run `runId` into `vault` from the store (blobs `vault` lacks are
   * fetched chunk by chunk). Throws checkpoint_not_found when no machine shared it.
   */
  async pull(vault: CheckpointVault, runId: string, id: string): Promise<Manifest> {
    const row = await this.store.get<{ manifest: string }>(
      "SELECT manifest FROM lattice_checkpoint_manifests WHERE run_id = ? AND checkpoint_id = ?",
      [runId, id],
    );
    if (!row)
      throw new NotFoundError(
        "checkpoint_not_found",
        `checkpoint ${id} of run ${runId} is neither on this machine nor shared in the store: the machine that kept it did not share it`,
      );
    let raw: unknown;
    try {
      raw = JSON.parse(row.manifest);
    } catch (err) {
      throw new UsageError(
        "checkpoint_damaged",
        `the shared manifest of checkpoint ${id} is not valid JSON: ${(err as Error).message}`,
      );
    }
    // Checked before any blob is fetched; written to the vault only once they all are.
    const manifest = vault.checkShared(id, raw);
    for (const [sha256, size] of distinctBlobs(manifest)) {
      if (vault.blobs.holds(sha256, size)) continue;
      const head = await this.store.get<{ size: number | string }>(
        "SELECT size FROM lattice_checkpoint_blobs WHERE sha256 = ?",
        [sha256],
      );
      if (!head)
        throw new NotFoundError(
          "checkpoint_damaged",
          `checkpoint ${id} of run ${runId} names blob ${sha256.slice(0, 12)}…, which the store does not hold`,
        );
      await vault.blobs.receive(sha256, size, this.chunks(sha256));
    }
    vault.keep(runId, id, manifest);
    return manifest;
  }

  /** The chunks of a blob, in order, one row read at a time. */
  private async *chunks(sha256: string): AsyncGenerator<Buffer> {
    for (let seq = 0; ; seq++) {
      const row = await this.store.get<{ data: Buffer | Uint8Array }>(
        "SELECT data FROM lattice_checkpoint_chunks WHERE sha256 = ? AND seq = ?",
        [sha256, seq],
      );
      if (!row) return;
      yield Buffer.isBuffer(row.data) ? row.data : Buffer.from(row.data);
    }
  }

  /** Of `blobs`, those the store has no head for. */
  private async missing(blobs: Map<string, number>): Promise<Array<[string, number]>> {
    const all = [...blobs];
    const out: Array<[string, number]> = [];
    for (let i = 0; i < all.length; i += HEADS_PER_QUERY) {
      const part = all.slice(i, i + HEADS_PER_QUERY);
      const held = new Set(
        (
          await this.store.all<{ sha256: string }>(
            `SELECT sha256 FROM lattice_checkpoint_blobs WHERE sha256 IN (${part.map(() => "?").join(", ")})`,
            part.map(([sha]) => sha),
          )
        ).map((r) => r.sha256),
      );
      for (const blob of part) if (!held.has(blob[0])) out.push(blob);
    }
    return out;
  }
}

/** The distinct contents a manifest names, with their sizes. */
function distinctBlobs(manifest: Manifest): Map<string, number> {
  const blobs = new Map<string, number>();
  for (const e of manifest.entries) if (e.type === "file") blobs.set(e.sha256, e.size);
  return blobs;
}
