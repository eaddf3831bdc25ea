/**
 * A sprite in the sandbox rewrites its workspace's .git to name a repository the sandbox hides
 * from it (another run's workspace under .pmagent/, holding a secret branch), then asks for
 * OPEN_PR of that branch. The supervisor's git runs outside the sandbox: it must read only the
 * workspace's own repository, so the OPEN_PR is refused, saying why, and nothing of the hidden
 * repository reaches the forge. And the git that reads a workspace runs in a sprite's view of the
 * machine, so a .git changed after the check still reaches nothing hidden.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { projectSupervisor, workspaceSandbox } from "../../src/app/index.js";
import { LocalForge } from "../../src/forge/index.js";
import { openSqliteTestStore } from "../helpers/stores.js";
import { ACTION_SPRITE, DIST, PMAGENT, PR_INPUTS } from "../lattice/helpers.js";
import { useSupervisorFixture } from "../helpers/supervisor-fixture.js";

const bwrapHere = existsSync("/usr/bin/bwrap");
const SECRET = "hidden-workspace-secret-0c41e7";
const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.invalid", ...args], {
    cwd,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  }).trim();

describe.runIf(bwrapHere)("a sandboxed sprite whose .git names a hidden repository", () => {
  const fx = useSupervisorFixture(openSqliteTestStore, { config: { sandbox: "required" }, git: true });
  let other: string;
  let secretSha: string;
  beforeEach(async () => {
    // Another run's workspace: hidden from this sprite (.pmagent is), with a secret on its branch.
    other = join(fx.tp.root, ".pmagent", "workspaces", "run_other");
    mkdirSync(other, { recursive: true });
    git(other, "init", "-q", "-b", "sprite/secret");
    writeFileSync(join(other, "secret.txt"), `${SECRET}\n`);
    git(other, "add", ".");
    git(other, "commit", "-q", "-m", "secret");
    secretSha = git(other, "rev-parse", "HEAD");
  });

  it.each([
    [
      "a gitdir: file",
      (o: string) => `rm -rf .git && printf 'gitdir: %s\\n' '${o}/.git' > .git`,
      /its \.git is a file \("gitdir: .*\/run_other\/\.git"\) naming another repository/,
    ],
    [
      "a symlink",
      (o: string) => `rm -rf .git && ln -s '${o}/.git' .git`,
      /its \.git is a symlink \(to .*\/run_other\/\.git\)/,
    ],
  ])(
    "through %s: OPEN_PR is refused with why and the forge gets nothing of it",
    { timeout: 60_000 },
    async (_how, rewrite, message) => {
      const sup = projectSupervisor({
        store: fx.ts.store,
        project: fx.tp.project,
        env: { PATH: process.env.PATH, HOME: process.env.HOME },
        pmagentCommand: PMAGENT,
        pollMs: 20,
        consoleWrite: () => undefined,
      });
      const plan = join(fx.tp.root, "hostile.plan.json");
      writeFileSync(
        plan,
        JSON.stringify({
          sh: rewrite(other),
          action: "OPEN_PR",
          parameters: { title: "Steal", base: "main", head: "sprite/secret" },
          expected_inputs: PR_INPUTS,
        }),
      );
      const finished = await sup.startRun({ role: "Builder", command: [process.execPath, ACTION_SPRITE, DIST, plan] });
      // The sprite was resumed with the refusal, and ended failed with it.
      expect(finished.state).toBe("failed");
      expect(finished.reason).toMatch(message);
      const got = JSON.parse(readFileSync(join(finished.workspace, ".lattice", "got.json"), "utf8")) as {
        context: { action: { error: { code: string; message: string } } };
      };
      const error = got.context.action.error;
      expect(error.code).toBe("workspace_git_refused");
      expect(error.message).toMatch(message);
      expect(error.message).toContain(`the workspace ${finished.workspace} is refused: `);
      const [event] = await sup.runs.events(finished.id, { type: "ACTION_REQUEST" });
      expect(event!.dispatch).toMatchObject({ status: "failed", attempts: 1 });
      // Nothing of the hidden repository is in the forge: no branch, no object, no pull request.
      const forge = join(fx.tp.root, ".pmagent", "forge.git");
      if (existsSync(forge)) {
        expect(git(forge, "for-each-ref", "--format=%(refname)")).not.toContain("secret");
        expect(() => git(forge, "cat-file", "-e", secretSha)).toThrow();
      }
      expect(
        await new LocalForge({
          store: fx.ts.store,
          projectId: "demo",
          root: fx.tp.root,
          bareRepo: ".pmagent/forge.git",
        }).list(),
      ).toEqual([]);
    },
  );

  it("the git that reads a workspace runs in a sprite's view: a hidden repository is not there", () => {
    const ws = join(fx.tp.root, "ws");
    git(fx.tp.root, "clone", "-q", "--shared", fx.tp.root, ws);
    const read = ["git", `--git-dir=${other}/.git`, "rev-parse", "refs/heads/sprite/secret"];
    // Outside a sandbox the supervisor's git would read it ...
    expect(git(fx.tp.root, ...read.slice(1))).toBe(secretSha);
    // ... wrapped as the forge wraps it, it finds no repository there (the workspace's own is readable).
    const wrap = workspaceSandbox(fx.tp.project, fx.ts.store, { PATH: process.env.PATH, HOME: process.env.HOME });
    const hidden = wrap(read, ws);
    expect(hidden[0]).toBe("/usr/bin/bwrap");
    expect(() =>
      execFileSync(hidden[0]!, hidden.slice(1), { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }),
    ).toThrow(/not a git repository/);
    const own = wrap(["git", `--git-dir=${ws}/.git`, "rev-parse", "HEAD"], ws);
    expect(execFileSync(own[0]!, own.slice(1), { encoding: "utf8" }).trim()).toBe(git(fx.tp.root, "rev-parse", "HEAD"));
  });
});
