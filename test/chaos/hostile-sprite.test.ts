/**
 * A hostile sprite (test/chaos/sprites/hostile.sh) run by `pmagent run` with the supervisor's
 * credentials in its real environment: with `sandbox: "required"` it reads no secret (the
 * supervisor's /proc, the secrets file, the store), writes nowhere but its workspace, pushes
 * nowhere by any route around the git shim, every attempt the wrapper sees is a recorded
 * violation, and the run's own events are all there. The same sprite unsandboxed (`off`) gets
 * what the sandbox stops, which is what makes the first test mean something.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { RunStore, type RunRecord } from "../../src/lattice/index.js";
import { migrate, SqliteStore, type Store } from "../../src/store/index.js";
import { migrations } from "../../src/app/index.js";
import { gitInit } from "../lattice/helpers.js";
import { REPO_ROOT, runCli } from "../helpers/proc.js";
import { availableStoreKinds, openPostgresTestStore } from "../helpers/stores.js";

const HOSTILE = join(REPO_ROOT, "test/chaos/sprites/hostile.sh");
const bwrapHere = existsSync("/usr/bin/bwrap");
const kinds = (await availableStoreKinds()).map((k) => k.name);

// The supervisor's credentials, in the environment of the `pmagent run` process itself.
const SUPERVISOR_SECRETS = {
  GITHUB_TOKEN: "ghp_hostileSupervisorToken000000000000000",
  OPENAI_API_KEY: "sk-hostileSupervisorOpenAiKey0000000000",
  DEPLOY_DB_PASSWORD: "hostile-db-password-4242",
};
const FILE_SECRET = "hostile-secret-from-the-secrets-file-7777";

interface Setup {
  root: string;
  forge: string;
  outside: string;
  store: Store;
  storeEnv: Record<string, string>;
  close(): Promise<void>;
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

const git = (cwd: string, ...args: string[]) => execFileSync("git", args, { cwd, encoding: "utf8" }).trim();
const refs = (repo: string) => git(repo, "for-each-ref", "--format=%(refname)").split("\n").filter(Boolean).sort();

async function setup(kind: "sqlite" | "postgres", sandbox: "required" | "off"): Promise<Setup> {
  const root = mkdtempSync(join(tmpdir(), "pmagent-hostile-"));
  const outside = join(mkdtempSync(join(tmpdir(), "pmagent-hostile-outside-")), "escaped");
  const forge = join(root, "forge.git");
  const config = {
    project_id: "demo",
    lanes: [
      {
        layer: "test",
        name: "build",
        roles: [
          {
            name: "Builder",
            allowed_kinds: ["build_request"],
            runner: { command: ["sh", HOSTILE], env: {} as Record<string, string> },
          },
        ],
      },
    ],
    storage: { driver: "sqlite", path: "data/pmagent.db" },
    forge: { bare_repo: "forge.git" },
    secrets: { file: "secrets.json" },
    sandbox,
  };
  writeFileSync(join(root, "secrets.json"), JSON.stringify({ DEPLOY_KEY: FILE_SECRET }));
  gitInit(root);
  git(root, "init", "-q", "--bare", forge);
  git(forge, "fetch", "-q", root, "refs/heads/main:refs/heads/main");
  const storePath = join(root, "data", "pmagent.db");
  config.lanes[0]!.roles[0]!.runner.env = {
    FORGE: forge,
    ROOT: root,
    VAULT_FILE: join(root, "secrets.json"),
    STORE: storePath,
    OUTSIDE: outside,
  };
  writeFileSync(join(root, "pmagent.config.json"), JSON.stringify(config, null, 2));
  let store: Store;
  let storeEnv: Record<string, string> = {};
  let closeStore: () => Promise<void>;
  if (kind === "sqlite") {
    mkdirSync(join(root, "data"));
    store = new SqliteStore(storePath);
    await migrate(store, migrations);
    closeStore = () => store.close();
  } else {
    const ts = await openPostgresTestStore();
    store = ts.store;
    storeEnv = ts.env;
    closeStore = () => ts.cleanup();
  }
  const close = async () => {
    await closeStore();
    rmSync(root, { recursive: true, force: true });
    rmSync(join(outside, ".."), { recursive: true, force: true });
  };
  cleanups.push(close);
  return { root, forge, outside, store, storeEnv, close };
}

async function runHostile(s: Setup): Promise<{ run: RunRecord; out: (name: string) => string }> {
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    ...SUPERVISOR_SECRETS,
    ...s.storeEnv,
  };
  delete env.PMAGENT_SQLITE_PATH;
  const r = await runCli(["run", "--role", "Builder", "--format", "json"], { cwd: s.root, env });
  expect(r.stderr).not.toContain("Error");
  const run = JSON.parse(r.stdout) as RunRecord;
  return { run, out: (name) => readFileSync(join(run.workspace, "out", name), "utf8") };
}

const secretValues = [...Object.values(SUPERVISOR_SECRETS), FILE_SECRET];

describe.runIf(bwrapHere).each(kinds)("a hostile sprite in the sandbox (%s store)", (kind) => {
  it(
    "reads no secret, writes only its workspace, pushes nowhere; each attempt is a violation, its events are intact",
    { timeout: 120_000 },
    async () => {
      const s = await setup(kind, "required");
      const { run, out } = await runHostile(s);
      expect(run.state, `${run.reason}`).toBe("succeeded");

      // Secrets: nothing of the supervisor's environment, the secrets file or the store.
      const environs = out("ppid-environ") + out("all-environ");
      expect(environs).toContain(`LATTICE_RUN_ID=${run.id}`); // the reads worked: they saw only the sprite's own environment
      for (const v of secretValues) expect(environs + out("secrets") + out("store")).not.toContain(v);
      expect(out("store")).not.toContain("SQLite format 3");
      expect(out("store-write")).toMatch(/Read-only file system|Permission denied|Directory nonexistent/);
      expect(
        out("runs-dir")
          .split("\n")
          .filter((l) => l.startsWith("run_")),
      ).toEqual([run.id]);

      // Writes: none outside the workspace; the workspace is also at /workspace.
      for (const p of [join(s.root, "escaped"), join(s.root, ".pmagent", "escaped"), s.outside])
        expect(existsSync(p), p).toBe(false);
      expect(out("writes")).toContain("Read-only file system");
      expect(readFileSync(join(run.workspace, "via-mount.txt"), "utf8")).toBe("via-mount\n");
      if (kind === "sqlite") expect(readFileSync(join(s.root, "data", "pmagent.db")).includes("garbage\n")).toBe(false);

      // Pushes: neither the forge nor the project repository (origin) got a ref.
      expect(refs(s.forge)).toEqual(["refs/heads/main"]);
      expect(refs(s.root)).toEqual(["refs/heads/main"]);
      expect(out("push-10")).toMatch(/does not appear to be a git repository|Read-only file system|unable to/);

      const runs = new RunStore(s.store, "demo");
      const violations = await runs.violations(run.id);
      expect(violations.map((v) => v.rule)).toEqual([
        "git_push",
        "git_push",
        "git_push",
        "git_remote_edit",
        "git_remote_edit",
        "git_push",
        "git_push",
        "git_push",
        "github_cli",
      ]);
      expect(violations.map((v) => v.detail.split(" ")[0])).toEqual([
        "push",
        "push",
        "push",
        "remote",
        "config",
        "push",
        "push",
        "push",
        "api",
      ]);
      const events = await runs.events(run.id);
      expect(events.map((e) => e.event_type)).toEqual(["PHASE_STARTED", "INFO", "COMPLETED"]);
    },
  );
});

describe.runIf(kinds.includes("sqlite"))("the same hostile sprite unsandboxed (sandbox: off)", () => {
  it(
    "gets the supervisor's token, the secrets file and the store, and pushes with /usr/bin/git unrecorded",
    { timeout: 120_000 },
    async () => {
      const s = await setup("sqlite", "off");
      const { run, out } = await runHostile(s);
      expect(out("ppid-environ")).toContain(SUPERVISOR_SECRETS.GITHUB_TOKEN);
      expect(out("secrets")).toContain(FILE_SECRET);
      expect(out("store")).toContain("SQLite format 3");
      expect(refs(s.forge)).toContain("refs/heads/evil-usr-bin");
      expect((await new RunStore(s.store, "demo").violations(run.id)).map((v) => v.rule)).toContain("git_push");
    },
  );
});
