import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  CheckpointVault,
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
    const git = (...args: string[]) =>
      execFileSync("git", ["-C", ws, ...args], {
        encoding: "utf8",
        env: {
          ...process.env,
          GIT_AUTHOR_NAME: "t",
          GIT_AUTHOR_EMAIL: "t@e",
          GIT_COMMITTER_NAME: "t",
          GIT_COMMITTER_EMAIL: "t@e",
        },
      });
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
    // "Oldest" is by creation time (ms): checkpoints of the same millisecond are ordered by id, so
    // each is made in a millisecond of its own (the clock read until it moves; no timer).
    const nextMs = () => {
      const t = Date.now();
      while (Date.now() === t);
    };
    write("keep.txt", "shared");
    write("v.txt", "one");
    const a = createCheckpoint(ws, dir);
    nextMs();
    write("v.txt", "two!");
    const b = createCheckpoint(ws, dir);
    nextMs();
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
    expect(() => restoreCheckpoint(ws, dir, "chk_missing")).toThrow(
      `checkpoint chk_missing does not exist in ${dir} (see pmagent checkpoint list)`,
    );
    expect(checkpointExists(dir, "../x")).toBe(false);

    const manifestFile = join(dir, "manifests", `${c.id}.json`);
    const manifest = JSON.parse(readFileSync(manifestFile, "utf8")) as { entries: Array<Record<string, unknown>> };
    const sha = manifest.entries[0]!.sha256 as string;
    rmSync(join(dir, "blobs", sha.slice(0, 2), sha.slice(2)));
    writeFileSync(join(ws, "a.txt"), "changed");
    expect(() => restoreCheckpoint(ws, dir, c.id)).toThrow(
      `checkpoint ${c.id} cannot be restored: the content of a.txt (blob ${sha.slice(0, 12)}…) is missing in ${dir}`,
    );
    expect(readFileSync(join(ws, "a.txt"), "utf8")).toBe("changed"); // checked before anything was touched

    writeFileSync(
      manifestFile,
      JSON.stringify({
        ...manifest,
        entries: [{ type: "file", path: "../escape", mode: 420, size: 1, sha256: sha, mtime_ms: 0 }],
      }),
    );
    expect(() => restoreCheckpoint(ws, dir, c.id)).toThrow(
      `manifest ${manifestFile} is damaged: $.entries[0]: path: expected a relative path without '.', '..' or empty segments`,
    );
    writeFileSync(
      manifestFile,
      JSON.stringify({
        ...manifest,
        entries: [{ type: "file", path: "link/passwd", mode: 420, size: 1, sha256: sha, mtime_ms: 0 }],
      }),
    );
    expect(() => restoreCheckpoint(ws, dir, c.id)).toThrow(
      '$.entries[0]: "link/passwd" is not under a directory listed before it',
    );
    writeFileSync(
      manifestFile,
      JSON.stringify({ ...manifest, entries: [{ type: "dir", path: ".lattice", mode: 493 }] }),
    );
    expect(() => restoreCheckpoint(ws, dir, c.id)).toThrow(
      '$.entries[0]: ".lattice" is inside .lattice/, which checkpoints never hold',
    );
    writeFileSync(
      manifestFile,
      JSON.stringify({
        ...manifest,
        entries: [{ type: "file", path: "a.txt", mode: 420, size: 1, sha256: "xyz", mtime_ms: 0 }],
      }),
    );
    expect(() => restoreCheckpoint(ws, dir, c.id)).toThrow("$.entries[0]: sha256: expected 64 hex digits");
    writeFileSync(manifestFile, "{");
    expect(() => restoreCheckpoint(ws, dir, c.id)).toThrow(`manifest ${manifestFile} is not valid JSON`);
  });

  it("refuse a missing workspace and create the restore target when absent", () => {
    expect(() => createCheckpoint(join(root, "nope"), dir)).toThrow(
      `workspace ${join(root, "nope")} does not exist (set LATTICE_WORKSPACE or pass --workspace)`,
    );
    write("a.txt", "a");
    const c = createCheckpoint(ws, dir);
    const other = join(root, "fresh");
    restoreCheckpoint(other, dir, c.id);
    expect(readFileSync(join(other, "a.txt"), "utf8")).toBe("a");
  });

  it("refuse a negative --keep", () => {
    expect(() => pruneCheckpoints(dir, -1)).toThrow(
      "--keep expects a whole number of checkpoints to keep (0 or more), got -1",
    );
  });

  it("place checkpoints beside the workspace unless LATTICE_CHECKPOINT_DIR says otherwise", () => {
    expect(defaultCheckpointDir("/workspace", {})).toBe("/.lattice-checkpoints/workspace");
    expect(defaultCheckpointDir("/runs/r1/ws", {})).toBe("/runs/r1/.lattice-checkpoints/ws");
    expect(defaultCheckpointDir("/runs/r1/ws", { LATTICE_CHECKPOINT_DIR: "/var/chk" })).toBe("/var/chk");
  });

  it("refuse a lock that is a FIFO at once instead of blocking in open()", () => {
    write("a.txt", "a");
    mkdirSync(dir, { recursive: true });
    execFileSync("mkfifo", [join(dir, "lock")]);
    expect(() => createCheckpoint(ws, dir)).toThrow(
      `the checkpoint directory's lock ${join(dir, "lock")} is a FIFO, not a regular file`,
    );
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
    expect(() => restoreCheckpoint(ws, dir, c.id)).toThrow(
      `the content of big.txt (blob ${sha.sha256.slice(0, 12)}…) has 5 bytes instead of 10`,
    );
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

/**
 * A sprite writes its own checkpoint directory, and the supervisor restores outside the sandbox:
 * the attacks of issue 31, each against a directory written by hand as a hostile sprite would.
 */
describe("checkpoints a sprite forged", () => {
  let outside: string;
  beforeEach(() => {
    outside = join(root, "outside");
    mkdirSync(outside);
    writeFileSync(join(outside, "host.txt"), "host file");
  });

  /** Store `content` as a blob of `dir` the way a sprite could, returning its sha256. */
  function blob(content: string): string {
    const sha = createHash("sha256").update(content).digest("hex");
    mkdirSync(join(dir, "blobs", sha.slice(0, 2)), { recursive: true });
    writeFileSync(join(dir, "blobs", sha.slice(0, 2), sha.slice(2)), content);
    return sha;
  }

  function forge(entries: unknown[], id = "chk_forged"): string {
    mkdirSync(join(dir, "manifests"), { recursive: true });
    writeFileSync(
      join(dir, "manifests", `${id}.json`),
      JSON.stringify({
        version: 1,
        id,
        created_at: "2026-01-01T00:00:00.000Z",
        workspace: "/w",
        files: 0,
        bytes: 0,
        entries,
      }),
    );
    return id;
  }

  const file = (path: string, content: string, mode = 0o644) => ({
    type: "file",
    path,
    mode,
    size: Buffer.byteLength(content),
    sha256: blob(content),
    mtime_ms: 0,
  });

  it("refuse a path listed first as a directory and then as a link, before a file under it is written through the link", () => {
    const id = forge([
      { type: "dir", path: "a", mode: 0o755 },
      { type: "symlink", path: "a", target: outside },
      file("a/host.txt", "overwritten"),
    ]);
    expect(() => restoreCheckpoint(ws, dir, id)).toThrow(
      `manifest ${join(dir, "manifests", `${id}.json`)} is damaged: $.entries[1]: "a" is listed twice`,
    );
    expect(readFileSync(join(outside, "host.txt"), "utf8")).toBe("host file");
  });

  it("refuse a blob that is a link (to /proc/self/environ, size 0), naming it, and copy nothing", () => {
    const sha = createHash("sha256").update("").digest("hex");
    mkdirSync(join(dir, "blobs", sha.slice(0, 2)), { recursive: true });
    symlinkSync("/proc/self/environ", join(dir, "blobs", sha.slice(0, 2), sha.slice(2)));
    const id = forge([{ type: "file", path: "env.txt", mode: 0o644, size: 0, sha256: sha, mtime_ms: 0 }]);
    expect(() => restoreCheckpoint(ws, dir, id)).toThrow(
      `checkpoint ${id} cannot be restored: the content of env.txt (blob ${sha.slice(0, 12)}…) is not a regular file in ${dir}`,
    );
    expect(existsSync(join(ws, "env.txt"))).toBe(false);
  });

  it("refuse a blob reached through a linked directory, and a blob whose bytes are not the content its name says", () => {
    const sha = blob("real");
    rmSync(join(dir, "blobs", sha.slice(0, 2)), { recursive: true });
    mkdirSync(join(outside, "fake"));
    writeFileSync(join(outside, "fake", sha.slice(2)), "real");
    symlinkSync(join(outside, "fake"), join(dir, "blobs", sha.slice(0, 2)));
    const id = forge([{ type: "file", path: "x.txt", mode: 0o644, size: 4, sha256: sha, mtime_ms: 0 }]);
    expect(() => restoreCheckpoint(ws, dir, id)).toThrow(
      `passes through ${join(dir, "blobs", sha.slice(0, 2))}, a symbolic link`,
    );
    expect(existsSync(join(ws, "x.txt"))).toBe(false);

    const lie = createHash("sha256").update("what the name says").digest("hex");
    mkdirSync(join(dir, "blobs", lie.slice(0, 2)), { recursive: true });
    writeFileSync(join(dir, "blobs", lie.slice(0, 2), lie.slice(2)), "other bytes of size 18".slice(0, 18));
    const id2 = forge([{ type: "file", path: "y.txt", mode: 0o644, size: 18, sha256: lie, mtime_ms: 0 }], "chk_lie");
    expect(() => restoreCheckpoint(ws, dir, id2)).toThrow(
      /the content of y\.txt \(blob [0-9a-f]{12}… does not hold the content its name says/,
    );
    expect(existsSync(join(ws, "y.txt"))).toBe(false);
  });

  it("never follow a link the workspace holds: a linked file is replaced, a linked directory becomes a real one", () => {
    symlinkSync(join(outside, "host.txt"), join(ws, "f.txt"));
    symlinkSync(outside, join(ws, "d"));
    const id = forge([
      file("f.txt", "restored f"),
      { type: "dir", path: "d", mode: 0o755 },
      file("d/host.txt", "restored d"),
    ]);
    restoreCheckpoint(ws, dir, id);
    expect(readFileSync(join(outside, "host.txt"), "utf8")).toBe("host file");
    expect(lstatSync(join(ws, "f.txt")).isFile()).toBe(true);
    expect(readFileSync(join(ws, "d/host.txt"), "utf8")).toBe("restored d");
    expect(lstatSync(join(ws, "d")).isDirectory()).toBe(true);
  });

  it("restore permission bits only: no setuid, setgid or sticky file comes out of a checkpoint", () => {
    const id = forge([file("tool", "#!/bin/sh\n", 0o7777)]);
    restoreCheckpoint(ws, dir, id);
    expect(statSync(join(ws, "tool")).mode & 0o7777).toBe(0o777);
  });

  it("refuse a manifest that is a FIFO or a link at once, without blocking", () => {
    mkdirSync(join(dir, "manifests"), { recursive: true });
    execFileSync("mkfifo", [join(dir, "manifests", "chk_fifo.json")]);
    expect(() => restoreCheckpoint(ws, dir, "chk_fifo")).toThrow(
      `manifest ${join(dir, "manifests", "chk_fifo.json")} cannot be read: the manifest ${join(dir, "manifests", "chk_fifo.json")} is a FIFO, not a regular file`,
    );
    symlinkSync(join(outside, "host.txt"), join(dir, "manifests", "chk_link.json"));
    expect(() => restoreCheckpoint(ws, dir, "chk_link")).toThrow("is a symbolic link, not a regular file");
  });
});

describe("the supervisor's checkpoint vault", () => {
  let vaultDir: string;
  beforeEach(() => {
    vaultDir = join(root, "vault");
  });

  it("adopt a sprite's checkpoint (each blob copied once, checked by hash) and restore from it after the sprite's directory is gone", () => {
    write("a.txt", "a");
    write("b/same1.txt", "same");
    write("b/same2.txt", "same");
    const c = createCheckpoint(ws, dir);
    const vault = new CheckpointVault(vaultDir);
    expect(vault.adopt("run_1", dir, c.id)).toEqual({ id: c.id, files: 3, bytes: 9, new_blobs: 2, new_bytes: 5 });
    expect(vault.adopt("run_1", dir, c.id)).toMatchObject({ new_blobs: 0 }); // the same again costs nothing
    expect(vault.adopt("run_2", dir, c.id)).toMatchObject({ files: 3, new_blobs: 0 }); // content is shared by runs
    rmSync(dir, { recursive: true });
    writeFileSync(join(ws, "a.txt"), "changed");
    writeFileSync(join(ws, "extra.txt"), "extra");
    expect(vault.restore("run_1", c.id, ws)).toEqual({ id: c.id, written: 1, removed: 1, unchanged: 2 });
    expect(tree(ws)).toMatchObject({ "a.txt": "644 a", "b/same1.txt": "644 same" });
    expect(existsSync(join(ws, "extra.txt"))).toBe(false);
  });

  it("keep manifests per run: a sprite cannot name another run's checkpoint", () => {
    write("a.txt", "secret of run 1");
    const c = createCheckpoint(ws, dir);
    const vault = new CheckpointVault(vaultDir);
    vault.adopt("run_1", dir, c.id);
    expect(vault.has("run_2", c.id)).toBe(false);
    expect(() => vault.restore("run_2", c.id, ws)).toThrow(
      `checkpoint ${c.id} does not exist in ${join(vaultDir, "runs", "run_2")}`,
    );
    expect(() => vault.has("../run_1", c.id)).toThrow('"../run_1" is not a run id');
  });

  it("take nothing of a damaged checkpoint: a missing blob, a blob with other bytes", () => {
    write("a.txt", "a");
    write("b.txt", "b");
    const c = createCheckpoint(ws, dir);
    const [a, b] = readManifest(dir, c.id).entries as Array<{ sha256: string }>;
    rmSync(join(dir, "blobs", b!.sha256.slice(0, 2), b!.sha256.slice(2)));
    const vault = new CheckpointVault(vaultDir);
    expect(() => vault.adopt("run_1", dir, c.id)).toThrow(`blob ${b!.sha256.slice(0, 12)}… is missing`);
    expect(vault.has("run_1", c.id)).toBe(false);
    const aBlob = join(dir, "blobs", a!.sha256.slice(0, 2), a!.sha256.slice(2));
    chmodSync(aBlob, 0o644);
    writeFileSync(aBlob, "z");
    expect(() => new CheckpointVault(join(root, "vault2")).adopt("run_1", dir, c.id)).toThrow(
      `blob ${a!.sha256.slice(0, 12)}… does not hold the content its name says`,
    );
  });

  it("never touch pmagent's own files when the workspace is the project itself, whatever the manifest lists", () => {
    write("a.txt", "a");
    mkdirSync(join(ws, ".pmagent"));
    writeFileSync(join(ws, ".pmagent", "pmagent.db"), "the store");
    const c = createCheckpoint(ws, join(ws, ".pmagent", "checkpoints"));
    const vault = new CheckpointVault(vaultDir);
    vault.adopt("run_1", join(ws, ".pmagent", "checkpoints"), c.id);
    writeFileSync(join(ws, ".pmagent", "pmagent.db"), "the store, later");
    vault.restore("run_1", c.id, ws, [".pmagent"]);
    expect(readFileSync(join(ws, ".pmagent", "pmagent.db"), "utf8")).toBe("the store, later");
    expect(readFileSync(join(ws, "a.txt"), "utf8")).toBe("a");
    expect(readManifest(join(ws, ".pmagent", "checkpoints"), c.id).entries.map((e) => e.path)).toContain(
      ".pmagent/pmagent.db",
    );
    writeFileSync(join(ws, "a.txt"), "changed");
    expect(vault.restore("run_1", c.id, ws, ["a.txt", ".pmagent"])).toMatchObject({ written: 0 });
    expect(readFileSync(join(ws, "a.txt"), "utf8")).toBe("changed");
  });
});
