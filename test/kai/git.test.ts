import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { collectGit, lastChangeBefore, parseGitLog, prNumberOf } from "../../src/kai/index.js";
import { TestRepo } from "./repo.js";

describe("git collector", () => {
  const repo = new TestRepo();
  const shas: Record<string, string> = {};

  beforeAll(() => {
    shas.old = repo.commit("2026-01-01T10:00:00Z", "old work", { "src/a.ts": "a", "STATE/current_state.md": "# State\n" });
    shas.state = repo.commit("2026-01-10T10:00:00Z", "Update STATE for cycle-1 (#41)", { "STATE/current_state.md": "# State\n\nmore\n" });
    shas.rename = repo.rename("2026-01-11T09:00:00Z", "src/a.ts", "docs/a.md", "move a to docs");
    shas.merge = repo.mergeBranch("2026-01-12T12:00:00Z", "feature", "Merge pull request #42 from team/feature\n\nAdd the doc_update workflow", [
      { at: "2026-01-12T11:00:00Z", message: "add workflow", files: { ".github/workflows/doc_update.yml": "on: push\n", "reports/r1.json": "{}" } },
    ]);
    shas.late = repo.commit("2026-01-20T08:00:00Z", "after the cutoff", { "docs/late.md": "late" });
  });
  afterAll(() => repo.cleanup());

  it("lists the commits in (since, until] newest first, with merges, PR numbers and renames", async () => {
    const ev = await collectGit(repo.dir, { since: new Date("2026-01-05T00:00:00Z"), until: new Date("2026-01-15T00:00:00Z") });
    expect(ev.commits.map((c) => c.subject)).toEqual(["Merge pull request #42 from team/feature", "add workflow", "move a to docs", "Update STATE for cycle-1 (#41)"]);
    const [merge, branch, rename, state] = ev.commits;
    expect(merge).toMatchObject({ sha: shas.merge, is_merge: true, pr_number: 42, body: "Add the doc_update workflow", committed_at: "2026-01-12T12:00:00.000Z" });
    expect(merge!.parents).toHaveLength(2);
    // A merge lists what it brought in against its first parent.
    expect(merge!.files).toEqual([
      { change: "added", path: ".github/workflows/doc_update.yml", old_path: null },
      { change: "added", path: "reports/r1.json", old_path: null },
    ]);
    expect(branch).toMatchObject({ is_merge: false, pr_number: null });
    expect(rename!.files).toEqual([{ change: "renamed", path: "docs/a.md", old_path: "src/a.ts" }]);
    expect(state).toMatchObject({ sha: shas.state, pr_number: 41, author: "Kai Test", files: [{ change: "modified", path: "STATE/current_state.md", old_path: null }] });
  });

  it("excludes a commit exactly at the window's start and includes one exactly at its end", async () => {
    const ev = await collectGit(repo.dir, { since: new Date("2026-01-10T10:00:00Z"), until: new Date("2026-01-11T09:00:00Z") });
    expect(ev.commits.map((c) => c.sha)).toEqual([shas.rename]);
  });

  it("finds the last commit up to a past time that touched a path", async () => {
    expect(await lastChangeBefore(repo.dir, new Date("2026-01-11T12:00:00Z"), "STATE/current_state.md")).toEqual({ sha: shas.state, at: "2026-01-10T10:00:00.000Z" });
    expect(await lastChangeBefore(repo.dir, new Date("2026-01-05T00:00:00Z"), "STATE/current_state.md")).toEqual({ sha: shas.old, at: "2026-01-01T10:00:00.000Z" });
    expect(await lastChangeBefore(repo.dir, new Date("2025-12-31T00:00:00Z"), "STATE/current_state.md")).toBeNull();
  });

  it("gives an empty history for a repository without commits", async () => {
    const empty = new TestRepo();
    try {
      const ev = await collectGit(empty.dir, { since: new Date(0), until: new Date() });
      expect(ev.commits).toEqual([]);
    } finally {
      empty.cleanup();
    }
  });

  it("refuses a directory that is not a git repository, naming --repo", async () => {
    const dir = mkdtempSync(join(tmpdir(), "pmagent-kai-nogit-"));
    try {
      await expect(collectGit(dir, { since: new Date(0), until: new Date() })).rejects.toThrow(`${dir} is not a git repository (pass --repo DIR with the project's repository)`);
      await expect(collectGit(join(dir, "missing"), { since: new Date(0), until: new Date() })).rejects.toThrow(`repository directory ${join(dir, "missing")} does not exist (pass --repo DIR)`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("reads PR numbers from merge and squash subjects only", () => {
    expect(prNumberOf("Merge pull request #849 from x/y")).toBe(849);
    expect(prNumberOf("docs: apply proposal (#847)")).toBe(847);
    expect(prNumberOf("fix #12 in parser")).toBeNull();
    expect(prNumberOf("Merge branch 'main'")).toBeNull();
  });

  it("parses file names with spaces, tabs and unicode", () => {
    const log = "\x1eabc\x1f\x1f2026-01-01T00:00:00+09:00\x1fA\x1fs\x1f\x1f\0\nA\0docs/with space.md\0R087\0STATE/旧.md\0STATE/新\tname.md\0";
    expect(parseGitLog(log)).toEqual([
      {
        sha: "abc",
        parents: [],
        committed_at: "2025-12-31T15:00:00.000Z",
        author: "A",
        subject: "s",
        body: "",
        is_merge: false,
        pr_number: null,
        files: [
          { change: "added", path: "docs/with space.md", old_path: null },
          { change: "renamed", path: "STATE/新\tname.md", old_path: "STATE/旧.md" },
        ],
      },
    ]);
  });
});
