import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runCli } from "../helpers/proc.js";
import { availableStoreKinds, type TestStore } from "../helpers/stores.js";
import { startServer, type TestServer } from "./helpers.js";

const kinds = await availableStoreKinds();

describe.each(kinds)(
  "pull requests of the local forge finished on $name: show, diff, merge, close (API and CLI)",
  (kind) => {
    let ts: TestStore;
    let s: TestServer;
    const git = (...args: string[]) =>
      execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.invalid", ...args], {
        cwd: s.tp.root,
        encoding: "utf8",
      }).trim();
    const bare = () => join(s.tp.root, ".pmagent", "forge.git");
    const cli = (args: string[], env: Record<string, string> = {}) =>
      runCli(args, { cwd: s.tp.root, env: { ...process.env, ...ts.env, ...env } });

    /** A pull request from `branch` adding `file`. */
    async function pull(branch: string, file: string, text = `# ${file}\n`): Promise<number> {
      git("checkout", "-q", "-b", branch);
      writeFileSync(join(s.tp.root, file), text);
      git("add", file);
      git("commit", "-q", "-m", `add ${file}`);
      git("checkout", "-q", "main");
      return (
        await s.server.ctx.forge.openPullRequest({
          title: `Add ${file}`,
          body: "why",
          base: "main",
          head: branch,
          workspace: s.tp.root,
        })
      ).number;
    }

    beforeEach(async () => {
      ts = await kind.open();
      s = await startServer(ts);
    });
    afterEach(async () => {
      await s.close();
      await ts.cleanup();
    });

    it("merges over the API as the authenticated human: the base branch of the forge holds the change; errors say why", async () => {
      const n = await pull("sprite/guide", "GUIDE.md");
      expect((await s.call("GET", `/v1/prs/${n}`)).body).toMatchObject({
        number: n,
        state: "open",
        head: "sprite/guide",
      });
      const refused = await s.call("POST", `/v1/prs/${n}/merge`, { as: "Builder" });
      expect(refused.status).toBe(403);
      expect(refused.body.error).toMatchObject({
        code: "permission_refused",
        message: `Builder may not merge pull request #${n}: only a human (Human) may`,
      });
      const merged = await s.call("POST", `/v1/prs/${n}/merge`);
      expect(merged.status).toBe(200);
      expect(merged.body.pull).toMatchObject({ number: n, state: "merged" });
      expect(execFileSync("git", ["rev-parse", "refs/heads/main"], { cwd: bare(), encoding: "utf8" }).trim()).toBe(
        merged.body.sha,
      );
      expect(execFileSync("git", ["show", "main:GUIDE.md"], { cwd: bare(), encoding: "utf8" })).toBe("# GUIDE.md\n");
      const again = await s.call("POST", `/v1/prs/${n}/merge`);
      expect([again.status, again.body.error.code, again.body.error.message]).toEqual([
        409,
        "pull_request_not_open",
        `pull request #${n} is merged: only an open one can be merged`,
      ]);
      const closeMerged = await s.call("POST", `/v1/prs/${n}/close`);
      expect([closeMerged.status, closeMerged.body.error.message]).toEqual([
        409,
        `pull request #${n} is merged: only an open one can be closed`,
      ]);
      const missing = await s.call("POST", "/v1/prs/99/merge");
      expect([missing.status, missing.body.error.code]).toEqual([404, "pull_request_not_found"]);
      expect((await s.call("GET", "/v1/prs/99")).status).toBe(404);
      expect((await s.call("POST", "/v1/prs/abc/close")).body.error.message).toContain(
        "$.number: expected a pull request number",
      );
      // The merged pull request's diff stays the one it merged.
      expect((await s.call("GET", `/v1/prs/${n}/diff`)).body.diff).toContain("+++ b/GUIDE.md");
      const doc = (await s.call("GET", "/openapi.json")).body as {
        paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
      };
      expect(Object.keys(doc.paths["/v1/prs/{number}/merge"]!.post!.responses)).toEqual(
        expect.arrayContaining(["200", "403", "404", "409"]),
      );
      expect(Object.keys(doc.paths["/v1/prs/{number}/close"]!.post!.responses)).toEqual(
        expect.arrayContaining(["200", "403", "404", "409"]),
      );
    });

    it("closes over the API without merging; a merge conflict merges nothing and names the file", async () => {
      const a = await pull("sprite/a", "SAME.md");
      const close = await s.call("POST", `/v1/prs/${a}/close`);
      expect([close.status, close.body.pull.state]).toEqual([200, "closed"]);
      expect(execFileSync("git", ["ls-tree", "--name-only", "main"], { cwd: bare(), encoding: "utf8" })).not.toContain(
        "SAME.md",
      );
      const b = await pull("sprite/b", "B.md", "one\n");
      const c = await pull("sprite/c", "B.md", "two\n");
      expect((await s.call("POST", `/v1/prs/${b}/merge`)).status).toBe(200);
      const before = execFileSync("git", ["rev-parse", "main"], { cwd: bare(), encoding: "utf8" });
      const conflict = await s.call("POST", `/v1/prs/${c}/merge`);
      expect([conflict.status, conflict.body.error.code, conflict.body.error.message]).toEqual([
        409,
        "merge_conflict",
        `pull request #${c} (sprite/c) conflicts with main in B.md: nothing was merged`,
      ]);
      expect(execFileSync("git", ["rev-parse", "main"], { cwd: bare(), encoding: "utf8" })).toBe(before);
      expect((await s.call("GET", `/v1/prs/${c}`)).body.state).toBe("open");
    });

    it("CLI: prs show, diff, merge and close, with the actor from --as or PMAGENT_ACTOR", async () => {
      const n = await pull("sprite/cli", "CLI.md");
      const show = await cli(["prs", "show", String(n)]);
      expect(show.stdout).toContain(`#${n}  open  sprite/cli → main`);
      expect(show.stdout).toMatch(/CLI\.md \| 1 \+/);
      expect((await cli(["prs", "diff", `#${n}`])).stdout).toContain("+++ b/CLI.md\n@@ -0,0 +1 @@\n+# CLI.md");
      const noActor = await cli(["prs", "comment", String(n), "--body", "fine"]);
      expect([noActor.code, noActor.stderr]).toEqual([
        2,
        expect.stringContaining("say who comments: pass --as NAME or set PMAGENT_ACTOR"),
      ]);
      const badLine = await cli(["prs", "comment", String(n), "--body", "fine", "--line", "0", "--as", "Reviewer"]);
      expect([badLine.code, badLine.stderr]).toEqual([
        2,
        expect.stringContaining("--line must be between 1 and ∞, got 0"),
      ]);
      const commented = await cli([
        "prs",
        "comment",
        String(n),
        "--body",
        "heading level is right",
        "--path",
        "CLI.md",
        "--line",
        "1",
        "--as",
        "Reviewer",
      ]);
      expect(commented.stdout).toMatch(new RegExp(`^commented on #${n} \\(prc_[0-9a-f]{12}\\)`));
      expect((await cli(["prs", "show", String(n)])).stdout).toMatch(
        /comments \(1\):\n {2}\d{4}-\S+ Reviewer on CLI\.md:1: heading level is right/,
      );
      const nobody = await cli(["prs", "merge", String(n)]);
      expect([nobody.code, nobody.stderr]).toEqual([2, expect.stringContaining("say who decides: pass --as NAME")]);
      const builder = await cli(["prs", "merge", String(n), "--as", "Builder"]);
      expect(builder.code).toBe(1);
      expect(builder.stderr).toContain(`Builder may not merge pull request #${n}: only a human (Human) may`);
      const merged = await cli(["prs", "merge", String(n)], { PMAGENT_ACTOR: "Human" });
      expect(merged.code, merged.stderr).toBe(0);
      expect(merged.stdout).toMatch(new RegExp(`^merged #${n} into main \\(now [0-9a-f]{12}\\)`));
      const bad = await cli(["prs", "show", "x1"]);
      expect([bad.code, bad.stderr]).toEqual([
        2,
        expect.stringContaining('expected a pull request number (1 or more), got "x1"'),
      ]);
      const missing = await cli(["prs", "close", "42", "--as", "Human"]);
      expect([missing.code, missing.stderr]).toEqual([
        1,
        expect.stringContaining("pull request #42 does not exist in the local forge"),
      ]);
      const m = await pull("sprite/close", "CLOSE.md");
      const closed = await cli(["prs", "close", String(m), "--as", "Human", "--format", "json"]);
      expect(JSON.parse(closed.stdout)).toMatchObject({ pull: { number: m, state: "closed" } });
      expect((await cli(["prs", "--state", "closed"])).stdout).toContain(`#${m}  closed  sprite/close → main`);
    });
  },
);
