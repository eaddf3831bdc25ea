import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { openProject, projectCycles } from "../../../src/app/index.js";
import { codeLane } from "../../../src/config/index.js";
import { answer, type LaneStatus } from "../../../src/kai/index.js";
import { LocalForge, localPullRequestDiff } from "../../../src/forge/index.js";
import { availableStoreKinds } from "../../helpers/stores.js";
import { useSupervisorFixture } from "../../helpers/supervisor-fixture.js";
import { TEST_LANE } from "../helpers.js";

const kinds = await availableStoreKinds();

const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.invalid", ...args], {
    cwd,
    encoding: "utf8",
  }).trim();

describe.each(kinds)("lane cycles as branches on $name", (kind) => {
  const fx = useSupervisorFixture(kind, { git: true });
  let bare: string;
  const supervisor = () => fx.tp.supervisor(undefined, { cycles: projectCycles(fx.tp.project, fx.ts.store) });
  const forge = () =>
    new LocalForge({ store: fx.ts.store, projectId: "demo", root: fx.tp.root, bareRepo: ".pmagent/forge.git" });

  beforeEach(async () => {
    bare = join(fx.tp.root, ".pmagent", "forge.git");
  });

  it("each role starts from the one before: one commit per role on the cycle's branch, one pull request, no .lattice", async () => {
    await fx.board.post("Human", { id: "c-1", to: "Builder", kind: "build_request" });
    const builder = fx.tp.sprite("builder", {
      steps: [
        { sh: "mkdir -p src && printf 'built\\n' > src/x" },
        // The sprite's own commit, .lattice forced in: the hand-on takes the files, not the commit.
        { sh: "git add -A -f && git -c user.name=s -c user.email=s@x commit -q -m 'sprite commit'" },
        { emit: "COMPLETED", payload: { status: "success", summary: "built src/x" } },
      ],
    });
    const first = await supervisor().startRun({ role: "Builder", entryId: "c-1", command: builder });
    expect(first.reason).toBeNull();
    expect(first.state).toBe("succeeded");
    const branch = "pmagent/test/build/c-1";
    expect(first.cycle).toMatchObject({ id: "c-1", branch, base: "main", commit: git(bare, "rev-parse", branch) });
    expect(first.cycle?.pull_request?.number).toBe(1);
    const review = await fx.board.get("c-1-review");
    expect(review.entry.payload.refs).toMatchObject({ branch, commit: first.cycle!.commit, pull_request: "1" });

    const reviewer = fx.tp.sprite("reviewer", {
      steps: [
        { sh: "cat src/x > seen || exit 3" },
        { emit: "COMPLETED", payload: { status: "success", summary: "read it" } },
      ],
    });
    const second = await supervisor().startRun({ role: "Reviewer", entryId: "c-1-review", command: reviewer });
    expect(second.state).toBe("succeeded");
    expect(git(bare, "show", `${branch}:seen`)).toBe("built");
    expect(git(bare, "log", "--format=%an|%s", `main..${branch}`).split("\n")).toEqual([
      "Reviewer|Reviewer: c-1-review",
      "Builder|sprite commit",
    ]);
    expect(git(bare, "log", "-1", "--format=%b", branch)).toContain(`Run: ${second.id}`);
    expect(
      git(bare, "ls-tree", "-r", "--name-only", branch)
        .split("\n")
        .filter((f) => f.startsWith(".lattice") || f.startsWith(".pmagent")),
    ).toEqual([]);
    const pulls = await forge().list();
    expect(pulls.map((p) => ({ number: p.number, head: p.head, base: p.base, head_sha: p.head_sha }))).toEqual([
      { number: 1, head: branch, base: "main", head_sha: second.cycle!.commit },
    ]);
  });

  it("a run that changes nothing hands on no commit, and open_pull_request names when the pull request opens", async () => {
    fx.reproject({ git: true, config: { lanes: [{ ...TEST_LANE, open_pull_request: "Reviewer" }] } });
    await fx.board.post("Human", { id: "c-2", to: "Builder", kind: "build_request" });
    await fx.board.post("Human", { id: "c-6", to: "Builder", kind: "build_request" });
    const idle = await supervisor().startRun({
      role: "Builder",
      entryId: "c-6",
      command: fx.tp.sprite("idle", { steps: [{ emit: "COMPLETED", payload: { status: "success" } }] }),
    });
    expect(idle.cycle).toMatchObject({ commit: null, pull_request: null });
    expect((await fx.board.get("c-6-review")).entry.payload.refs).not.toHaveProperty("commit");
    const writes = await supervisor().startRun({
      role: "Builder",
      entryId: "c-2",
      command: fx.tp.sprite("w", {
        steps: [{ file: { path: "a.txt", text: "a" } }, { emit: "COMPLETED", payload: { status: "success" } }],
      }),
    });
    expect(writes.cycle?.pull_request ?? null).toBeNull();
    const reviewer = await supervisor().startRun({
      role: "Reviewer",
      entryId: "c-2-review",
      command: fx.tp.sprite("r", {
        steps: [{ file: { path: "b.txt", text: "b" } }, { emit: "COMPLETED", payload: { status: "success" } }],
      }),
    });
    expect(reviewer.cycle?.pull_request?.number).toBe(1);
  });

  it("the branch moved while a run waited: merged when the changes do not touch, a conflict fails the run with the files", async () => {
    await fx.board.post("Human", { id: "c-3", to: "Builder", kind: "build_request" });
    const base = await supervisor().startRun({
      role: "Builder",
      entryId: "c-3",
      command: fx.tp.sprite("b", {
        steps: [{ file: { path: "a.txt", text: "one\n" } }, { emit: "COMPLETED", payload: { status: "success" } }],
      }),
    });
    const branch = base.cycle!.branch;
    const moveBranch = (file: string, text: string) => {
      const clone = mkdtempSync(join(tmpdir(), "pmagent-move-"));
      try {
        git(clone, "clone", "-q", "-b", branch, bare, ".");
        execFileSync("sh", ["-c", `printf '${text}' > ${file}`], { cwd: clone });
        git(clone, "add", file);
        git(clone, "commit", "-qm", `someone else: ${file}`);
        git(clone, "push", "-q", "origin", branch);
      } finally {
        rmSync(clone, { recursive: true, force: true });
      }
    };
    const waitThenWrite = (text: string) =>
      fx.tp.sprite(`wait-${text}`, {
        steps: [
          { file: { path: "a.txt", text } },
          { waiting: { reason: "PR_REVIEW", expected_inputs: { ok: "boolean" } } },
        ],
        on_resume: [{ emit: "COMPLETED", payload: { status: "success" } }],
      });

    // Not touching: b.txt moved meanwhile, the run changed a.txt.
    const s = supervisor();
    const clean = await s.startRun({ role: "Reviewer", entryId: "c-3-review", command: waitThenWrite("two\n") });
    expect(clean.state).toBe("waiting");
    moveBranch("b.txt", "other\\n");
    const cleanDone = await (await s.resumeRun(clean.id, { inputs: { ok: true } })).finished;
    expect(cleanDone.reason).toBeNull();
    expect(cleanDone.state).toBe("succeeded");
    expect(git(bare, "show", `${branch}:a.txt`)).toBe("two");
    expect(git(bare, "show", `${branch}:b.txt`)).toBe("other");
    expect(git(bare, "log", "-1", "--format=%p", branch).split(" ")).toHaveLength(2);

    // Touching the same lines: refused, nothing merged, the branch left as it was.
    await fx.board.post("Human", { id: "c-4", to: "Reviewer", kind: "review_request" });
    const run = await s.startRun({ role: "Reviewer", entryId: "c-4", command: waitThenWrite("mine\n") });
    const cycle4 = run.cycle!;
    const c4 = "pmagent/test/build/c-4";
    expect(cycle4.branch).toBe(c4);
    // The c-4 cycle's branch exists once its first change is handed on: make it, then move it.
    git(fx.tp.root, "push", "-q", bare, `HEAD:refs/heads/${c4}`);
    const moved = () => {
      const clone = mkdtempSync(join(tmpdir(), "pmagent-move-"));
      try {
        git(clone, "clone", "-q", "-b", c4, bare, ".");
        execFileSync("sh", ["-c", "printf 'theirs\\n' > a.txt"], { cwd: clone });
        git(clone, "add", "a.txt");
        git(clone, "commit", "-qm", "theirs");
        git(clone, "push", "-q", "origin", c4);
        return git(clone, "rev-parse", "HEAD");
      } finally {
        rmSync(clone, { recursive: true, force: true });
      }
    };
    const theirs = moved();
    const done = await (await s.resumeRun(run.id, { inputs: { ok: true } })).finished;
    expect(done.state).toBe("failed");
    expect(done.reason).toContain(`could not be handed on to the cycle's branch ${c4}`);
    expect(done.reason).toContain("conflict with the run's in a.txt");
    expect(git(bare, "rev-parse", c4)).toBe(theirs);
    const error = await fx.board.get("c-4-error");
    expect(error.entry.payload.summary).toContain("conflict");
  });

  it("without a repository on a branch, the run works outside a cycle", async () => {
    fx.reproject();
    await fx.board.post("Human", { id: "c-5", to: "Builder", kind: "build_request" });
    const run = await supervisor().startRun({
      role: "Builder",
      entryId: "c-5",
      command: fx.tp.sprite("x", { steps: [{ emit: "COMPLETED", payload: { status: "success" } }] }),
    });
    expect(run.state).toBe("succeeded");
    expect(run.cycle).toBeNull();
  });
});

describe.each(kinds)("the code lane on $name: outcomes route the work", (kind) => {
  // The shipped code lane, its agents swapped for scripted sprites (startRun's command).
  const fx = useSupervisorFixture(kind, { config: { lanes: [codeLane()] }, git: true });

  const kaiAnswer = async () =>
    answer(
      {
        version: "kai_request_v1",
        request_id: "t-cycle",
        from: { actor_type: "human" },
        project_id: "demo",
        type: "lane_status",
        lane: { layer: "code", name: "code" },
        params: {},
      },
      {
        config: fx.tp.project.config,
        sources: await (await openProject({ project: fx.tp.project, store: fx.ts.store })).kaiSources(),
      },
    );
  const laneStatus = async () => {
    const res = await kaiAnswer();
    if (res.status !== "ok" || res.payload.kind !== "lane_status_v1") throw new Error(JSON.stringify(res));
    return res.payload.data as LaneStatus;
  };

  it("Developer → Reviewer (changes_requested, the review goes back) → Developer fixes → Reviewer approves: the cycle's pull request is merged", async () => {
    const s = fx.tp.supervisor(undefined, { cycles: projectCycles(fx.tp.project, fx.ts.store) });
    const bare = join(fx.tp.root, ".pmagent", "forge.git");
    await fx.board.post("Human", {
      id: "feat-1",
      to: "Developer",
      kind: "code_request",
      payload: { summary: "add greet()" },
    });
    const dev = await s.startRun({
      role: "Developer",
      entryId: "feat-1",
      command: fx.tp.sprite("dev", {
        steps: [
          { file: { path: "greet.js", text: "export const greet = () => 'hi';\n" } },
          { emit: "COMPLETED", payload: { status: "success", summary: "greet()" } },
        ],
      }),
    });
    expect(dev.state).toBe("succeeded");
    const review = await s.startRun({
      role: "Reviewer",
      entryId: "feat-1-review",
      command: fx.tp.sprite("rev1", {
        steps: [
          { sh: "grep -q hi greet.js || exit 1" },
          {
            emit: "COMPLETED",
            payload: { status: "success", outcome: "changes_requested", summary: "say hello, not hi" },
          },
        ],
      }),
    });
    expect(review.state).toBe("succeeded");
    const fix = await fx.board.get("feat-1-review-fix");
    expect(fix.entry).toMatchObject({ to: "Developer", kind: "code_fix_request" });
    expect(fix.entry.payload.details).toEqual({
      outcome: "changes_requested",
      from_role: "Reviewer",
      review: "say hello, not hi",
    });
    // Sent back, the cycle goes on: Kai does not call it completed at the first review.
    const during = await laneStatus();
    expect(during.cycle.status).toBe("in_progress");
    const fixed = await s.startRun({
      role: "Developer",
      entryId: "feat-1-review-fix",
      command: fx.tp.sprite("dev2", {
        steps: [{ sh: "sed -i s/hi/hello/ greet.js" }, { emit: "COMPLETED", payload: { status: "success" } }],
      }),
    });
    expect(fixed.cycle?.branch).toBe("pmagent/code/code/feat-1");
    const approved = await s.startRun({
      role: "Reviewer",
      entryId: "feat-1-review-fix-review",
      command: fx.tp.sprite("rev2", {
        steps: [{ emit: "COMPLETED", payload: { status: "success", outcome: "approved" } }],
      }),
    });
    expect(approved.state).toBe("succeeded");
    expect(approved.cycle?.merged).toBe(git(bare, "rev-parse", "main"));
    expect(git(bare, "show", "main:greet.js")).toBe("export const greet = () => 'hello';");
    expect(git(bare, "log", "--format=%an", "main").split("\n")).toEqual(["Developer", "Developer", "t"]);
    const done = await fx.board.get("feat-1-review-fix-review-done");
    expect(done.entry).toMatchObject({ to: "Human", kind: "code_cycle_done" });
    expect(done.entry.payload.refs).toMatchObject({ branch: "pmagent/code/code/feat-1", pull_request: "1" });
    const forge = new LocalForge({
      store: fx.ts.store,
      projectId: "demo",
      root: fx.tp.root,
      bareRepo: ".pmagent/forge.git",
    });
    const [pr] = await forge.list();
    expect(pr).toMatchObject({ number: 1, state: "merged" });
    // Merged by a fast-forward, its diff is still the cycle's work against the base it was merged into.
    const diff = await localPullRequestDiff(forge, 1);
    expect(diff.stat).toContain("greet.js");
    expect(diff.diff).toContain("+export const greet = () => 'hello';");
    // Kai's lane status names the cycle's commit: the merge into main.
    const res = await kaiAnswer();
    if (res.status !== "ok" || res.payload.kind !== "lane_status_v1") throw new Error(JSON.stringify(res));
    const status = res.payload.data as LaneStatus;
    expect(status.cycle).toMatchObject({
      status: "completed",
      completed_at: (await fx.board.get("feat-1-review-fix-review")).entry.updated_at,
    });
    expect(status.cycle).toMatchObject({
      branch: "pmagent/code/code/feat-1",
      commit: approved.cycle!.merged,
      merged: true,
    });
    expect(status.cycle.evidence).toContainEqual({
      type: "commit",
      id: approved.cycle!.merged,
      title: "merged pmagent/code/code/feat-1 into its base",
    });
    expect(res.summary_md).toContain(`merged as ${approved.cycle!.merged!.slice(0, 12)}`);
  });

  it("an outcome that is no lowercase name is a protocol error, not a route", async () => {
    const s = fx.tp.supervisor(undefined, { cycles: projectCycles(fx.tp.project, fx.ts.store) });
    await fx.board.post("Human", { id: "feat-2", to: "Reviewer", kind: "code_review_request" });
    const run = await s.startRun({
      role: "Reviewer",
      entryId: "feat-2",
      command: fx.tp.sprite("bad", {
        steps: [{ emit: "COMPLETED", payload: { status: "success", outcome: "Changes Requested" } }],
      }),
    });
    expect(run.state).toBe("failed");
    const errors = await s.runs.protocolErrors(run.id);
    expect(errors.map((e) => e.source).sort()).toEqual(["outbox", "stdout"]);
    for (const e of errors)
      expect(e.reason).toBe(
        "schema violation: $.payload.outcome: an outcome is a lowercase name, e.g. changes_requested",
      );
    expect(await fx.board.find("feat-2-review-fix")).toBeUndefined();
  });
});
