import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { execFileSync } from "node:child_process";
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ActionExecutor, openPrHandler } from "../../src/lattice/index.js";
import { GitHubForge, LocalForge, ensureBareRepo, gitHubClient, gitHubRemoteUrl } from "../../src/forge/index.js";
import { FakeGitHub } from "../helpers/fake-github.js";
import { availableStoreKinds, type TestStore } from "../helpers/stores.js";
import { actionRequest, makeProject, makeWorkspace, sh, type TestProject } from "../lattice/fixtures.js";

const commit = (ws: string, message: string) =>
  sh(
    ws,
    "-c",
    "user.name=t",
    "-c",
    "user.email=t@example.invalid",
    "commit",
    "--quiet",
    "--allow-empty",
    "-m",
    message,
  );
/** Rewrite the workspace's branch: its last commit replaced by another (what a rebase or amend does). */
const rewrite = (ws: string) => {
  sh(ws, "reset", "--quiet", "--hard", "HEAD~1");
  commit(ws, "rewritten");
  return sh(ws, "rev-parse", "HEAD");
};

const kinds = await availableStoreKinds();

describe.each(kinds)("local forge ($name)", (kind) => {
  let t: TestStore;
  let p: TestProject;
  beforeEach(async () => {
    t = await kind.open();
    p = makeProject();
  });
  afterEach(async () => {
    await t.cleanup();
    p.cleanup();
  });

  it("numbers pull requests per project, reuses an open one for the same head and follows its new commits", async () => {
    const forge = new LocalForge({
      store: t.store,
      projectId: "demo",
      root: p.project.root,
      bareRepo: ".pmagent/forge.git",
    });
    const a = makeWorkspace(p.project.root, "wa", "sprite/a");
    const b = makeWorkspace(p.project.root, "wb", "sprite/b");
    const [first, second] = await Promise.all([
      forge.openPullRequest({ title: "A", body: "", base: "main", head: "sprite/a", workspace: a.path }),
      forge.openPullRequest({ title: "B", body: "", base: "main", head: "sprite/b", workspace: b.path }),
    ]);
    expect([first.number, second.number].sort()).toEqual([1, 2]);
    sh(
      a.path,
      "-c",
      "user.name=t",
      "-c",
      "user.email=t@example.invalid",
      "commit",
      "--quiet",
      "--allow-empty",
      "-m",
      "more",
    );
    const again = await forge.openPullRequest({
      title: "A again",
      body: "",
      base: "main",
      head: "sprite/a",
      workspace: a.path,
    });
    expect(again).toMatchObject({ number: first.number, created: false, head_sha: sh(a.path, "rev-parse", "HEAD") });
    const other = new LocalForge({
      store: t.store,
      projectId: "other",
      root: p.project.root,
      bareRepo: ".pmagent/other.git",
    });
    expect(
      (await other.openPullRequest({ title: "O", body: "", base: "main", head: "sprite/a", workspace: a.path })).number,
    ).toBe(1);
    expect((await forge.list({ state: "open" })).map((x) => [x.number, x.title])).toEqual([
      [1, first.number === 1 ? "A" : "B"],
      [2, first.number === 1 ? "B" : "A"],
    ]);
  });

  it("OPEN_PR on a branch the forge has: updated when the new head descends from it, refused with the reason when it does not", async () => {
    const forge = new LocalForge({
      store: t.store,
      projectId: "demo",
      root: p.project.root,
      bareRepo: ".pmagent/forge.git",
    });
    const bare = join(p.project.root, ".pmagent/forge.git");
    const a = makeWorkspace(p.project.root, "wa", "sprite/a");
    const first = await forge.openPullRequest({
      title: "A",
      body: "",
      base: "main",
      head: "sprite/a",
      workspace: a.path,
    });
    commit(a.path, "review fixes");
    const fixed = sh(a.path, "rev-parse", "HEAD");
    const updated = await forge.openPullRequest({
      title: "A",
      body: "",
      base: "main",
      head: "sprite/a",
      workspace: a.path,
    });
    expect(updated).toMatchObject({ number: first.number, created: false, head_sha: fixed });
    expect(sh(bare, "rev-parse", "refs/heads/sprite/a")).toBe(fixed);
    const rewritten = rewrite(a.path);
    const refused = forge.openPullRequest({ title: "A", body: "", base: "main", head: "sprite/a", workspace: a.path });
    await expect(refused).rejects.toMatchObject({ code: "branch_diverged", kind: "conflict" });
    await expect(refused).rejects.toThrow(
      `OPEN_PR: branch "sprite/a" in the forge ${bare} is at ${fixed.slice(0, 12)} (the head of pull request #${first.number}), and the workspace's "sprite/a" at ${rewritten.slice(0, 12)} does not descend from it (its history was rewritten, or the branch was started elsewhere): nothing was pushed. Commit on top of ${fixed.slice(0, 12)} to update the pull request, or open it from a new branch`,
    );
    // The forge's branch and the pull request are as they were.
    expect(sh(bare, "rev-parse", "refs/heads/sprite/a")).toBe(fixed);
    expect((await forge.list()).find((x) => x.number === first.number)?.head_sha).toBe(fixed);
  });

  it("a diverged OPEN_PR fails at its first attempt with the reason (not five retries with an empty one)", async () => {
    const forge = new LocalForge({
      store: t.store,
      projectId: "demo",
      root: p.project.root,
      bareRepo: ".pmagent/forge.git",
    });
    const a = makeWorkspace(p.project.root, "wa", "sprite/a");
    const ex = new ActionExecutor({
      store: t.store,
      handlers: { OPEN_PR: openPrHandler(forge) },
      resume: async () => undefined,
      retry: { baseDelayMs: 5, maxDelayMs: 20, maxAttempts: 5 },
    });
    const request = (n: number) =>
      actionRequest({
        action: "OPEN_PR",
        workspace: a.path,
        parameters: { title: `A${n}`, base: "main", head: "sprite/a" },
        blocking: false,
      });
    expect((await ex.submit(request(1))).state).toBe("succeeded");
    rewrite(a.path);
    const failed = await ex.submit(request(2));
    expect(failed).toMatchObject({ state: "failed", attempts: 1, error: { code: "branch_diverged" } });
    expect(failed.error?.message).toMatch(/^OPEN_PR: branch "sprite\/a" in the forge .* does not descend from it/);
  });

  /**
   * A sprite rewrites its workspace's .git to read a repository the sandbox hides from it (here
   * beside the project: another run's workspace, the forge, one under HOME), whose branch holds a
   * secret. Each way is refused, saying why, and nothing of that repository reaches the forge.
   */
  describe("a workspace whose .git reads another repository", () => {
    const SECRET = "hidden-repository-secret-5f3a9";
    let hidden: { path: string; sha: string };
    let ws: string;
    const hostile: Array<[string, () => void, RegExp]> = [
      [
        "a gitdir: file",
        () => (
          rmSync(join(ws, ".git"), { recursive: true }),
          writeFileSync(join(ws, ".git"), `gitdir: ${hidden.path}/.git\n`)
        ),
        /its \.git is a file \("gitdir: .*\/hidden\/\.git"\) naming another repository, not a directory of its own/,
      ],
      [
        "a symlink",
        () => (rmSync(join(ws, ".git"), { recursive: true }), symlinkSync(join(hidden.path, ".git"), join(ws, ".git"))),
        /its \.git is a symlink \(to .*\/hidden\/\.git\), not a directory of its own/,
      ],
      [
        "a symlinked objects directory and ref",
        () => {
          rmSync(join(ws, ".git", "objects"), { recursive: true });
          symlinkSync(join(hidden.path, ".git", "objects"), join(ws, ".git", "objects"));
          rmSync(join(ws, ".git", "refs", "heads", "sprite", "a"));
          symlinkSync(
            join(hidden.path, ".git", "refs", "heads", "sprite", "a"),
            join(ws, ".git", "refs", "heads", "sprite", "a"),
          );
        },
        /\.git\/objects is a symlink \(to .*\/hidden\/\.git\/objects\)/,
      ],
      [
        "alternates naming its objects",
        () => {
          mkdirSync(join(ws, ".git", "objects", "info"), { recursive: true });
          writeFileSync(join(ws, ".git", "objects", "info", "alternates"), `${hidden.path}/.git/objects\n`);
          writeFileSync(join(ws, ".git", "refs", "heads", "sprite", "a"), `${hidden.sha}\n`);
        },
        /\.git\/objects\/info\/alternates names ".*\/hidden\/\.git\/objects": only the project repository's own objects \(.*\/repo\/\.git\/objects\) may be borrowed/,
      ],
      [
        "a commondir",
        () => writeFileSync(join(ws, ".git", "commondir"), `${hidden.path}/.git\n`),
        /\.git\/commondir makes git use another repository's refs and objects/,
      ],
      [
        "an included config",
        () => appendFileSync(join(ws, ".git", "config"), `[include]\n\tpath = ${hidden.path}/.git/config\n`),
        /its \.git\/config sets include\.path, which makes git read another file/,
      ],
      [
        "an fsmonitor program",
        () => appendFileSync(join(ws, ".git", "config"), `[core]\n\tfsmonitor = touch ${hidden.path}/ran\n`),
        /its \.git\/config sets core\.fsmonitor, which names a program git would run/,
      ],
    ];

    beforeEach(() => {
      const dir = join(p.project.root, "..");
      execFileSync("git", ["init", "-q", "-b", "main", join(dir, "hidden")]);
      const h = join(dir, "hidden");
      writeFileSync(join(h, "secret.txt"), `${SECRET}\n`);
      sh(h, "checkout", "-q", "-b", "sprite/a");
      sh(h, "add", ".");
      sh(h, "commit", "-q", "-m", "secret");
      hidden = { path: h, sha: sh(h, "rev-parse", "HEAD") };
      ws = makeWorkspace(p.project.root, "wa", "sprite/a").path;
    });

    it.each(hostile)(
      "through %s: OPEN_PR is refused with why, and the forge gets nothing of it",
      async (_how, rewrite, message) => {
        rewrite();
        const forge = new LocalForge({
          store: t.store,
          projectId: "demo",
          root: p.project.root,
          bareRepo: ".pmagent/forge.git",
        });
        const opened = forge.openPullRequest({ title: "A", body: "", base: "main", head: "sprite/a", workspace: ws });
        await expect(opened).rejects.toMatchObject({ code: "workspace_git_refused", kind: "refused" });
        await expect(opened).rejects.toThrow(message);
        await expect(opened).rejects.toThrow(
          new RegExp(
            `^the workspace ${ws} is refused: .*\\. The supervisor reads only the workspace's own repository \\(a \\.git directory holding its own objects and refs\\); restore it with \`git init\` or a fresh clone$`,
          ),
        );
        const bare = join(p.project.root, ".pmagent/forge.git");
        expect(() => sh(bare, "cat-file", "-e", hidden.sha)).toThrow();
        expect(sh(bare, "for-each-ref", "--format=%(refname)")).toBe("refs/heads/main");
        expect(existsSync(join(hidden.path, "ran"))).toBe(false);
        expect(await forge.list()).toEqual([]);
      },
    );

    it("a shared clone of the project (alternates to its objects) and a hooks path (husky) are the workspace's own", async () => {
      const shared = join(p.project.root, "..", "shared");
      sh(join(p.project.root, ".."), "clone", "--quiet", "--shared", p.project.root, shared);
      sh(shared, "checkout", "--quiet", "-b", "sprite/s");
      commit(shared, "work");
      sh(shared, "config", "core.hooksPath", ".husky");
      mkdirSync(join(shared, ".husky"));
      writeFileSync(join(shared, ".husky", "post-checkout"), `#!/bin/sh\ntouch ${shared}/hook-ran\n`, { mode: 0o755 });
      const forge = new LocalForge({
        store: t.store,
        projectId: "demo",
        root: p.project.root,
        bareRepo: ".pmagent/forge.git",
      });
      const pr = await forge.openPullRequest({
        title: "S",
        body: "",
        base: "main",
        head: "sprite/s",
        workspace: shared,
      });
      expect(pr).toMatchObject({ number: 1, head_sha: sh(shared, "rev-parse", "HEAD") });
      expect(existsSync(join(shared, "hook-ran"))).toBe(false);
    });
  });

  it("refuses a bare repository outside the project", () => {
    expect(
      () => new LocalForge({ store: t.store, projectId: "demo", root: p.project.root, bareRepo: "../elsewhere.git" }),
    ).toThrow(/forge.bare_repo "..\/elsewhere.git" is outside/);
  });
});

describe("bare repository", () => {
  it("is created once when many callers race for it, leaving no staging copies behind", async () => {
    const p = makeProject();
    try {
      const path = join(p.project.root, ".pmagent", "race.git");
      await Promise.all(Array.from({ length: 8 }, () => ensureBareRepo(path)));
      expect(sh(path, "rev-parse", "--is-bare-repository")).toBe("true");
      expect(readdirSync(join(p.project.root, ".pmagent")).filter((n) => n.startsWith("race.git"))).toEqual([
        "race.git",
      ]);
      await ensureBareRepo(path);
      expect(existsSync(join(path, "HEAD"))).toBe(true);
    } finally {
      p.cleanup();
    }
  });
});

describe("GitHub git remote", () => {
  it("is derived from the API URL", () => {
    expect(gitHubRemoteUrl("https://api.github.com", "acme/site")).toBe("https://github.com/acme/site.git");
    expect(gitHubRemoteUrl("https://ghe.example.com/api/v3", "acme/site")).toBe(
      "https://ghe.example.com/acme/site.git",
    );
  });
});

describe("GitHub forge: OPEN_PR on an existing branch (local GitHub stand-in, through Octokit)", () => {
  const TOKEN = "forge-test-token";
  let gh: FakeGitHub;
  let p: TestProject;
  let remote: string;
  beforeEach(async () => {
    gh = await FakeGitHub.start({ tokens: { [TOKEN]: "pmagent-bot" } });
    gh.addRepo("acme/site");
    p = makeProject();
    remote = mkdtempSync(join(tmpdir(), "pmagent-remote-"));
    execFileSync("git", ["init", "-q", "--bare", remote]);
  });
  afterEach(async () => {
    await gh.close();
    p.cleanup();
    rmSync(remote, { recursive: true, force: true });
  });

  it("pushes the new commits of an open pull request's branch, and refuses a head that does not descend from GitHub's", async () => {
    const client = gitHubClient(
      { repo: "acme/site", tokenEnv: "GH_TEST_TOKEN", apiUrl: gh.url },
      { GH_TEST_TOKEN: TOKEN },
    );
    const forge = new GitHubForge({
      client: () => client,
      tokenEnv: "GH_TEST_TOKEN",
      remoteUrl: remote,
      root: p.project.root,
    });
    const a = makeWorkspace(p.project.root, "wa", "sprite/a");
    const first = await forge.openPullRequest({
      title: "A",
      body: "",
      base: "main",
      head: "sprite/a",
      workspace: a.path,
    });
    expect(first).toMatchObject({ created: true, head_sha: a.sha });
    commit(a.path, "review fixes");
    const fixed = sh(a.path, "rev-parse", "HEAD");
    const updated = await forge.openPullRequest({
      title: "A",
      body: "",
      base: "main",
      head: "sprite/a",
      workspace: a.path,
    });
    expect(updated).toMatchObject({ number: first.number, created: false, head_sha: fixed });
    expect(sh(remote, "rev-parse", "refs/heads/sprite/a")).toBe(fixed);
    expect(gh.pulls("acme/site").filter((x) => x.head.ref === "sprite/a")).toHaveLength(1);
    const rewritten = rewrite(a.path);
    const refused = forge.openPullRequest({ title: "A", body: "", base: "main", head: "sprite/a", workspace: a.path });
    await expect(refused).rejects.toMatchObject({ code: "branch_diverged", kind: "conflict" });
    await expect(refused).rejects.toThrow(
      `OPEN_PR: branch "sprite/a" in acme/site is at ${fixed.slice(0, 12)} (the head of pull request #${first.number}), and the workspace's "sprite/a" at ${rewritten.slice(0, 12)} does not descend from it`,
    );
    expect(sh(remote, "rev-parse", "refs/heads/sprite/a")).toBe(fixed);
  });
});
