import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseConfig } from "../../src/config/index.js";
import { ensureBareRepo, pullRemote, pushRemote } from "../../src/forge/index.js";
import { sh as git } from "../lattice/fixtures.js";

/** Two machines' mirrors of one team forge (here a path: the protocol is git's either way; test/machines serves it over git://). */
describe("a forge remote and its mirrors", () => {
  let dir: string;
  let remote: string;
  let first: string;
  let second: string;
  let main: string;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), "pmagent-forge-remote-"));
    const seed = join(dir, "seed");
    execFileSync("git", ["init", "-q", "-b", "main", seed]);
    writeFileSync(join(seed, "a.txt"), "a\n");
    git(seed, "add", ".");
    git(seed, "commit", "-q", "-m", "a");
    main = git(seed, "rev-parse", "HEAD");
    remote = join(dir, "team.git");
    git(dir, "clone", "-q", "--bare", seed, remote);
    first = join(dir, "first.git");
    second = join(dir, "second.git");
    for (const m of [first, second]) {
      await ensureBareRepo(m);
      await pullRemote(m, remote);
    }
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /** A commit on top of `parent` made in mirror `repo` (a tree with one more file). */
  const commitIn = (repo: string, parent: string, file: string) => {
    const blob = execFileSync("git", ["hash-object", "-w", "--stdin"], { cwd: repo, input: `${file}\n` })
      .toString()
      .trim();
    const tree = execFileSync("git", ["mktree"], { cwd: repo, input: `100644 blob ${blob}\t${file}\n` })
      .toString()
      .trim();
    return git(repo, "commit-tree", tree, "-p", parent, "-m", file);
  };

  it("pushes a ref leased on what the mirror read; the second machine, which read the same, is told the forge moved", async () => {
    const mine = commitIn(first, main, "first.txt");
    await pushRemote(first, remote, [{ ref: "refs/heads/main", sha: mine, expect: main }]);
    expect(git(remote, "rev-parse", "main")).toBe(mine);
    const theirs = commitIn(second, main, "second.txt");
    await expect(
      pushRemote(second, remote, [{ ref: "refs/heads/main", sha: theirs, expect: main }]),
    ).rejects.toMatchObject({
      code: "forge_moved",
      message: `the forge ${remote} moved main while this machine worked: nothing was pushed`,
    });
    expect(git(remote, "rev-parse", "main")).toBe(mine);
    // Read again, the second machine sees the first's work.
    await pullRemote(second, remote);
    expect(git(second, "rev-parse", "main")).toBe(mine);
  });

  it("moves several refs all or none: one stale lease and none of them moves", async () => {
    const branch = commitIn(first, main, "b.txt");
    await expect(
      pushRemote(first, remote, [
        { ref: "refs/heads/feature", sha: branch, expect: null },
        { ref: "refs/heads/main", sha: branch, expect: "0".repeat(40) },
      ]),
    ).rejects.toMatchObject({ code: "forge_moved" });
    expect(() => git(remote, "rev-parse", "--verify", "--quiet", "refs/heads/feature")).toThrow();
    // A ref that must not exist yet, and does not: created.
    await pushRemote(first, remote, [{ ref: "refs/heads/feature", sha: branch, expect: null }]);
    expect(git(remote, "rev-parse", "feature")).toBe(branch);
  });

  it("names the forge it cannot reach", async () => {
    const gone = join(dir, "nowhere.git");
    await expect(pushRemote(first, gone, [{ ref: "refs/heads/main", sha: main, expect: null }])).rejects.toMatchObject({
      code: "forge_unreachable",
      message: expect.stringContaining(`cannot push to the forge ${gone}: `),
    });
    await expect(pullRemote(first, gone)).rejects.toMatchObject({
      code: "git_failed",
      message: expect.stringContaining("git fetch in"),
    });
  });

  it("refuses a forge.remote that git would read as an option or split", () => {
    for (const remoteUrl of ["--upload-pack=touch /tmp/x", "git://host/a repo.git"]) {
      expect(() =>
        parseConfig(JSON.stringify({ project_id: "p", forge: { remote: remoteUrl } }), "pmagent.config.json"),
      ).toThrow("a git URL or path, without spaces, not starting with '-'");
    }
  });
});
