import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  collectGit,
  collectStateDoc,
  cycleMentions,
  lastChangeBefore,
  lastVersionBefore,
  newSideOfDiff,
  parseGitLog,
  prNumberOf,
  repoCycles,
  stateDocPath,
  type GitCommit,
} from "../../src/kai/index.js";
import { TestRepo } from "./repo.js";

const SHA_A = "a".repeat(40);
const SHA_B = "0123456789abcdef0123456789abcdef01234567";
/** One commit's fields as `git log -z --format=LOG_FORMAT` writes them, with the format's terminator. */
const header = (sha: string, subject: string) =>
  `${sha}\0\0${Date.parse("2026-01-01T00:00:00+09:00") / 1000}\0A\0${subject}\0\0\0`;

describe("git collector", () => {
  const repo = new TestRepo();
  const shas: Record<string, string> = {};

  beforeAll(() => {
    shas.old = repo.commit("2026-01-01T10:00:00Z", "old work", {
      "src/a.ts": "a",
      "STATE/current_state.md": "# State\n",
    });
    shas.state = repo.commit("2026-01-10T10:00:00Z", "Update STATE for cycle-1 (#41)", {
      "STATE/current_state.md": "# State\n\nmore\n",
    });
    shas.rename = repo.rename("2026-01-11T09:00:00Z", "src/a.ts", "docs/a.md", "move a to docs");
    shas.merge = repo.mergeBranch(
      "2026-01-12T12:00:00Z",
      "feature",
      "Merge pull request #42 from team/feature\n\nAdd the doc_update workflow",
      [
        {
          at: "2026-01-12T11:00:00Z",
          message: "add workflow",
          files: { ".github/workflows/doc_update.yml": "on: push\n", "reports/r1.json": "{}" },
        },
      ],
    );
    shas.late = repo.commit("2026-01-20T08:00:00Z", "after the cutoff", { "docs/late.md": "late" });
  });
  afterAll(() => repo.cleanup());

  it("lists the commits in (since, until] newest first, with merges, PR numbers and renames", async () => {
    const ev = await collectGit(repo.dir, {
      since: new Date("2026-01-05T00:00:00Z"),
      until: new Date("2026-01-15T00:00:00Z"),
    });
    expect(ev.commits.map((c) => c.subject)).toEqual([
      "Merge pull request #42 from team/feature",
      "add workflow",
      "move a to docs",
      "Update STATE for cycle-1 (#41)",
    ]);
    const [merge, branch, rename, state] = ev.commits;
    expect(merge).toMatchObject({
      sha: shas.merge,
      is_merge: true,
      pr_number: 42,
      body: "Add the doc_update workflow",
      committed_at: "2026-01-12T12:00:00.000Z",
    });
    expect(merge!.parents).toHaveLength(2);
    // A merge lists what it brought in against its first parent.
    expect(merge!.files).toEqual([
      { change: "added", path: ".github/workflows/doc_update.yml", old_path: null },
      { change: "added", path: "reports/r1.json", old_path: null },
    ]);
    expect(branch).toMatchObject({ is_merge: false, pr_number: null });
    expect(rename!.files).toEqual([{ change: "renamed", path: "docs/a.md", old_path: "src/a.ts" }]);
    expect(state).toMatchObject({
      sha: shas.state,
      pr_number: 41,
      author: "Kai Test",
      files: [{ change: "modified", path: "STATE/current_state.md", old_path: null }],
    });
  });

  it("counts each change's lines added plus deleted (a merge: what it brought in)", async () => {
    const ev = await collectGit(repo.dir, {
      since: new Date("2026-01-05T00:00:00Z"),
      until: new Date("2026-01-15T00:00:00Z"),
    });
    const expected = ev.commits.map((c) =>
      repo
        .git("diff", "--numstat", "-M", c.parents[0]!, c.sha)
        .split("\n")
        .filter(Boolean)
        .reduce(
          (n, l) =>
            n +
            l
              .split("\t")
              .slice(0, 2)
              .reduce((a, x) => a + (x === "-" ? 0 : Number(x)), 0),
          0,
        ),
    );
    expect(ev.commits.map((c) => c.lines_changed)).toEqual(expected);
    expect(ev.commits.some((c) => (c.lines_changed ?? 0) > 0)).toBe(true);
  });

  it("excludes a commit exactly at the window's start and includes one exactly at its end", async () => {
    const ev = await collectGit(repo.dir, {
      since: new Date("2026-01-10T10:00:00Z"),
      until: new Date("2026-01-11T09:00:00Z"),
    });
    expect(ev.commits.map((c) => c.sha)).toEqual([shas.rename]);
  });

  it("finds the last commit up to a past time that touched a path", async () => {
    expect(await lastChangeBefore(repo.dir, new Date("2026-01-11T12:00:00Z"), "STATE/current_state.md")).toEqual({
      sha: shas.state,
      at: "2026-01-10T10:00:00.000Z",
    });
    expect(await lastChangeBefore(repo.dir, new Date("2026-01-05T00:00:00Z"), "STATE/current_state.md")).toEqual({
      sha: shas.old,
      at: "2026-01-01T10:00:00.000Z",
    });
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
      await expect(collectGit(dir, { since: new Date(0), until: new Date() })).rejects.toThrow(
        `${dir} is not a git repository (pass --repo DIR with the project's repository)`,
      );
      await expect(collectGit(join(dir, "missing"), { since: new Date(0), until: new Date() })).rejects.toThrow(
        `repository directory ${join(dir, "missing")} does not exist (pass --repo DIR)`,
      );
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

  it("parses `--raw --numstat` output: each file once, its lines summed (binary as 0), paths that look like counts", () => {
    const raw = (status: string) => `:100644 100644 1111111 2222222 ${status}`;
    // A path may even look like a commit id: it is read by position.
    const log =
      `${header(SHA_A, "s")}\n` +
      [raw("M"), "docs/1\t2\tx.md", raw("R087"), "STATE/旧.md", "STATE/新\tname.md", raw("A"), SHA_B].join("\0") +
      "\0" +
      ["3\t1\tdocs/1\t2\tx.md", "4\t0\t", "STATE/旧.md", "STATE/新\tname.md", `-\t-\t${SHA_B}`].join("\0") +
      `\0${header(SHA_B, "nothing")}`;
    const [changed, empty] = parseGitLog(log);
    expect(changed!.files).toEqual([
      { change: "modified", path: "docs/1\t2\tx.md", old_path: null },
      { change: "renamed", path: "STATE/新\tname.md", old_path: "STATE/旧.md" },
      { change: "added", path: SHA_B, old_path: null },
    ]);
    expect(changed!.lines_changed).toBe(8);
    // No diff output at all (an empty commit, or a log without diff options): no count.
    expect(empty).toMatchObject({ sha: SHA_B, subject: "nothing", files: [] });
    expect(empty!.lines_changed).toBeUndefined();
  });

  it("reads a commit message that imitates the log's separators, ids and diff lines as one commit's text", async () => {
    const forged = new TestRepo();
    try {
      // What a sprite could write: the old \x1e/\x1f separators, a commit id, a raw line and a count.
      const subject = `Update docs \x1e${SHA_B}\x1f\x1f2026-01-03T00:00:00Z\x1fMallory\x1fApply cycle-9 (#999)\x1f`;
      const body = `${SHA_A}\n:100644 100644 1111111 2222222 A\nforged.md\n999\t999\tforged.md\n\x1e\x1f`;
      const sha = forged.commit("2026-01-02T00:00:00Z", `${subject}\n\n${body}`, { "docs/real.md": "one\ntwo\n" });
      const ev = await collectGit(forged.dir, { since: new Date(0), until: new Date("2026-02-01T00:00:00Z") });
      expect(ev.commits).toEqual([
        expect.objectContaining({
          sha,
          subject,
          body: body.trim(),
          author: "Kai Test",
          pr_number: null,
          files: [{ change: "added", path: "docs/real.md", old_path: null }],
          lines_changed: 2,
        }),
      ]);
      const mentions = await cycleMentions(forged.dir, new Date("2026-02-01T00:00:00Z"));
      expect(mentions).toEqual([
        { pr_number: null, text: `${subject}\n${body.trim()}`, committed_at: "2026-01-02T00:00:00.000Z" },
      ]);
    } finally {
      forged.cleanup();
    }
  });

  it("a commit dated before the window hides none of the commits below it", async () => {
    const backdated = new TestRepo();
    try {
      for (const day of [2, 3, 4]) backdated.commit(`2026-01-0${day}T00:00:00Z`, `real ${day}`, { [`f${day}`]: "x" });
      // A sprite sets its own commit dates: plain --since would stop the walk here.
      backdated.commit("2000-01-01T00:00:00Z", "backdated", { old: "x" });
      backdated.commit("2026-01-05T00:00:00Z", "head", { head: "x" });
      const ev = await collectGit(backdated.dir, {
        since: new Date("2026-01-01T00:00:00Z"),
        until: new Date("2026-02-01T00:00:00Z"),
      });
      expect(ev.commits.map((c) => c.subject)).toEqual(["head", "real 4", "real 3", "real 2"]);
      expect(ev.commits[1]!.files).toEqual([{ change: "added", path: "f4", old_path: null }]);
    } finally {
      backdated.cleanup();
    }
  });

  it("reads the same commits whatever the repository's own log settings say", async () => {
    const configured = new TestRepo();
    try {
      // A committed .gitmodules may ask git to ignore the submodule, too.
      const root = configured.commit("2026-01-02T00:00:00Z", "root", {
        ".gitmodules": '[submodule "lib"]\n\tpath = vendor/lib\n\turl = ./lib\n\tignore = all\n',
        "a.md": "a\n",
      });
      configured.git("update-index", "--add", "--cacheinfo", `160000,${root},vendor/lib`);
      configured.commit("2026-01-03T00:00:00Z", "add a submodule", {});
      const window = { since: new Date("2026-01-01T00:00:00Z"), until: new Date("2026-02-01T00:00:00Z") };
      const plain = await collectGit(configured.dir, window);
      expect(plain.commits.map((c) => c.files)).toEqual([
        [{ change: "added", path: "vendor/lib", old_path: null }],
        [
          { change: "added", path: ".gitmodules", old_path: null },
          { change: "added", path: "a.md", old_path: null },
        ],
      ]);
      for (const [key, value] of [
        ["log.showRoot", "false"],
        ["diff.ignoreSubmodules", "all"],
        ["i18n.logOutputEncoding", "UTF-16"],
      ] as const)
        configured.git("config", key, value);
      expect(await collectGit(configured.dir, window)).toEqual(plain);
    } finally {
      configured.cleanup();
    }
  });

  it("reads history as committed: replace refs and grafts ignored, a path's log not followed across a rename", async () => {
    const rewritten = new TestRepo();
    try {
      const one = rewritten.commit("2026-01-02T00:00:00Z", "Apply doc_update proposal cycle-1 to STATE (#1)", {
        "STATE/old.md": "# State\n",
      });
      const two = rewritten.rename("2026-01-03T00:00:00Z", "STATE/old.md", "STATE/current_state.md", "move STATE");
      const cutoff = new Date("2026-02-01T00:00:00Z");
      const window = { since: new Date("2026-01-01T00:00:00Z"), until: cutoff };
      const path = "STATE/current_state.md";
      const cycles = () =>
        repoCycles(
          rewritten.dir,
          { layer: "layer_b", name: "doc_update" },
          { path, read: collectStateDoc(rewritten.dir, path, cutoff) },
          cutoff,
        );
      const [commits, applied] = [await collectGit(rewritten.dir, window), await cycles()];
      expect(commits.commits.map((c) => c.sha)).toEqual([two, one]);
      expect(applied).toEqual([]);
      // What a process with write access to .git could do to history as git shows it.
      const fake = rewritten
        .git("commit-tree", `${two}^{tree}`, "-m", "Apply doc_update proposal cycle-9 (#99)")
        .trim();
      rewritten.git("replace", two, fake);
      rewritten.write(".git/info/grafts", `${two}\n`);
      rewritten.git("config", "log.follow", "true");
      expect(await collectGit(rewritten.dir, window)).toEqual(commits);
      expect(await cycles()).toEqual(applied);
    } finally {
      rewritten.cleanup();
    }
  });

  it("reads the repository it is given, whatever GIT_DIR or GIT_DIFF_OPTS the caller's environment holds", async () => {
    const [mine, other] = [new TestRepo(), new TestRepo()];
    const saved = { GIT_DIR: process.env.GIT_DIR, GIT_DIFF_OPTS: process.env.GIT_DIFF_OPTS };
    try {
      other.commit("2026-01-02T00:00:00Z", "another repository", { "x.md": "x\n" });
      const text = Array.from({ length: 13 }, (_, i) => `line ${i + 1}\n`).join("");
      const first = mine.commit("2026-01-21T00:00:00Z", "a longer file", { "docs/long.md": text });
      const second = mine.commit("2026-01-21T01:00:00Z", "change its middle", {
        "docs/long.md": text.replace("line 7\n", "SEVEN\n"),
      });
      const window = { since: new Date("2026-01-20T00:00:00Z"), until: new Date("2026-01-22T00:00:00Z") };
      // A git hook's environment, and diff options for people's terminals: not git's for Kai.
      process.env.GIT_DIR = join(other.dir, ".git");
      process.env.GIT_DIFF_OPTS = "-u3";
      expect((await collectGit(mine.dir, window)).commits.map((c) => c.sha)).toEqual([second, first]);
      expect((await lastVersionBefore(mine.dir, window.until, "docs/long.md"))?.text).toBe(
        text.replace("line 7\n", "SEVEN\n"),
      );
    } finally {
      for (const [k, v] of Object.entries(saved))
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      mine.cleanup();
      other.cleanup();
    }
  });

  it("dates a commit by the time git filtered it by when git prints none or one outside the window, and refuses one git does not date", async () => {
    const encoded = new TestRepo();
    try {
      const plain = encoded.commit("2026-01-02T00:00:00Z", "plain", { "STATE/s.md": "a\n" });
      // An encoding header git re-encodes its own ASCII headers out of (EBCDIC), which a sprite may
      // write: git prints none of the commit's text, and Kai reads nothing from its message (no apply,
      // no pull request a person reading the history cannot see). Its time is the one git filters by.
      encoded.git("config", "i18n.commitEncoding", "CP037");
      const typo = encoded.commit("2026-01-03T00:00:00Z", "Fix typo (#7)", { "STATE/s.md": "b\n" });
      const applied = encoded.commit("2026-01-04T00:00:00+09:00", "Apply doc_update proposal for cycle-7 (#12)", {
        "STATE/s.md": "c\n",
      });
      const window = { since: new Date("2026-01-01T00:00:00Z"), until: new Date("2026-02-01T00:00:00Z") };
      const fields = ({ sha, parents, committed_at, author, subject, pr_number, files }: GitCommit) => ({
        sha,
        parents,
        committed_at,
        author,
        subject,
        pr_number,
        files,
      });
      const changed = [{ change: "modified", path: "STATE/s.md", old_path: null }];
      const undecoded = { author: "", subject: "", pr_number: null, files: changed };
      expect((await collectGit(encoded.dir, window)).commits.map(fields)).toEqual([
        { sha: applied, parents: [typo], committed_at: "2026-01-03T15:00:00.000Z", ...undecoded },
        { sha: typo, parents: [plain], committed_at: "2026-01-03T00:00:00.000Z", ...undecoded },
        expect.objectContaining({ sha: plain, subject: "plain", committed_at: "2026-01-02T00:00:00.000Z" }),
      ]);
      // A window starting after the commit: git leaves it out by the same time.
      expect((await collectGit(encoded.dir, { ...window, since: new Date("2026-01-03T16:00:00Z") })).commits).toEqual(
        [],
      );
      expect(await lastChangeBefore(encoded.dir, window.until, "STATE/s.md")).toEqual({
        sha: applied,
        at: "2026-01-03T15:00:00.000Z",
      });
      expect(await lastVersionBefore(encoded.dir, new Date("2026-01-03T12:00:00Z"), "STATE/s.md")).toEqual({
        sha: typo,
        at: "2026-01-03T00:00:00.000Z",
        text: "b\n",
      });
      // A sprite's own object with two committer lines: git filters by the one after the author
      // line, `%ct` prints the last. The time Kai gives it is the one git put it in the window by.
      encoded.git("config", "--unset", "i18n.commitEncoding");
      encoded.write("STATE/s.md", "d\n");
      encoded.git("add", "STATE/s.md");
      const object = join(encoded.dir, ".git", "crafted");
      writeFileSync(
        object,
        `tree ${encoded.git("write-tree").trim()}\nparent ${applied}\nauthor S <s@b> 1767657600 +0000\n` +
          `committer S <s@b> 1767657600 +0000\ncommitter S <s@b> 1767744000 +0000\n\nApply cycle-9 (#99)\n`,
      );
      const crafted = encoded.git("hash-object", "-t", "commit", "-w", "--literally", object).trim();
      encoded.git("update-ref", "refs/heads/main", crafted);
      const filtered = new Date(Number(encoded.git("rev-list", "-1", "--timestamp", crafted).split(" ")[0]) * 1000);
      expect(filtered.toISOString()).not.toBe(encoded.git("log", "-1", "--format=%cI", crafted).trim());
      const between = new Date("2026-01-06T12:00:00Z");
      for (const [commit, cutoff] of [
        [await lastChangeBefore(encoded.dir, between, "STATE/s.md"), between],
        [await lastVersionBefore(encoded.dir, between, "STATE/s.md"), between],
        ...(await collectGit(encoded.dir, { since: new Date("2026-01-05T00:00:00Z"), until: between })).commits.map(
          (c) => [{ sha: c.sha, at: c.committed_at }, between] as const,
        ),
      ] as const) {
        expect(commit?.sha).toBe(crafted);
        expect(commit?.at).toBe(filtered.toISOString());
        expect(Date.parse(commit!.at)).toBeLessThanOrEqual(cutoff.getTime());
      }
      const path = "STATE/s.md";
      const cycles = repoCycles(
        encoded.dir,
        { layer: "layer_b", name: "doc_update" },
        { path, read: collectStateDoc(encoded.dir, path, window.until) },
        window.until,
        [],
      );
      expect(await cycles).toEqual([]);
    } finally {
      encoded.cleanup();
    }
    // Output naming a commit with no fields, and no time from git for it: refused, with its code.
    expect(() => parseGitLog(`${SHA_A}\0\0\0\0\0\0`)).toThrow(
      expect.objectContaining({
        code: "kai_git_unreadable",
        message: `git log gave output Kai cannot read: the commit time of ${SHA_A} (git printed none and does not date the commit)`,
      }),
    );
  });

  it("reads HEAD as the revision whatever files the repository holds, and passes git's failures on without its advice", async () => {
    const named = new TestRepo();
    try {
      const sha = named.commit("2026-01-02T00:00:00Z", "Apply doc_update proposal cycle-2 (#4)", {
        "STATE/current_state.md": "# s\n",
      });
      // A file named HEAD (a sprite may commit one): git would take "HEAD" as ambiguous without `--`.
      named.write("HEAD", "x\n");
      const cutoff = new Date("2026-02-01T00:00:00Z");
      expect((await collectGit(named.dir, { since: new Date(0), until: cutoff })).commits.map((c) => c.sha)).toEqual([
        sha,
      ]);
      expect((await cycleMentions(named.dir, cutoff)).map((m) => m.pr_number)).toEqual([4]);
      expect(await stateDocPath(named.dir, "p", { state_file: "STATE/current_state.md" }, cutoff)).toStrictEqual({
        path: "STATE/current_state.md",
        found_by: "the default state_file (STATE/p/current_state.md does not exist at the cutoff)",
      });
      // A branch pointing at an object that is not there: git's own words, not its advice about grafts.
      named.write(".git/refs/heads/main", `${SHA_B}\n`);
      await expect(collectGit(named.dir, { since: new Date(0), until: cutoff })).rejects.toMatchObject({
        code: "kai_git_failed",
        message: expect.stringMatching(new RegExp(`^git log failed in ${named.dir}: fatal: bad object HEAD$`)),
      });
    } finally {
      named.cleanup();
    }
  });

  it("names the git version it needs when git does not know --since-as-filter", async () => {
    // git before 2.38 answers an option it does not know so: a stand-in for it on PATH.
    const bin = mkdtempSync(join(tmpdir(), "pmagent-old-git-"));
    const real = execFileSync("sh", ["-c", "command -v git"], { encoding: "utf8" }).trim();
    writeFileSync(
      join(bin, "git"),
      `#!/bin/sh\nfor a in "$@"; do case "$a" in --since-as-filter*) echo "fatal: unrecognized argument: $a" >&2; exit 128;; esac; done\nexec ${real} "$@"\n`,
      { mode: 0o755 },
    );
    const path = process.env.PATH;
    process.env.PATH = `${bin}:${path}`;
    try {
      await expect(collectGit(repo.dir, { since: new Date(0), until: new Date() })).rejects.toMatchObject({
        code: "kai_git_too_old",
        message: `git log in ${repo.dir} needs git 2.38 or newer: this git does not know --since-as-filter (git --version tells which it is)`,
      });
    } finally {
      process.env.PATH = path;
      rmSync(bin, { recursive: true, force: true });
    }
  });

  it("refuses log output it cannot read instead of guessing", () => {
    expect(() => parseGitLog(`not-an-id\0\0x\0A\0s\0\0\0`)).toThrow(
      expect.objectContaining({
        code: "kai_git_unreadable",
        message: 'git log gave output Kai cannot read: a commit id "not-an-id"',
      }),
    );
    expect(() => parseGitLog(`${header(SHA_A, "s")}\n?? odd\0x\0`)).toThrow(
      'git log gave output Kai cannot read: a diff line "?? odd"',
    );
    expect(() => parseGitLog(`${SHA_A}\0\0`)).toThrow("git log gave output Kai cannot read: a commit cut short");
  });

  it("parses file names with a leading colon, tabs and unicode", () => {
    const log = `${header(SHA_A, "s")}\nA\0:colon.md\0R087\0STATE/旧.md\0STATE/新\tname.md\0`;
    expect(parseGitLog(log)).toEqual([
      {
        sha: SHA_A,
        parents: [],
        committed_at: "2025-12-31T15:00:00.000Z",
        author: "A",
        subject: "s",
        body: "",
        is_merge: false,
        pr_number: null,
        files: [
          { change: "added", path: ":colon.md", old_path: null },
          { change: "renamed", path: "STATE/新\tname.md", old_path: "STATE/旧.md" },
        ],
      },
    ]);
  });
});

describe("a file's last version up to a time, in one git log", () => {
  const repo = new TestRepo();
  const path = "STATE/current_state.md";
  const versions: Array<{ at: string; sha: string }> = [];
  const commit = (at: string, files: Record<string, string | null>, setup?: () => void) => {
    setup?.();
    versions.push({ at, sha: repo.commit(at, `change at ${at}`, files) });
  };
  beforeAll(() => {
    // Blank lines, CRLF, non-ASCII, lines that look like diff syntax, no newline at the end.
    commit("2026-01-01T00:00:00Z", {
      [path]:
        "# State\n\n## Layer B\r\n\n- 状態: 完了\n@@ -1 +1 @@\n\\ not a marker\n+plus\n-minus\n \nlast without newline",
    });
    commit("2026-01-02T00:00:00Z", { [path]: "# State\n\n## Layer B\n\nnow with a newline\n" });
    commit("2026-01-03T00:00:00Z", { [path]: "one line, no newline" });
    commit("2026-01-04T00:00:00Z", { [path]: "" });
    commit("2026-01-05T00:00:00Z", { [path]: "# Back\n\n\n" });
    // A mode change alone: no hunk, so the text is read at the commit.
    commit("2026-01-06T00:00:00Z", {}, () => repo.git("update-index", "--chmod=+x", path));
    commit("2026-01-07T00:00:00Z", { [path]: "bin\0ary\n" });
    // A textconv driver and suppressed blank lines in the repository's config change nothing.
    commit("2026-01-08T00:00:00Z", { ".gitattributes": "*.md diff=shout\n", [path]: "# Quiet\n\nwords\n" }, () => {
      repo.git("config", "diff.shout.textconv", "tr a-z A-Z");
      repo.git("config", "diff.suppressBlankEmpty", "true");
    });
    commit("2026-01-09T00:00:00Z", { [path]: "# Quiet\n\nwords\n\nmore words\n" });
    commit("2026-01-10T00:00:00Z", { [path]: null });
  });
  afterAll(() => repo.cleanup());

  it("gives the text as committed, the commit and its time, for every kind of change", async () => {
    for (const [i, v] of versions.entries()) {
      const last = await lastVersionBefore(repo.dir, new Date(Date.parse(v.at) + 1000), path);
      const text = i === versions.length - 1 ? null : repo.git("show", `${v.sha}:${path}`);
      expect({ i, ...last }).toEqual({ i, sha: v.sha, at: new Date(v.at).toISOString(), text });
    }
    expect((await lastVersionBefore(repo.dir, new Date("2026-01-01T12:00:00Z"), path))?.text).toContain(
      "last without newline",
    );
    expect((await lastVersionBefore(repo.dir, new Date("2026-01-02T12:00:00Z"), path))?.text).toBe(
      "# State\n\n## Layer B\n\nnow with a newline\n",
    );
  });

  it("gives null before the first commit touching the file, for a path never committed, and without commits", async () => {
    expect(await lastVersionBefore(repo.dir, new Date("2025-12-31T00:00:00Z"), path)).toBeNull();
    expect(await lastVersionBefore(repo.dir, new Date("2026-02-01T00:00:00Z"), "STATE/none.md")).toBeNull();
    const empty = new TestRepo();
    try {
      expect(await lastVersionBefore(empty.dir, new Date(), path)).toBeNull();
    } finally {
      empty.cleanup();
    }
  });

  it("reads the new side of a whole-file diff, and gives up on what it cannot read", () => {
    const head = "diff --git a/s.md b/s.md\nindex 1..2 100644\n--- a/s.md\n+++ b/s.md\n";
    expect(newSideOfDiff(`${head}@@ -1,2 +1,4 @@\n a\n-b\n+c\n\n+d\n\\ No newline at end of file\n`)).toBe("a\nc\n\nd");
    expect(newSideOfDiff(`${head}@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+a\n`)).toBe("a\n");
    // A hunk that starts further in (fewer context lines than asked, e.g. GIT_DIFF_OPTS) is a part of the file.
    expect(newSideOfDiff(`${head}@@ -5,3 +5,3 @@\n a\n-b\n+c\n d\n`)).toBeUndefined();
    expect(newSideOfDiff(`${head}@@ -0,0 +1 @@\n+a\n`)).toBe("a\n");
    expect(
      newSideOfDiff(
        "diff --git a/s.md b/s.md\ndeleted file mode 100644\n--- a/s.md\n+++ /dev/null\n@@ -1 +0,0 @@\n-a\n",
      ),
    ).toBeNull();
    // No hunk, binary content, a second hunk, a count that does not match: not readable here.
    expect(newSideOfDiff("")).toBeUndefined();
    expect(newSideOfDiff(`diff --git a/s.md b/s.md\nold mode 100644\nnew mode 100755\n`)).toBeUndefined();
    expect(
      newSideOfDiff(`diff --git a/s.md b/s.md\nindex 1..2 100644\nBinary files a/s.md and b/s.md differ\n`),
    ).toBeUndefined();
    expect(newSideOfDiff(`${head}@@ -1 +1 @@\n-a\n+b\n@@ -9 +9 @@\n-x\n+y\n`)).toBeUndefined();
    expect(newSideOfDiff(`${head}@@ -1,2 +1,3 @@\n a\n+b\n`)).toBeUndefined();
  });
});
