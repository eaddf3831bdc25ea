/**
 * A checkpoint's manifest: every directory, file and symlink of the workspace at checkpoint time,
 * files by the sha256 of their content (the blob that holds it). Paths are relative, `/`-separated,
 * parents listed before their children.
 */
import { z } from "zod";
import { CHECKPOINT_ID } from "./protocol.js";

export const MANIFEST_VERSION = 1;

const relPath = z
  .string()
  .min(1)
  .refine((p) => !p.startsWith("/") && !p.split("/").some((s) => s === "" || s === "." || s === ".."), "expected a relative path without '.', '..' or empty segments");

export const ManifestEntrySchema = z.discriminatedUnion("type", [
  z.strictObject({ type: z.literal("dir"), path: relPath, mode: z.int().min(0).max(0o7777) }),
  z.strictObject({
    type: z.literal("file"),
    path: relPath,
    mode: z.int().min(0).max(0o7777),
    size: z.int().min(0),
    sha256: z.string().regex(/^[0-9a-f]{64}$/),
    mtime_ms: z.number(),
  }),
  z.strictObject({ type: z.literal("symlink"), path: relPath, target: z.string().min(1) }),
]);
export type ManifestEntry = z.output<typeof ManifestEntrySchema>;
export type FileEntry = Extract<ManifestEntry, { type: "file" }>;

export const ManifestSchema = z.strictObject({
  version: z.literal(MANIFEST_VERSION),
  id: z.string().regex(CHECKPOINT_ID),
  created_at: z.string(),
  /** The workspace the checkpoint was taken of (informational: it restores anywhere). */
  workspace: z.string(),
  files: z.int().min(0),
  bytes: z.int().min(0),
  entries: z.array(ManifestEntrySchema),
});
export type Manifest = z.output<typeof ManifestSchema>;
