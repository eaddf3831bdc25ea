import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { projectSupervisor } from "../../../src/app/index.js";
import { RunStore, type RunRecord } from "../../../src/lattice/index.js";
import { REPO_ROOT, runCli } from "../../helpers/proc.js";
import { openSqliteTestStore, type TestStore } from "../../helpers/stores.js";
import { PMAGENT, gitInit, testProject, type TestProject } from "../helpers.js";

/** The sprite written from the protocol text alone (no SDK; literal /workspace paths). */
const SPEC_SPRITE = join(REPO_ROOT, "test/lattice/sprites/spec-sprite.mjs");
const bwrapHere = existsSync("/usr/bin/bwrap");

/**
 * In the sandbox, the sprite uses the spec's literal /workspace paths (this machine may lack
 * bwrap: then that case is skipped). Without it, the same sprite takes its workspace from
 * LATTICE_WORKSPACE, which is all that differs.
 */
const modes = [
  {
    mode: "in the sandbox, with the literal /workspace paths",
    config: { sandbox: "required" },
    args: [] as string[],
    root: () => "/workspace",
    skip: !bwrapHere,
  },
  {
    mode: "without the sandbox, its workspace from LATTICE_WORKSPACE",
    config: { sandbox: "off" },
    args: ["--workspace-from-env"],
    root: (run: RunRecord) => run.workspace,
    skip: false,
  },
];

describe("a sprite written from the Lattice spec text alone", () => {
  let ts: TestStore;
  let tp: TestProject;
  let consoleLines: string[];

  beforeEach(async () => {
    ts = await openSqliteTestStore();
    consoleLines = [];
  });
  afterEach(async () => {
    await ts.cleanup();
    tp?.cleanup();
  });

  const setup = (config: Record<string, unknown>) => {
    tp = testProject(ts, config);
    gitInit(tp.root);
    return projectSupervisor({
      store: ts.store,
      project: tp.project,
      env: { PATH: process.env.PATH, HOME: process.env.HOME },
      pmagentCommand: PMAGENT,
      pollMs: 20,
      consoleWrite: (l) => void consoleLines.push(l),
    });
  };
  /** `pmagent resume` as a person types it, in the project. */
  const resume = (id: string, ...args: string[]) =>
    runCli(["resume", id, ...args], { cwd: tp.root, env: { ...process.env, ...ts.env } });

  const specRun = async ({ config, args, root }: (typeof modes)[number]) => {
    const sup = setup(config);
    const waiting = await sup.startRun({ role: "Builder", command: [process.execPath, SPEC_SPRITE, ...args] });
    // The pull request was opened, and the run waits for the person's review, not resumed with an error.
    expect(waiting).toMatchObject({
      state: "waiting",
      attempt: 1,
      waiting: { reason: "PR_REVIEW", expected_inputs: { approved: "boolean", comments: "array<string>" } },
    });
    const pr = { number: 1, url: "pmagent-forge://demo/pulls/1", head: "sprite/fix-cache", base: "main" };
    expect(waiting.waiting!.context).toMatchObject({ action: { action: "OPEN_PR", state: "succeeded", result: pr } });
    expect((await sup.runs.events(waiting.id, { type: "ACTION_REQUEST" }))[0]!.dispatch).toMatchObject({
      status: "succeeded",
      attempts: 1,
    });
    expect(consoleLines.join("")).toContain(
      `run ${waiting.id} waits (PR_REVIEW) for inputs approved: boolean, comments: array<string>; OPEN_PR is done and its result goes with the resume: pmagent resume ${waiting.id}`,
    );
    // `pmagent runs show` says what is held for the resume.
    const show = await runCli(["runs", "show", waiting.id], { cwd: tp.root, env: { ...process.env, ...ts.env } });
    expect(show.stdout).toContain(`held:       {"action":{"action":"OPEN_PR"`);

    // Bad inputs from the person: refused with what to fix, and the run still waits.
    const notBoolean = await resume(waiting.id, "--input", "approved=yes", "--input", 'comments=["ok"]');
    expect(notBoolean.code).toBe(2);
    expect(notBoolean.stderr).toContain('--input approved expects true or false, got "yes"');
    const missing = await resume(waiting.id, "--input", "approved=true");
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(
      "resume inputs do not match the WAITING event's expected_inputs:\n  inputs.comments: missing (expected array<string>)",
    );
    expect((await sup.runs.get(waiting.id)).state).toBe("waiting");

    const done = await resume(
      waiting.id,
      "--input",
      "approved=true",
      "--input",
      'comments=["Looks good, minor nit on line 42"]',
      "--format",
      "json",
    );
    expect(done.stderr).toBe("");
    expect(done.code).toBe(0);
    const finished = (JSON.parse(done.stdout) as { run: RunRecord }).run;
    expect(finished).toMatchObject({ id: waiting.id, state: "succeeded", attempt: 2 });
    // The sprite wrote its workspace through its paths (/workspace in the sandbox), read resume.json there, and the resume's context held the pull request.
    const got = JSON.parse(readFileSync(join(finished.workspace, ".lattice", "got.json"), "utf8")) as {
      root: string;
      resume: Record<string, unknown>;
    };
    expect(got.root).toBe(root(finished));
    expect(got.resume).toMatchObject({
      work_item_id: waiting.work_item_id,
      checkpoint_id: waiting.waiting!.checkpoint_id,
      inputs: { approved: true, comments: ["Looks good, minor nit on line 42"] },
      context: { action: { action: "OPEN_PR", state: "succeeded", result: pr } },
    });
    const runs = new RunStore(ts.store, "demo");
    expect((await runs.events(waiting.id)).map((e) => e.event_type)).toEqual([
      "PHASE_STARTED",
      "PHASE_FINISHED",
      "ARTIFACT",
      "ACTION_REQUEST",
      "WAITING",
      "INFO",
      "COMPLETED",
    ]);
    expect(await runs.protocolErrors(waiting.id)).toEqual([]);
    expect(await runs.protocolWarnings(waiting.id)).toEqual([]);
    // The same resume again is a no-op.
    const again = await resume(
      waiting.id,
      "--input",
      "approved=true",
      "--input",
      'comments=["Looks good, minor nit on line 42"]',
    );
    expect(again.stdout).toContain("already resumed with this checkpoint and payload: nothing done");
  };

  // bwrap may be missing on this machine: then the sandboxed case is reported as skipped.
  it.skipIf(modes[0]!.skip)(
    `(the PR_REVIEW wait after a blocking OPEN_PR) runs to completion with a person's resume: ${modes[0]!.mode}`,
    () => specRun(modes[0]!),
  );
  it(`(the PR_REVIEW wait after a blocking OPEN_PR) runs to completion with a person's resume: ${modes[1]!.mode}`, () =>
    specRun(modes[1]!));

  it("without the sandbox: the sprite's environment names its outbox, and a run that wrote nothing says where the workspace is", async () => {
    const sup = setup({ sandbox: "off" });
    const run = await sup.startRun({
      role: "Builder",
      command: tp.sprite("silent", {
        steps: [
          { sh: 'printf "%s\\n%s\\n%s" "$LATTICE_WORKSPACE" "$LATTICE_OUTBOX" "$LATTICE_RESUME_FILE" > env.txt' },
          { exit: 0 },
        ],
      }),
    });
    expect(readFileSync(join(run.workspace, "env.txt"), "utf8").split("\n")).toEqual([
      run.workspace,
      join(run.workspace, ".lattice", "outbox.jsonl"),
      join(run.workspace, ".lattice", "resume.json"),
    ]);
    // It sent no events: its exit status decides, with a note on where its events would have gone.
    expect(run).toMatchObject({ state: "succeeded" });
    expect(run.reason).toBe(
      `the sprite exited with code 0 and sent no Lattice events, so its exit status decides; the sprite runs without a sandbox, so its workspace is not /workspace: it is ${run.workspace} (LATTICE_WORKSPACE), its outbox ${join(run.workspace, ".lattice", "outbox.jsonl")} (LATTICE_OUTBOX)`,
    );
  });
});
