/**
 * Issue 31's checkpoint findings, end to end. A sandboxed sprite writes its own checkpoint
 * directory and the supervisor restores outside the sandbox: a forged manifest or blob must not
 * reach beyond the workspace. And a resume whose restore fails (no attacker needed) must fail
 * that run only: `pmagent serve` goes on answering and obeys SIGTERM, whatever the sprite left in
 * its checkpoint directory (a FIFO or a foreign pid as its lock).
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseConfig, type Project } from "../../src/config/index.js";
import { CheckpointVault, Supervisor, type RunRecord } from "../../src/lattice/index.js";
import { migrate, SqliteStore } from "../../src/store/index.js";
import { migrations } from "../../src/app/index.js";
import { REPO_ROOT, runCli, serveCli, type Served } from "../helpers/proc.js";
import { gitInit, PMAGENT, scenarioSprite } from "../lattice/helpers.js";

const FORGE_SPRITE = join(REPO_ROOT, "test/chaos/sprites/forge-checkpoint.mjs");
const bwrapHere = existsSync("/usr/bin/bwrap");
const SUPERVISOR_TOKEN = "ghp_supervisorTokenNeverInAWorkspace000000";
const HUMAN_TOKEN = "human-token-0123456789abcdef";

interface Setup {
  root: string;
  project: Project;
  store: SqliteStore;
  /** A sprite command that plays `scenario`. */
  sprite(name: string, scenario: unknown): string[];
}

async function setup(sandbox: "required" | "auto"): Promise<Setup> {
  const root = mkdtempSync(join(tmpdir(), "pmagent-chk-attack-"));
  const config = {
    project_id: "demo",
    humans: ["Human"],
    lanes: [{ layer: "test", name: "build", roles: [{ name: "Builder", allowed_kinds: ["build_request"] }] }],
    storage: { driver: "sqlite", path: "data/pmagent.db" },
    sandbox,
  };
  const text = JSON.stringify(config, null, 2);
  writeFileSync(join(root, "pmagent.config.json"), text);
  gitInit(root);
  mkdirSync(join(root, "data"));
  const store = new SqliteStore(join(root, "data", "pmagent.db"));
  await migrate(store, migrations);
  return {
    root,
    store,
    project: { root, configPath: join(root, "pmagent.config.json"), config: parseConfig(text, "pmagent.config.json") },
    sprite: (name, scenario) => scenarioSprite(root, name, scenario),
  };
}

/** Every file under `dir` as text, for "the secret is nowhere" checks. */
function everything(dir: string): string {
  let out = "";
  const visit = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) visit(p);
      else if (e.isFile()) out += readFileSync(p, "latin1");
    }
  };
  visit(dir);
  return out;
}

describe.runIf(bwrapHere)("a sandboxed sprite that forges its checkpoint", () => {
  let s: Setup;
  let sup: Supervisor;
  beforeAll(async () => {
    s = await setup("required");
    sup = new Supervisor({
      store: s.store,
      project: s.project,
      pmagentCommand: PMAGENT,
      pollMs: 20,
      env: { ...process.env, GITHUB_TOKEN: SUPERVISOR_TOKEN },
    });
  });
  afterAll(async () => {
    await s.store.close();
    rmSync(s.root, { recursive: true, force: true });
  });

  const forgeThenWait = (mode: string) =>
    sup.startRun({
      role: "Builder",
      command: s.sprite(mode, {
        steps: [
          { sh: `${process.execPath} ${FORGE_SPRITE} ${mode}` },
          { waiting: { reason: "PR_REVIEW", checkpoint_id: "chk_forged", expected_inputs: {} } },
        ],
        on_resume: [{ emit: "COMPLETED", payload: { status: "success" } }],
      }),
    });

  it("a path listed as a directory and then as a link to the project: the run fails at WAITING, the project's config is untouched", async () => {
    const before = readFileSync(s.project.configPath, "utf8");
    const run = await forgeThenWait("link");
    expect(run.state).toBe("failed");
    expect(run.reason).toContain("WAITING named checkpoint chk_forged, which cannot be kept for the resume: manifest");
    expect(run.reason).toContain('"escape" is listed twice');
    expect(readFileSync(s.project.configPath, "utf8")).toBe(before);
    expect(new CheckpointVault(join(s.root, ".pmagent", "checkpoint-store")).has(run.id, "chk_forged")).toBe(false);
  });

  it("a blob that is a link to /proc/self/environ: refused, and the supervisor's token is nowhere in the project", async () => {
    const run = await forgeThenWait("environ");
    expect(run.state).toBe("failed");
    expect(run.reason).toMatch(
      /which cannot be kept for the resume: blob [0-9a-f]{12}… cannot be read: the blob .* is a symbolic link, not a regular file/,
    );
    expect(everything(s.root)).not.toContain(SUPERVISOR_TOKEN);
  });
});

describe("a resume whose restore fails, under pmagent serve", () => {
  let s: Setup;
  let server: Served;
  const call = async (method: string, path: string, body?: unknown) => {
    // A bound on every request: a wedged server fails the test instead of hanging it.
    const res = await fetch(`${server.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${HUMAN_TOKEN}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(15_000),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  /** The run's record once it is no longer starting or running (the server settles it). */
  const settled = async (id: string): Promise<RunRecord> => {
    for (;;) {
      const { body } = await call("GET", `/v1/runs/${id}`);
      if (!["starting", "running"].includes(body.state as string)) return body as unknown as RunRecord;
      await new Promise((r) => setTimeout(r, 50));
    }
  };

  beforeAll(async () => {
    s = await setup("auto");
    await s.store.close();
    server = await serveCli({ cwd: s.root, env: { ...process.env, PMAGENT_TOKENS: `${HUMAN_TOKEN}=Human` } });
  });
  afterAll(() => {
    if (server.child.exitCode === null) server.child.kill("SIGKILL");
    rmSync(s.root, { recursive: true, force: true });
  });

  /** A run of `pmagent run` that waits on a checkpoint of a workspace holding work.txt. */
  async function waitingRun(name: string): Promise<RunRecord> {
    const command = s.sprite(name, {
      steps: [{ file: { path: "work.txt", text: "before" } }, { waiting: { reason: "review", expected_inputs: {} } }],
      on_resume: [{ emit: "COMPLETED", payload: { status: "success" } }],
    });
    const r = await runCli(["run", "--role", "Builder", "--format", "json", "--", ...command], { cwd: s.root });
    const run = JSON.parse(r.stdout) as RunRecord;
    expect(run.state, r.stderr).toBe("waiting");
    return run;
  }

  it("a blob gone from the checkpoint store: that run fails saying which, and the server goes on answering", async () => {
    const run = await waitingRun("missing");
    const vault = new CheckpointVault(join(s.root, ".pmagent", "checkpoint-store"));
    const entry = vault.manifest(run.id, run.waiting!.checkpoint_id).entries.find((e) => e.path === "work.txt") as {
      sha256: string;
    };
    rmSync(join(vault.dir, "blobs", entry.sha256.slice(0, 2), entry.sha256.slice(2)));
    writeFileSync(join(run.workspace, "work.txt"), "after");
    expect((await call("POST", `/v1/runs/${run.id}/resume`, { inputs: {} })).status).toBe(202);
    const failed = await settled(run.id);
    expect(failed.state).toBe("failed");
    expect(failed.reason).toContain(
      `resume failed: checkpoint ${run.waiting!.checkpoint_id} cannot be restored: the content of work.txt (blob ${entry.sha256.slice(0, 12)}…) is missing in the checkpoint store`,
    );
    expect((await call("GET", "/v1/whoami")).body).toMatchObject({ actor: "Human" });
  });

  it("a FIFO as the sprite's checkpoint lock, and a lock naming pid 1: the resume neither blocks nor waits, the run succeeds", async () => {
    const fifo = await waitingRun("fifo");
    execFileSync("mkfifo", [join(fifo.checkpoint_dir, "lock")]);
    const pid1 = await waitingRun("pid1");
    writeFileSync(join(pid1.checkpoint_dir, "lock"), "1");
    for (const run of [fifo, pid1]) {
      writeFileSync(join(run.workspace, "work.txt"), "after");
      expect((await call("POST", `/v1/runs/${run.id}/resume`, { inputs: {} })).status).toBe(202);
      expect((await call("GET", "/v1/whoami")).body).toMatchObject({ actor: "Human" });
      const done = await settled(run.id);
      expect(done.state, done.reason ?? "").toBe("succeeded");
      expect(readFileSync(join(run.workspace, "work.txt"), "utf8")).toBe("before");
    }
  });

  it("then exits on SIGTERM", async () => {
    expect(await server.stop()).toBe(0);
  });
});
