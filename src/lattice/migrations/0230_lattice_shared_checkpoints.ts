import type { Migration } from "../../store/index.js";

/**
 * Checkpoints every machine can restore (issue 33): the WAITING checkpoints a supervisor kept,
 * shared through the store when it is PostgreSQL. A manifest per run and checkpoint; each distinct
 * content once (by sha256), in chunks of up to 1 MiB so neither side holds a whole file in memory.
 * A blob's head row is written in the transaction that writes its chunks: a head means the
 * content is there whole.
 */
const sql = (bytes: string) => `
CREATE TABLE lattice_checkpoint_manifests (
  run_id TEXT NOT NULL,
  checkpoint_id TEXT NOT NULL,
  manifest TEXT NOT NULL,
  created_at TEXT NOT NULL,
  PRIMARY KEY (run_id, checkpoint_id)
);
CREATE TABLE lattice_checkpoint_blobs (
  sha256 TEXT PRIMARY KEY,
  size BIGINT NOT NULL
);
CREATE TABLE lattice_checkpoint_chunks (
  sha256 TEXT NOT NULL,
  seq INTEGER NOT NULL,
  data ${bytes} NOT NULL,
  PRIMARY KEY (sha256, seq)
);
`;

export const m0230: Migration = {
  version: 230,
  name: "lattice checkpoints shared through the store (manifests, blobs in chunks)",
  up: { sqlite: sql("BLOB"), postgres: sql("BYTEA") },
};
