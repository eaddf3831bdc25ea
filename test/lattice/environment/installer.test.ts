/**
 * What an installer sees when a human accepts an environment proposal: a sprite proposed the
 * package, so the installer runs as the sprites' sandbox shows this machine (the project's
 * .pmagent, the secrets file, the store and the supervisor's HOME hidden, only its own directory
 * writable) and never with the supervisor's tokens, sandboxed or not.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { projectEnvironmentChanges } from "../../../src/app/index.js";
import { openSqliteTestStore, type TestStore } from "../../helpers/stores.js";
import { makeProject, type TestProject } from "../fixtures.js";

const bwrapHere = existsSync("/usr/bin/bwrap");
const TOKENS = {
  GITHUB_TOKEN: "ghp_installerSupervisorToken000000000000001",
  OPENAI_API_KEY: "sk-installerSupervisorKey00000000000000001",
  DEPLOY_DB_PASSWORD: "installer-db-password-31",
};
const FILE_SECRET = "installer-secrets-file-value-8812";
const HOME_SECRET = "installer-home-credential-4410";

describe("installers of accepted environment proposals", () => {
  let ts: TestStore;
  let p: TestProject;
  let home: string;
  let dir: string;
  beforeEach(async () => {
    ts = await openSqliteTestStore();
    p = makeProject({ secrets: { file: "secrets.json" } });
    writeFileSync(join(p.project.root, "secrets.json"), JSON.stringify({ DEPLOY_KEY: FILE_SECRET }));
    mkdirSync(join(p.project.root, ".pmagent", "runs", "run-other"), { recursive: true });
    writeFileSync(join(p.project.root, ".pmagent", "runs", "run-other", "note"), "another run's file\n");
    // Not under /tmp (the sandbox's /tmp is its own anyway): hidden because it is the supervisor's HOME.
    home = mkdtempSync("/var/tmp/pmagent-installer-home-");
    writeFileSync(join(home, ".git-credentials"), `https://x:${HOME_SECRET}@example.invalid\n`);
    dir = join(p.project.root, ".pmagent", "tools", "Aya", "envp_test");
    mkdirSync(dir, { recursive: true });
  });
  afterEach(async () => {
    await ts.cleanup();
    p.cleanup();
    rmSync(home, { recursive: true, force: true });
  });

  const probe = (root: string) =>
    [
      "env",
      "echo made > made.txt",
      `echo escaped > ${root}/escaped.txt`,
      `echo escaped > ${root}/.pmagent/escaped.txt`,
      `cat ${root}/secrets.json`,
      `cat ${root}/.pmagent/runs/run-other/note`,
      `cat "$HOME/.git-credentials" ${home}/.git-credentials`,
      "true",
    ].join("; ");

  it.runIf(bwrapHere)(
    "run in bubblewrap: no token, only their own directory writable, what sprites cannot see hidden",
    async () => {
      const changes = projectEnvironmentChanges(p.project, ts.store, undefined, {
        PATH: process.env.PATH,
        HOME: home,
        ...TOKENS,
      });
      const installer = changes.installer();
      expect(installer.isolation.bwrap).toMatch(/bwrap$/);
      const r = await installer.run(["sh", "-c", probe(p.project.root)], { cwd: dir });
      expect(r.code).toBe(0);
      for (const secret of [...Object.values(TOKENS), FILE_SECRET, HOME_SECRET, "another run's file"])
        expect(r.output).not.toContain(secret);
      expect(r.output).toMatch(/^HOME=\/tmp\/pmagent-install-\w+$/m);
      expect(existsSync(join(dir, "made.txt"))).toBe(true);
      expect(existsSync(join(p.project.root, "escaped.txt"))).toBe(false);
      expect(existsSync(join(p.project.root, ".pmagent", "escaped.txt"))).toBe(false);
    },
  );

  it("run unsandboxed where the config says so, still with no token", async () => {
    const project = { ...p.project, config: { ...p.project.config, sandbox: "off" as const } };
    const installer = projectEnvironmentChanges(project, ts.store, undefined, {
      PATH: process.env.PATH,
      HOME: home,
      ...TOKENS,
    }).installer();
    expect(installer.isolation.bwrap).toBeNull();
    expect(installer.describe()).toBe(
      `NOT sandboxed (the config's "sandbox" is "off") but with a scrubbed environment (no token, a fresh HOME), no package scripts`,
    );
    const r = await installer.run(["sh", "-c", probe(p.project.root)], { cwd: dir });
    for (const secret of Object.values(TOKENS)) expect(r.output).not.toContain(secret);
    expect(r.output).not.toContain(`HOME=${home}`);
    // What the sandbox is there for: unsandboxed, the same commands read the files it hides.
    expect(r.output).toContain(FILE_SECRET);
    expect(r.output).toContain(HOME_SECRET);
  });
});
