import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, realpathSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execFileSync } from "node:child_process";
import {
  checkpointExists,
  createCheckpoint,
  defaultCheckpointDir,
  listCheckpoints,
  pruneCheckpoints,
  readManifest,
  restoreCheckpoint,
} from "../../../src/lattice/index.js";

let root: string;
let ws: string;
let dir: string;

/** Files written "long ago", so the stat cache trusts them (recent files are re-hashed: racy). */
function write(rel: string, content: string, ageS = 3600): void {
  const abs = join(ws, rel);
  mkdirSync(join(abs, ".."), { recursive: true });
  writeFileSync(abs, content);
  const t = Date.now() / 1000 - ageS;
  utimesSync(abs, t, t);
}

function countBlobs(): number {
  const blobs = join(dir, "blobs");
  if (!existsSync(blobs)) return 0;
  return readdirSync(blobs)
    .filter((p) => !p.startsWith("."))
    .reduce((n, p) => n + readdirSync(join(blobs, p)).length, 0);
}

function tree(base: string): Record<string, string> {
  const out: Record<string, string> = {};
  const visit = (abs: string, rel: string) => {
    for (const name of readdirSync(abs).sort()) {
      const a = join(abs, name);
      const r = rel ? `${rel}/${name}` : name;
      const st = lstatSync(a);
      if (st.isSymbolicLink()) out[r] = `-> ${readlinkSync(a)}`;
      else if (st.isDirectory()) {
        out[`${r}/`] = (st.mode & 0o777).toString(8);
        visit(a, r);
      } else out[r] = `${(st.mode & 0o777).toString(8)} ${readFileSync(a, "utf8")}`;
    }
  };
  visit(base, "");
  return out;
}

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "lattice-chk-"));
  ws = join(root, "workspace");
  dir = join(root, "checkpoints");
  mkdirSync(ws);
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe("checkpoints", () => {
  it("snapshot files, directories, symlinks and modes, and restore them exactly", () => {
    write("README.md", "hello");
    write("src/a.ts", "export const a = 1;\n");
    write("src/deep/b.ts", "b");
    mkdirSync(join(ws, "empty"));
    chmodSync(join(ws, "src/a.ts"), 0o755);
    symlinkSync("src/a.ts", join(ws, "link"));
    symlinkSync("/nonexistent/elsewhere", join(ws, "dangling"));
    const before = tree(ws);
    const c = createCheckpoint(ws, dir);
    expect(c.id).toMatch(/^chk_[0-9a-f]{24}$/);
    expect(c).toMatchObject({ files: 3, bytes: 5 + 20 + 1, hashed_files: 3, new_blobs: 3, new_bytes: 26 });
    expect(checkpointExists(dir, c.id)).toBe(true);

    // Change everything: edit, delete, add, replace a file by a directory and a symlink by a file.
    writeFileSync(join(ws, "README.md"), "changed");
    rmSync(join(ws, "src/deep"), { recursive: true });
    write("new/file.txt", "new");
    rmSync(join(ws, "link"));
    writeFileSync(join(ws, "link"), "not a link");
    rmSync(join(ws, "empty"), { recursive: true });
    writeFileSync(join(ws, "empty"), "now a file");
    chmodSync(join(ws, "src/a.ts"), 0o644);

    const r = restoreCheckpoint(ws, dir, c.id);
    expect(tree(ws)).toEqual(before);
    expect(r.removed).toBeGreaterThanOrEqual(1);
    expect(r.written).toBe(2); // README.md and src/deep/b.ts
  });

  it("cost nothing for unchanged files: no re-read, no new blob, and restore leaves them in place", () => {
    for (let i = 0; i < 50; i++) write(`f${i}.txt`, `content ${i}`);
    write("same1.txt", "duplicate");
    write("same2.txt", "duplicate");
    const first = createCheckpoint(ws, dir);
    expect(first).toMatchObject({ files: 52, hashed_files: 52, new_blobs: 51 });
    expect(countBlobs()).toBe(51);

    write("f3.txt", "changed 3", 0);
    const second = createCheckpoint(ws, dir);
    expect(second).toMatchObject({ files: 52, hashed_files: 1, new_blobs: 1, new_bytes: 9 });
    expect(countBlobs()).toBe(52);

    const ino = statSync(join(ws, "f10.txt")).ino;
    const r = restoreCheckpoint(ws, dir, first.id);
    expect(r).toEqual({ id: first.id, written: 1, removed: 0, unchanged: 51 });
    expect(readFileSync(join(ws, "f3.txt"), "utf8")).toBe("content 3");
    expect(statSync(join(ws, "f10.txt")).ino).toBe(ino);
    // Restoring the same checkpoint again writes nothing.
    expect(restoreCheckpoint(ws, dir, first.id)).toMatchObject({ written: 0, removed: 0, unchanged: 52 });
  });

  it("notice a change that keeps size and mtime when the file was racy (modified just before the checkpoint)", () => {
    write("racy.txt", "aaaa", 0);
    const first = createCheckpoint(ws, dir);
    const st = statSync(join(ws, "racy.txt"));
    writeFileSync(join(ws, "racy.txt"), "bbbb");
    utimesSync(join(ws, "racy.txt"), st.atime, st.mtime);
    const second = createCheckpoint(ws, dir);
    expect(second.hashed_files).toBe(1);
    const shaOf = (id: string) => readManifest(dir, id).entries.find((e) => e.path === "racy.txt");
    expect(shaOf(first.id)).not.toEqual(shaOf(second.id));
  });

  it("leave .lattice/ out of the snapshot and untouched by restore", () => {
    write("work.txt", "v1");
    mkdirSync(join(ws, ".lattice"));
    writeFileSync(join(ws, ".lattice/outbox.jsonl"), "line1\n");
    const c = createCheckpoint(ws, dir);
    expect(readManifest(dir, c.id).entries.map((e) => e.path)).toEqual(["work.txt"]);
    writeFileSync(join(ws, ".lattice/outbox.jsonl"), "line1\nline2\n");
    writeFileSync(join(ws, ".lattice/resumed"), "key\n");
    restoreCheckpoint(ws, dir, c.id);
    expect(readFileSync(join(ws, ".lattice/outbox.jsonl"), "utf8")).toBe("line1\nline2\n");
    expect(readFileSync(join(ws, ".lattice/resumed"), "utf8")).toBe("key\n");
  });

  it("include .git: a commit made before WAITING comes back on restore", () => {
    const git = (...args: string[]) => execFileSync("git", ["-C", ws, ...args], { encoding: "utf8", env: { ...process.env, GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@e", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@e" } });
    git("init", "-q", "-b", "main");
    write("STATE/current_state.md", "# state\n");
    git("add", ".");
    git("commit", "-qm", "base");
    git("checkout", "-qb", "sprite/doc-update");
    writeFileSync(join(ws, "STATE/current_state.md"), "# state\nupdated\n");
    git("commit", "-qam", "apply doc update");
    const head = git("rev-parse", "HEAD").trim();
    const c = createCheckpoint(ws, dir);
    // The workspace is wiped (a new machine, a crash) and restored.
    rmSync(ws, { recursive: true });
    mkdirSync(ws);
    restoreCheckpoint(ws, dir, c.id);
    expect(git("rev-parse", "--abbrev-ref", "HEAD").trim()).toBe("sprite/doc-update");
    expect(git("rev-parse", "HEAD").trim()).toBe(head);
    expect(git("status", "--porcelain").trim()).toBe("");
  });

  it("never snapshot the checkpoint directory when it lies inside the workspace", () => {
    write("a.txt", "a");
    const inner = join(ws, ".checkpoints");
    const c = createCheckpoint(ws, inner);
    const c2 = createCheckpoint(ws, inner);
    expect(readManifest(inner, c2.id).entries.map((e) => e.path)).toEqual(["a.txt"]);
    restoreCheckpoint(ws, inner, c.id);
    expect(checkpointExists(inner, c2.id)).toBe(true);
  });

  it("list checkpoints oldest first with their figures, and prune old ones with the blobs only they used", () => {
    write("keep.txt", "shared");
    write("v.txt", "one");
    const a = createCheckpoint(ws, dir);
    write("v.txt", "two!");
    const b = createCheckpoint(ws, dir);
    write("v.txt", "three");
    const c = createCheckpoint(ws, dir);
    const list = listCheckpoints(dir);
    expect(list.map((x) => x.id)).toEqual([a.id, b.id, c.id]);
    expect(list[2]).toMatchObject({ files: 2, bytes: 6 + 5, workspace: realpathSync(ws) });
    expect(countBlobs()).toBe(4);
    const p = pruneCheckpoints(dir, 1);
    expect(p).toEqual({ removed_checkpoints: [a.id, b.id], kept: 1, removed_blobs: 2, freed_bytes: 3 + 4 });
    expect(countBlobs()).toBe(2);
    expect(checkpointExists(dir, a.id)).toBe(false);
    // The stat cache forgot the pruned content: a file changed back to old content is stored again.
    write("v.txt", "one");
    expect(createCheckpoint(ws, dir)).toMatchObject({ hashed_files: 1, new_blobs: 1 });
    write("v.txt", "three");
    restoreCheckpoint(ws, dir, c.id);
    expect(readFileSync(join(ws, "v.txt"), "utf8")).toBe("three");
    expect(pruneCheckpoints(dir, 0)).toMatchObject({ kept: 0, removed_blobs: 3 }); // shared, three, one
    expect(listCheckpoints(dir)).toEqual([]);
  });

  it("after prune, a file trusted by the stat cache is stored again rather than referencing a deleted blob", () => {
    write("stable.txt", "stable");
    createCheckpoint(ws, dir);
    pruneCheckpoints(dir, 0);
    const c = createCheckpoint(ws, dir);
    expect(c).toMatchObject({ hashed_files: 1, new_blobs: 1 });
    rmSync(join(ws, "stable.txt"));
    restoreCheckpoint(ws, dir, c.id);
    expect(readFileSync(join(ws, "stable.txt"), "utf8")).toBe("stable");
  });

  it("refuse bad ids, unknown checkpoints, damaged manifests and missing blobs with clear errors", () => {
    write("a.txt", "a");
    const c = createCheckpoint(ws, dir);
    expect(() => restoreCheckpoint(ws, dir, "../../etc/passwd")).toThrow('"../../etc/passwd" is not a checkpoint id');
    expect(() => restoreCheckpoint(ws, dir, "chk_missing")).toThrow(`checkpoint chk_missing does not exist in ${dir} (see pmagent checkpoint list)`);
    expect(checkpointExists(dir, "../x")).toBe(false);

    const manifestFile = join(dir, "manifests", `${c.id}.json`);
    const manifest = JSON.parse(readFileSync(manifestFile, "utf8")) as { entries: Array<Record<string, unknown>> };
    const sha = manifest.entries[0]!.sha256 as string;
    rmSync(join(dir, "blobs", sha.slice(0, 2), sha.slice(2)));
    writeFileSync(join(ws, "a.txt"), "changed");
    expect(() => restoreCheckpoint(ws, dir, c.id)).toThrow(`checkpoint ${c.id} cannot be restored: the content of a.txt (blob ${sha.slice(0, 12)}…) is missing in ${dir}`);
    expect(readFileSync(join(ws, "a.txt"), "utf8")).toBe("changed"); // checked before anything was touched

    writeFileSync(manifestFile, JSON.stringify({ ...manifest, entries: [{ type: "file", path: "../escape", mode: 420, size: 1, sha256: sha, mtime_ms: 0 }] }));
    expect(() => restoreCheckpoint(ws, dir, c.id)).toThrow(`manifest ${manifestFile} is damaged: $.entries[0]: path: expected a relative path without '.', '..' or empty segments`);
    writeFileSync(manifestFile, JSON.stringify({ ...manifest, entries: [{ type: "file", path: "link/passwd", mode: 420, size: 1, sha256: sha, mtime_ms: 0 }] }));
    expect(() => restoreCheckpoint(ws, dir, c.id)).toThrow('$.entries[0]: "link/passwd" is not under a directory listed before it');
    writeFileSync(manifestFile, JSON.stringify({ ...manifest, entries: [{ type: "dir", path: ".lattice", mode: 493 }] }));
    expect(() => restoreCheckpoint(ws, dir, c.id)).toThrow('$.entries[0]: ".lattice" is inside .lattice/, which checkpoints never hold');
    writeFileSync(manifestFile, JSON.stringify({ ...manifest, entries: [{ type: "file", path: "a.txt", mode: 420, size: 1, sha256: "xyz", mtime_ms: 0 }] }));
    expect(() => restoreCheckpoint(ws, dir, c.id)).toThrow("$.entries[0]: sha256: expected 64 hex digits");
    writeFileSync(manifestFile, "{");
    expect(() => restoreCheckpoint(ws, dir, c.id)).toThrow(`manifest ${manifestFile} is not valid JSON`);
  });

  it("refuse a missing workspace and create the restore target when absent", () => {
    expect(() => createCheckpoint(join(root, "nope"), dir)).toThrow(`workspace ${join(root, "nope")} does not exist (set LATTICE_WORKSPACE or pass --workspace)`);
    write("a.txt", "a");
    const c = createCheckpoint(ws, dir);
    const other = join(root, "fresh");
    restoreCheckpoint(other, dir, c.id);
    expect(readFileSync(join(other, "a.txt"), "utf8")).toBe("a");
  });

  it("refuse a negative --keep", () => {
    expect(() => pruneCheckpoints(dir, -1)).toThrow("--keep expects a whole number of checkpoints to keep (0 or more), got -1");
  });

  it("place checkpoints beside the workspace unless LATTICE_CHECKPOINT_DIR says otherwise", () => {
    expect(defaultCheckpointDir("/workspace", {})).toBe("/.lattice-checkpoints/workspace");
    expect(defaultCheckpointDir("/runs/r1/ws", {})).toBe("/runs/r1/.lattice-checkpoints/ws");
    expect(defaultCheckpointDir("/runs/r1/ws", { LATTICE_CHECKPOINT_DIR: "/var/chk" })).toBe("/var/chk");
  });

  it("take over a lock left by a dead process", () => {
    write("a.txt", "a");
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "lock"), "999999999");
    expect(createCheckpoint(ws, dir).files).toBe(1);
    expect(existsSync(join(dir, "lock"))).toBe(false);
  });
});

describe("checkpoint blobs", () => {
  it("refuse to restore from a blob cut short (e.g. by a power loss), before touching the workspace", () => {
    write("big.txt", "0123456789");
    const c = createCheckpoint(ws, dir);
    const sha = readManifest(dir, c.id).entries.find((e) => e.path === "big.txt")! as { sha256: string };
    const blob = join(dir, "blobs", sha.sha256.slice(0, 2), sha.sha256.slice(2));
    chmodSync(blob, 0o644);
    writeFileSync(blob, "01234");
    rmSync(join(ws, "big.txt"));
    expect(() => restoreCheckpoint(ws, dir, c.id)).toThrow(`the content of big.txt (blob ${sha.sha256.slice(0, 12)}…) has 5 bytes instead of 10`);
    expect(existsSync(join(ws, "big.txt"))).toBe(false);
  });

  it("store and restore a file larger than the in-memory limit", () => {
    const big = Buffer.alloc(17 * 1024 * 1024, 7);
    big.write("head", 0);
    writeFileSync(join(ws, "large.bin"), big);
    const c = createCheckpoint(ws, dir);
    expect(c).toMatchObject({ files: 1, bytes: big.length, new_blobs: 1 });
    writeFileSync(join(ws, "large.bin"), "small now");
    expect(restoreCheckpoint(ws, dir, c.id).written).toBe(1);
    expect(readFileSync(join(ws, "large.bin")).equals(big)).toBe(true);
    rmSync(join(ws, "large.bin"));
    restoreCheckpoint(ws, dir, c.id);
    expect(statSync(join(ws, "large.bin")).size).toBe(big.length);
  });
});
