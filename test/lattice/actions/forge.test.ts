import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { LocalForge, ensureBareRepo, gitHubRemoteUrl } from "../../../src/lattice/index.js";
import { availableStoreKinds, type TestStore } from "../../helpers/stores.js";
import { makeProject, makeWorkspace, sh, type TestProject } from "../fixtures.js";

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
    const forge = new LocalForge({ store: t.store, projectId: "demo", root: p.project.root, bareRepo: ".pmagent/forge.git" });
    const a = makeWorkspace(p.project.root, "wa", "sprite/a");
    const b = makeWorkspace(p.project.root, "wb", "sprite/b");
    const [first, second] = await Promise.all([
      forge.openPullRequest({ title: "A", body: "", base: "main", head: "sprite/a", workspace: a.path }),
      forge.openPullRequest({ title: "B", body: "", base: "main", head: "sprite/b", workspace: b.path }),
    ]);
    expect([first.number, second.number].sort()).toEqual([1, 2]);
    sh(a.path, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "--quiet", "--allow-empty", "-m", "more");
    const again = await forge.openPullRequest({ title: "A again", body: "", base: "main", head: "sprite/a", workspace: a.path });
    expect(again).toMatchObject({ number: first.number, created: false, head_sha: sh(a.path, "rev-parse", "HEAD") });
    const other = new LocalForge({ store: t.store, projectId: "other", root: p.project.root, bareRepo: ".pmagent/other.git" });
    expect((await other.openPullRequest({ title: "O", body: "", base: "main", head: "sprite/a", workspace: a.path })).number).toBe(1);
    expect((await forge.list({ state: "open" })).map((x) => [x.number, x.title])).toEqual([[1, first.number === 1 ? "A" : "B"], [2, first.number === 1 ? "B" : "A"]]);
  });

  it("refuses a bare repository outside the project", () => {
    expect(() => new LocalForge({ store: t.store, projectId: "demo", root: p.project.root, bareRepo: "../elsewhere.git" })).toThrow(/forge.bare_repo "..\/elsewhere.git" is outside/);
  });
});

describe("bare repository", () => {
  it("is created once when many callers race for it, leaving no staging copies behind", async () => {
    const p = makeProject();
    try {
      const path = join(p.project.root, ".pmagent", "race.git");
      await Promise.all(Array.from({ length: 8 }, () => ensureBareRepo(path)));
      expect(sh(path, "rev-parse", "--is-bare-repository")).toBe("true");
      expect(readdirSync(join(p.project.root, ".pmagent")).filter((n) => n.startsWith("race.git"))).toEqual(["race.git"]);
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
    expect(gitHubRemoteUrl("https://ghe.example.com/api/v3", "acme/site")).toBe("https://ghe.example.com/acme/site.git");
  });
});
