import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { ProposalStore, type RunRecord } from "../../../src/lattice/index.js";
import { LocalForge } from "../../../src/forge/index.js";
import { projectSupervisor } from "../../../src/app/index.js";
import { FakeGitHub } from "../../helpers/fake-github.js";
import { openSqliteTestStore, type TestStore } from "../../helpers/stores.js";
import {
  ACTION_SPRITE,
  DIST,
  gitInit,
  PMAGENT,
  PR_INPUTS,
  SPEC_EVENTS,
  testProject,
  type TestProject,
} from "../helpers.js";

const TOKEN = "e2e-github-token";
const SECRET = "e2e-deploy-secret-4b1d9e7c55";

describe("actions end to end through the supervisor", () => {
  let ts: TestStore;
  let tp: TestProject;
  let gh: FakeGitHub;
  let logFile: string;
  let consoleLines: string[];

  beforeAll(async () => {
    gh = await FakeGitHub.start({ tokens: { [TOKEN]: "pmagent-bot" } });
  });
  afterAll(async () => gh.close());
  beforeEach(async () => {
    ts = await openSqliteTestStore();
    consoleLines = [];
  });
  afterEach(async () => {
    await ts.cleanup();
    tp?.cleanup();
  });

  /** A project whose Builder may fetch DEPLOY_TOKEN, with git, and the supervisor's logs in a file. */
  const setup = (extra: Record<string, unknown> = {}, env: Record<string, string> = {}) => {
    tp = testProject(ts, {
      lanes: [
        {
          layer: "test",
          name: "build",
          roles: [
            { name: "Builder", allowed_kinds: ["build_request"], credentials: ["DEPLOY_TOKEN"] },
            { name: "Reviewer", allowed_kinds: ["review_request"] },
          ],
        },
      ],
      ...extra,
    });
    gitInit(tp.root);
    logFile = join(tp.root, "..", `${tp.root.split("/").pop()}-supervisor.log`);
    const logger = pino({ level: "info" }, pino.destination({ dest: logFile, sync: true }));
    const sup = projectSupervisor({
      store: ts.store,
      project: tp.project,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
      logger,
      pmagentCommand: PMAGENT,
      pollMs: 20,
      consoleWrite: (l) => void consoleLines.push(l),
    });
    const run = (role: string, plan: Record<string, unknown>): Promise<RunRecord> => {
      const file = join(tp.root, `${role}-${Math.random().toString(36).slice(2)}.plan.json`);
      writeFileSync(file, JSON.stringify(plan));
      return sup.startRun({ role, command: [process.execPath, ACTION_SPRITE, DIST, file] });
    };
    return { sup, run };
  };

  const got = (run: RunRecord) =>
    JSON.parse(readFileSync(join(run.workspace, ".lattice", "got.json"), "utf8")) as Record<string, unknown>;

  it("a blocking OPEN_PR through the local forge: pushed by the supervisor, recorded, and the sprite resumed with the pull request", async () => {
    const { sup, run } = setup();
    const finished = await run("Builder", {
      commit: { branch: "sprite/fix-cache", file: "fix.txt", text: "fixed\n" },
      action: "OPEN_PR",
      parameters: { title: "Fix cache invalidation", body: "Resolves #17", base: "main", head: "sprite/fix-cache" },
      expected_inputs: PR_INPUTS,
    });
    expect(finished.state).toBe("succeeded");
    expect(got(finished)).toMatchObject({
      number: 1,
      url: "pmagent-forge://demo/pulls/1",
      head: "sprite/fix-cache",
      base: "main",
    });
    const prs = await new LocalForge({
      store: ts.store,
      projectId: "demo",
      root: tp.root,
      bareRepo: ".pmagent/forge.git",
    }).list();
    const bare = join(tp.root, ".pmagent/forge.git");
    const pushed = execFileSync("git", ["rev-parse", "refs/heads/sprite/fix-cache"], {
      cwd: bare,
      encoding: "utf8",
    }).trim();
    expect(prs).toMatchObject([
      {
        number: 1,
        head: "sprite/fix-cache",
        base: "main",
        title: "Fix cache invalidation",
        head_sha: pushed,
        state: "open",
      },
    ]);
    const events = await sup.runs.events(finished.id, { type: "ACTION_REQUEST" });
    expect(events[0]!.dispatch).toMatchObject({ status: "succeeded", attempts: 1 });
  });

  it("a blocking OPEN_PR through a local GitHub-compatible server with a bare remote", async () => {
    gh.addRepo("acme/site");
    const remote = mkdtempSync(join(tmpdir(), "pmagent-remote-"));
    execFileSync("git", ["init", "-q", "--bare", remote]);
    try {
      const { run } = setup(
        { github: { repo: "acme/site", api_url: gh.url, token_env: "E2E_GH_TOKEN" } },
        { E2E_GH_TOKEN: TOKEN, PMAGENT_GITHUB_GIT_URL: remote },
      );
      const finished = await run("Builder", {
        commit: { branch: "sprite/docs", file: "docs.txt", text: "docs\n" },
        action: "OPEN_PR",
        parameters: { title: "Docs", body: "b", base: "main", head: "sprite/docs" },
        expected_inputs: PR_INPUTS,
      });
      expect(finished.state).toBe("succeeded");
      const pull = gh.pulls("acme/site").find((p) => p.head.ref === "sprite/docs")!;
      expect(got(finished)).toMatchObject({
        number: pull.number,
        url: pull.html_url,
        head: "sprite/docs",
        base: "main",
      });
      const sha = execFileSync("git", ["rev-parse", "refs/heads/sprite/docs"], {
        cwd: remote,
        encoding: "utf8",
      }).trim();
      expect(sha).toMatch(/^[0-9a-f]{40}$/);
      // The token reached GitHub, never the sprite: its workspace, logs and events do not hold it.
      expect(readFileSync(logFile, "utf8")).not.toContain(TOKEN);
      expect(
        JSON.stringify(await new ProposalStore({ store: ts.store, projectId: "demo", humans: ["Human"] }).list()),
      ).not.toContain(TOKEN);
    } finally {
      rmSync(remote, { recursive: true, force: true });
    }
  });

  it("FETCH_CREDENTIAL end to end: the secret reaches the sprite through resume.json only", async () => {
    const { sup, run } = setup({ secrets: { file: "secrets.json" } });
    writeFileSync(join(tp.root, "secrets.json"), JSON.stringify({ DEPLOY_TOKEN: SECRET }));
    const finished = await run("Builder", {
      action: "FETCH_CREDENTIAL",
      parameters: { name: "DEPLOY_TOKEN" },
      expected_inputs: { name: "string", value: "string" },
    });
    expect(finished.state).toBe("succeeded");
    expect(got(finished)).toMatchObject({
      name: "DEPLOY_TOKEN",
      value: createHash("sha256").update(SECRET).digest("hex"),
    });
    const resumeFile = join(finished.workspace, ".lattice", "resume.json");
    // The resume file carried the credential: it is removed once the sprite has read it.
    expect(existsSync(resumeFile)).toBe(false);
    const action = (await sup.runs.events(finished.id, { type: "ACTION_REQUEST" }))[0]!;
    expect(action.dispatch).toMatchObject({ status: "succeeded" });
    // Search the database file, its WAL, the supervisor's log and every run log for the secret.
    await ts.store.close();
    const files = [
      ts.file!,
      `${ts.file!}-wal`,
      logFile,
      ...readdirSync(finished.run_dir)
        .filter((f) => f.endsWith(".log"))
        .map((f) => join(finished.run_dir, f)),
    ];
    for (const f of files) {
      let data: Buffer;
      try {
        data = readFileSync(f);
      } catch {
        continue;
      }
      expect(data.includes(SECRET), f).toBe(false);
    }
    expect(readFileSync(logFile, "utf8")).toContain("FETCH_CREDENTIAL");
    ts = await openSqliteTestStore(); // afterEach closes a store
  });

  it("FETCH_CREDENTIAL for a role not allowed: refused, and the sprite resumed with the error", async () => {
    const { run } = setup({}, { DEPLOY_TOKEN: SECRET });
    const finished = await run("Reviewer", {
      action: "FETCH_CREDENTIAL",
      parameters: { name: "DEPLOY_TOKEN" },
      expected_inputs: { name: "string", value: "string" },
    });
    expect(finished.state).toBe("failed");
    const context = got(finished).context as { error: { action: string; message: string } };
    expect(context.error).toEqual({
      action: "FETCH_CREDENTIAL",
      message:
        'role "Reviewer" may not fetch credential "DEPLOY_TOKEN" (it may fetch none); add it to that role\'s "credentials" in pmagent.config.json to allow it [credential_not_allowed]',
    });
  });

  it("an unknown action fails clearly and resumes the blocked sprite with the error", async () => {
    const { run } = setup();
    const finished = await run("Builder", {
      action: "DEPLOY_PROD",
      parameters: {},
      expected_inputs: { ok: "boolean" },
    });
    expect((got(finished).context as { error: { message: string } }).error.message).toBe(
      'unknown action "DEPLOY_PROD": the supervisor carries out FETCH_CREDENTIAL, LABEL_ISSUE, NOTIFY_USER, OPEN_PR, POST_COMMENT [unknown_action]',
    );
  });

  it("a result that does not satisfy expected_inputs is held: the run waits for a person, whose resume carries the result in its context", async () => {
    const { sup, run } = setup({ notify: {} });
    const waiting = await run("Builder", {
      commit: { branch: "sprite/x", file: "x.txt", text: "x\n" },
      action: "OPEN_PR",
      parameters: { title: "X", base: "main", head: "sprite/x" },
      expected_inputs: { pr_url: "string" },
    });
    expect(waiting).toMatchObject({ state: "waiting", attempt: 1 });
    const result = { number: 1, url: "pmagent-forge://demo/pulls/1", head: "sprite/x", base: "main" };
    expect(waiting.waiting!.context).toMatchObject({
      action: { action: "OPEN_PR", state: "succeeded", result },
      actions: [{ action: "OPEN_PR", result }],
    });
    await expect(sup.resumeRun(waiting.id, { inputs: {} })).rejects.toThrow(
      "resume inputs do not match the WAITING event's expected_inputs:\n  inputs.pr_url: missing (expected string)",
    );
    const resumed = await sup.resumeRun(waiting.id, {
      inputs: { pr_url: "https://example.invalid/pr/1" },
      context: { reviewer: "Human" },
    });
    const finished = await resumed.finished;
    expect(finished.state).toBe("succeeded");
    expect(got(finished)).toMatchObject({
      pr_url: "https://example.invalid/pr/1",
      context: { reviewer: "Human", action: { action: "OPEN_PR", result } },
    });
  });

  it("a result with more than expected_inputs names resumes the sprite at once, all of it given", async () => {
    const { run } = setup();
    const finished = await run("Builder", {
      commit: { branch: "sprite/y", file: "y.txt", text: "y\n" },
      action: "OPEN_PR",
      parameters: { title: "Y", base: "main", head: "sprite/y" },
      expected_inputs: { number: "integer" },
    });
    expect(finished.state).toBe("succeeded");
    expect(got(finished)).toMatchObject({
      number: 1,
      url: "pmagent-forge://demo/pulls/1",
      context: { action: { action: "OPEN_PR", state: "succeeded" } },
    });
  });

  it("ENVIRONMENT_PROPOSALs are stored with a count; an accepted pre-install step runs before the role's next sprite", async () => {
    const { sup } = setup();
    const proposal = {
      ...SPEC_EVENTS.proposal.payload,
      suggested_adjustment: { type: "add_preinstall_step", details: { command: "echo prepared > prepared.txt" } },
    };
    const emitTwice = tp.sprite("propose", {
      steps: [
        { emit: "ENVIRONMENT_PROPOSAL", payload: proposal },
        { emit: "ENVIRONMENT_PROPOSAL", payload: { ...proposal, confidence: 0.5 } },
        { emit: "COMPLETED", payload: { status: "success" } },
      ],
    });
    await sup.startRun({ role: "Builder", command: emitTwice });
    const ps = new ProposalStore({ store: ts.store, projectId: "demo", humans: ["Human"] });
    const [stored] = await ps.list();
    expect(stored).toMatchObject({
      role: "Builder",
      count: 2,
      status: "pending",
      adjustment_type: "add_preinstall_step",
    });
    await ps.accept(stored!.id, "Human");
    const check = tp.sprite("check", {
      steps: [{ sh: "test -f prepared.txt && echo PREPARED" }, { emit: "COMPLETED", payload: { status: "success" } }],
    });
    const next = await sup.startRun({ role: "Builder", command: check });
    expect(next.state).toBe("succeeded");
    expect(readFileSync(join(next.workspace, "prepared.txt"), "utf8")).toBe("prepared\n");
    const other = await sup.startRun({ role: "Reviewer", command: check });
    expect((await sup.runs.logs(next.id)).map((l) => l.text)).toContain("PREPARED");
    expect((await sup.runs.logs(other.id)).map((l) => l.text)).not.toContain("PREPARED");
  });

  it("escalate_to_human notifies the humans the first time it is proposed", async () => {
    const { sup } = setup();
    const proposal = {
      ...SPEC_EVENTS.proposal.payload,
      suggested_adjustment: { type: "escalate_to_human", details: { reason: "licence unclear" } },
    };
    const cmd = tp.sprite("escalate", {
      steps: [
        { emit: "ENVIRONMENT_PROPOSAL", payload: proposal },
        { emit: "COMPLETED", payload: { status: "success" } },
      ],
    });
    await sup.startRun({ role: "Builder", command: cmd });
    await sup.startRun({ role: "Builder", command: cmd });
    expect(consoleLines).toHaveLength(1);
    expect(consoleLines[0]).toMatch(
      /^\[pmagent notify\] WARNING environment escalation: Builder asks for a human \(bootstrap, exit 127\): licence unclear; see `pmagent env list` \(envp_[0-9a-f]{12}\)/,
    );
  });
});
