import { describe, expect, it } from "vitest";
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { eventId, gateFrom, type StoredEvent } from "../../../src/lattice/index.js";
import { availableStoreKinds } from "../../helpers/stores.js";
import { SPEC_EVENTS } from "../helpers.js";
import { useSupervisorFixture } from "../../helpers/supervisor-fixture.js";

const kinds = await availableStoreKinds();

describe.each(kinds)("supervisor on $name", (kind) => {
  const fx = useSupervisorFixture(kind);

  it("takes the spec's example events verbatim through the whole path: stored once each, in outbox order, entry done, next entry posted", async () => {
    await fx.board.post("Human", {
      id: "issue-17",
      to: "Builder",
      kind: "build_request",
      payload: { summary: "fix the cache" },
    });
    const e = SPEC_EVENTS;
    const command = fx.tp.sprite("spec", {
      steps: [
        { event: e.info },
        { log: "compiling…" },
        { stderr: "warning: something on stderr" },
        { event: e.infoProgress },
        { event: e.phaseStarted },
        { stdout_only: { ...e.info, payload: { message: "only on stdout" } } },
        { event: e.phaseFinished },
        { outbox_only: { ...e.info, payload: { message: "only in the outbox" } } },
        { event: e.postComment },
        { event: e.artifact },
        { event: e.proposal },
        { event: e.info }, // the same event again: still stored once
        { event: e.completed },
      ],
    });
    const sup = fx.tp.supervisor();
    const run = await sup.startRun({ role: "Builder", entryId: "issue-17", command });
    expect(run.state).toBe("succeeded");
    expect(run.exit_code).toBe(0);
    const events = await sup.runs.events(run.id);
    const ids = events.map((x) => x.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(events.map((x) => (x.event.payload as { message?: string }).message ?? x.event_type)).toEqual([
      "Starting implementation",
      "Running test suite (75% complete)",
      "PHASE_STARTED",
      "PHASE_FINISHED",
      "only in the outbox",
      "ACTION_REQUEST",
      "ARTIFACT",
      "ENVIRONMENT_PROPOSAL",
      "COMPLETED",
      "only on stdout",
    ]);
    // Verbatim: identity is the hash of the spec's JSON, and the stored event is that JSON.
    expect(events[0]!.id).toBe(eventId(e.info));
    expect(events[0]!.event).toEqual(e.info);
    expect(events.find((x) => x.event_type === "ENVIRONMENT_PROPOSAL")!.event).toEqual(e.proposal);
    const logs = await sup.runs.logs(run.id);
    // stdout and stderr are separate streams: each keeps its own order.
    expect(logs.filter((l) => l.stream === "stdout").map((l) => l.text)).toEqual(["compiling…"]);
    expect(logs.filter((l) => l.stream === "stderr").map((l) => l.text)).toEqual(["warning: something on stderr"]);
    // No action executor plugged in: the action is recorded as failed, with the reason.
    await sup.whenIdle(run.id);
    const action = (await sup.runs.events(run.id, { type: "ACTION_REQUEST" }))[0]!;
    expect(action.dispatch).toEqual({
      status: "failed",
      error: "no action executor is configured: POST_COMMENT was not carried out",
    });
    expect((await sup.runs.events(run.id, { types: ["COMPLETED", "ARTIFACT"] })).map((x) => x.event_type)).toEqual([
      "ARTIFACT",
      "COMPLETED",
    ]);
    expect(await sup.runs.events(run.id, { types: [] })).toEqual([]);
    // Both handed to their sinks: nothing for reconciliation to deliver again, until one is unmarked.
    expect(await sup.runs.undispatched(run.id, ["ACTION_REQUEST", "ENVIRONMENT_PROPOSAL"])).toEqual([]);
    await fx.ts.store.run(
      "UPDATE lattice_run_events SET dispatched_ms = NULL WHERE run_id = ? AND event_type = 'ACTION_REQUEST'",
      [run.id],
    );
    expect((await sup.runs.undispatched(run.id, ["ACTION_REQUEST", "ENVIRONMENT_PROPOSAL"])).map((x) => x.id)).toEqual([
      action.id,
    ]);
    const entry = await fx.board.get("issue-17");
    expect(entry.entry.status).toBe("done");
    const next = await fx.board.get("issue-17-review");
    expect(next.entry).toMatchObject({
      from: "Builder",
      to: "Reviewer",
      kind: "review_request",
      status: "open",
      source_run_id: run.id,
    });
    // payload.refs as the roles contract's readers read it: an object naming the entry it follows.
    expect(next.entry.payload).toEqual({
      refs: {
        source_board_id: "issue-17",
        run_id: run.id,
        branch: "sprite/fix-cache",
        artifacts: [
          {
            type: "artifact",
            run_id: run.id,
            event_id: eventId(e.artifact),
            kind: "branch",
            ref: "sprite/fix-cache",
            url: null,
          },
        ],
      },
      summary: "Implemented cache invalidation. All tests passing.",
    });
    const history = await fx.board.history("issue-17");
    expect(history.map((h) => h.to_status)).toEqual(["open", "in_progress", "done"]);
    // The sprite read its work item from PMAGENT_ENTRY_FILE.
    expect(JSON.parse(readFileSync(join(run.workspace, ".lattice/entry.json"), "utf8")).id).toBe("issue-17");
  });

  it("reads stdout to its end after an outbox backlog: the output after it is kept, each event stored once", async () => {
    // More lines than the tailer reads ahead (20,000) and an outbox of several batches: the
    // stdout after the events is read only once the backlog is stored, by the drain.
    const n = 24_000;
    const command = fx.tp.sprite("bulk", {
      steps: [{ bulk: n }, { log: "after the backlog" }, { emit: "COMPLETED", payload: { status: "success" } }],
    });
    const sup = fx.tp.supervisor();
    const run = await sup.startRun({ role: "Builder", command });
    expect(run.state).toBe("succeeded");
    const count = await fx.ts.store.get<{ n: number; sources: string }>(
      "SELECT COUNT(*) AS n, MIN(source) AS sources FROM lattice_run_events WHERE run_id = ?",
      [run.id],
    );
    expect(Number(count!.n)).toBe(n + 1);
    expect(count!.sources).toBe("outbox");
    expect((await sup.runs.logs(run.id)).map((l) => l.text)).toEqual(["after the backlog"]);
  });

  it("maps COMPLETED failure and ERROR to a failed run and an entry in error", async () => {
    await fx.board.post("Human", { id: "e-fail", to: "Builder", kind: "build_request" });
    await fx.board.post("Human", { id: "e-err", to: "Builder", kind: "build_request" });
    const sup = fx.tp.supervisor();
    const failed = await sup.startRun({
      role: "Builder",
      entryId: "e-fail",
      command: fx.tp.sprite("f", {
        steps: [{ emit: "COMPLETED", payload: { status: "failure", summary: "tests red" } }],
      }),
    });
    expect(failed).toMatchObject({ state: "failed", reason: "COMPLETED with status failure: tests red" });
    expect((await fx.board.get("e-fail")).entry.status).toBe("error");
    const errored = await sup.startRun({
      role: "Builder",
      entryId: "e-err",
      command: fx.tp.sprite("e", { steps: [{ event: SPEC_EVENTS.error }, { exit: 1 }] }),
    });
    expect(errored).toMatchObject({
      state: "failed",
      reason: "ERROR: Build failed with exit code 1 after 3 retries",
      exit_code: 1,
    });
    expect((await fx.board.get("e-err")).entry).toMatchObject({
      status: "error",
      note: `run ${errored.id} failed: ERROR: Build failed with exit code 1 after 3 retries`,
    });
    // Each failure reaches a human as a doc_update_error entry with the reason, the run and its evidence.
    const error = (await fx.board.get("e-err-error")).entry;
    expect(error).toMatchObject({
      from: "Builder",
      to: "Human",
      kind: "doc_update_error",
      status: "open",
      source_run_id: errored.id,
    });
    expect(error.payload).toEqual({
      summary: "Builder failed on e-err (build_request): ERROR: Build failed with exit code 1 after 3 retries",
      details: {
        reason: "ERROR: Build failed with exit code 1 after 3 retries",
        role: "Builder",
        failed_entry_id: "e-err",
        failed_kind: "build_request",
        run_id: errored.id,
        evidence: { errors: ["Build failed with exit code 1 after 3 retries"], artifacts: [] },
      },
      refs: { source_board_id: "e-err", run_id: errored.id },
    });
    expect((await fx.board.get("e-fail-error")).entry.payload).toMatchObject({
      details: { reason: "COMPLETED with status failure: tests red", run_id: failed.id },
    });
  });

  it("fails a run whose sprite exits non-zero without a word or ends mid-protocol, and one whose command does not exist", async () => {
    const sup = fx.tp.supervisor();
    const silent = await sup.startRun({
      role: "Builder",
      command: fx.tp.sprite("s", { steps: [{ log: "bye" }, { exit: 3 }] }),
    });
    expect(silent).toMatchObject({
      state: "failed",
      exit_code: 3,
      reason: expect.stringMatching(
        /^the sprite exited with code 3 and sent no Lattice events, so its exit status decides; .*\/\.lattice\/outbox\.jsonl/,
      ),
    });
    const crashed = await sup.startRun({
      role: "Builder",
      command: fx.tp.sprite("c", { steps: [{ event: SPEC_EVENTS.info }, { exit: 0 }] }),
    });
    expect(crashed).toMatchObject({
      state: "failed",
      exit_code: 0,
      reason: expect.stringMatching(/^the sprite ended \(exit code 0\) without COMPLETED, ERROR or WAITING; /),
    });
    const missing = await sup.startRun({ role: "Builder", command: ["/nonexistent/sprite-binary"] });
    expect(missing).toMatchObject({
      state: "failed",
      reason: "cannot start /nonexistent/sprite-binary: command not found",
    });
  });

  it("records bad lines as protocol errors and goes on; WAITING on a missing checkpoint fails the run", async () => {
    const sup = fx.tp.supervisor();
    const run = await sup.startRun({
      role: "Builder",
      command: fx.tp.sprite("bad", {
        steps: [
          { raw_stdout: "LATTICE_EVENT {not json\n" },
          { stdout_only: { ...SPEC_EVENTS.info, protocol_version: "v2" } },
          { event: SPEC_EVENTS.info },
          { event: SPEC_EVENTS.waiting },
        ],
      }),
    });
    expect(run.state).toBe("failed");
    expect(run.reason).toContain("WAITING named checkpoint chk_abc123, which does not exist");
    const errors = await sup.runs.protocolErrors(run.id);
    expect(errors.map((x) => x.reason)).toEqual([
      expect.stringMatching(/^invalid JSON/),
      expect.stringContaining("$.protocol_version"),
      expect.stringContaining("WAITING named checkpoint chk_abc123"),
    ]);
    expect((await sup.runs.events(run.id)).length).toBe(2);
  });

  it("caps the log with a truncation marker and redacts secrets and token-shaped strings from events and logs", async () => {
    const secret = "s3cr3t-value-from-env";
    const token = `ghp_${"a".repeat(36)}`;
    const sup = fx.tp.supervisor(undefined, { env: { ...process.env, MY_API_TOKEN: secret }, logCapBytes: 200 });
    const run = await sup.startRun({
      role: "Builder",
      command: fx.tp.sprite("redact", {
        steps: [
          { log: `token is ${token}` },
          { emit: "INFO", payload: { message: `leaking ${secret} and ${token}` } },
          ...Array.from({ length: 20 }, (_, i) => ({ log: `line ${i} ${"x".repeat(20)}` })),
          { emit: "COMPLETED", payload: { status: "success" } },
        ],
      }),
    });
    expect(run.state).toBe("succeeded");
    const logs = await sup.runs.logs(run.id);
    expect(logs[0]!.text).toBe("token is [REDACTED]");
    expect(logs.at(-1)).toMatchObject({
      stream: "supervisor",
      text: "[pmagent] log truncated: the run's log reached its cap of 200 bytes; later output is not kept",
    });
    expect(run.log_truncated).toBe(true);
    const info = (await sup.runs.events(run.id, { type: "INFO" }))[0]!;
    expect((info.event.payload as { message: string }).message).toBe("leaking [REDACTED] and [REDACTED]");
    const everything = JSON.stringify([await sup.runs.events(run.id), logs]);
    expect(everything).not.toContain(secret);
    expect(everything).not.toContain(token);
  });

  it("gives the sprite a scrubbed environment and refuses git push and gh through shims, recording violations", async () => {
    const sup = fx.tp.supervisor(undefined, {
      env: { ...process.env, GITHUB_TOKEN: "ghp_should_never_reach_the_sprite_000000", SOME_RANDOM_VAR: "x" },
    });
    const run = await sup.startRun({
      role: "Builder",
      command: fx.tp.sprite("env", {
        steps: [
          { sh: "env | sort > env.txt" },
          { sh: "git init -q . && git push origin main" },
          { sh: "git -C . remote add origin https://example.invalid/x.git" },
          { sh: "gh pr create --title x" },
          { sh: "git status --short > status.txt" },
          { emit: "COMPLETED", payload: { status: "success" } },
        ],
      }),
    });
    expect(run.state).toBe("succeeded");
    const env = readFileSync(join(run.workspace, "env.txt"), "utf8");
    expect(env).not.toContain("GITHUB_TOKEN");
    expect(env).not.toContain("SOME_RANDOM_VAR");
    expect(env).toContain(`LATTICE_RUN_ID=${run.id}`);
    expect(env).toContain(`LATTICE_WORKSPACE=${run.workspace}`);
    expect(env).toMatch(/^PATH=[^\n]*\/bin:[^\n]*\/tools:/m);
    expect(statSync(join(run.workspace, "status.txt")).isFile()).toBe(true);
    const violations = await sup.runs.violations(run.id);
    expect(violations.map((v) => v.rule)).toEqual(["git_push", "git_remote_edit", "github_cli"]);
    expect(violations[0]!.detail).toBe("push origin main");
    const logs = (await sup.runs.logs(run.id)).map((l) => l.text);
    expect(logs).toContain(
      "pmagent: git push is refused inside a sprite (hard rule: git_push). Lattice performs remote git and GitHub operations: emit an ACTION_REQUEST (e.g. OPEN_PR) instead.",
    );
  });

  it("waits on an existing checkpoint, then resumes: inputs checked, checkpoint restored, resume.json 0600, same resume twice is a no-op", async () => {
    await fx.board.post("Human", { id: "w-1", to: "Builder", kind: "build_request" });
    const sup = fx.tp.supervisor();
    const command = fx.tp.sprite("wait", {
      steps: [
        { emit: "PHASE_STARTED", payload: { phase: "implement" } },
        { file: { path: "work.txt", text: "before" } },
        { waiting: { reason: "PR_REVIEW", expected_inputs: { approved: "boolean", comments: "array<string>" } } },
      ],
      on_resume: [{ emit: "COMPLETED", payload: { status: "success", summary: "resumed and done" } }],
    });
    const waiting = await sup.startRun({ role: "Builder", entryId: "w-1", command });
    expect(waiting.state).toBe("waiting");
    expect(waiting.waiting).toMatchObject({
      reason: "PR_REVIEW",
      expected_inputs: { approved: "boolean", comments: "array<string>" },
    });
    expect((await fx.board.get("w-1")).entry.status).toBe("in_progress");
    await expect(sup.resumeRun(waiting.id, { inputs: { approved: "yes" } })).rejects.toThrow(
      "resume inputs do not match the WAITING event's expected_inputs:\n  inputs.approved: expected boolean, got string\n  inputs.comments: missing (expected array<string>)",
    );
    // The workspace changed after the checkpoint: resume restores it.
    const { writeFileSync } = await import("node:fs");
    writeFileSync(join(waiting.workspace, "work.txt"), "after");
    const first = await sup.resumeRun(waiting.id, { inputs: { approved: true, comments: ["lgtm"] } });
    expect(first.noop).toBe(false);
    const done = await first.finished;
    expect(done.state).toBe("succeeded");
    expect(done.attempt).toBe(2);
    expect(readFileSync(join(waiting.workspace, "work.txt"), "utf8")).toBe("before");
    const resumeFile = join(waiting.workspace, ".lattice/resume.json");
    expect(statSync(resumeFile).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(resumeFile, "utf8"))).toEqual({
      work_item_id: "w-1",
      checkpoint_id: waiting.waiting!.checkpoint_id,
      inputs: { approved: true, comments: ["lgtm"] },
      context: {},
    });
    const again = await sup.resumeRun(waiting.id, { inputs: { approved: true, comments: ["lgtm"] } });
    expect(again.noop).toBe(true);
    await expect(sup.resumeRun(waiting.id, { inputs: { approved: false, comments: [] } })).rejects.toThrow(
      `run ${waiting.id} is succeeded, not waiting: only a waiting run can be resumed`,
    );
    const acks = (await sup.runs.events(waiting.id, { type: "INFO" })).map((x) => x.event.payload);
    expect(acks).toEqual([
      { message: "resumed", kind: "note", metadata: { inputs: { approved: true, comments: ["lgtm"] }, context: {} } },
    ]);
    expect((await fx.board.get("w-1")).entry.status).toBe("done");
  });

  it("two resumes with different inputs at once: one resumes the run, the other is told run_not_waiting and leaves no record", async () => {
    const sup = fx.tp.supervisor();
    const waiting = await sup.startRun({
      role: "Builder",
      command: fx.tp.sprite("race", {
        steps: [{ waiting: { reason: "pick", expected_inputs: { n: "integer" } } }],
        on_resume: [{ emit: "COMPLETED", payload: { status: "success" } }],
      }),
    });
    const results = await Promise.allSettled([1, 2].map((n) => sup.resumeRun(waiting.id, { inputs: { n } })));
    const won = results.filter((r) => r.status === "fulfilled");
    const lost = results.filter((r): r is PromiseRejectedResult => r.status === "rejected");
    expect(won.map((r) => r.value.noop)).toEqual([false]);
    // Let the winner finish first, so a failed assertion below never leaves a run writing to a closed pool.
    expect((await won[0]!.value.finished).state).toBe("succeeded");
    expect(lost).toHaveLength(1);
    expect(lost[0]!.reason).toMatchObject({ code: "run_not_waiting" });
    // The loser reads the run at whatever point the winner has reached: the CAS lost, starting, or already running.
    expect(String(lost[0]!.reason.message)).toMatch(
      new RegExp(`^run ${waiting.id} (was resumed by someone else meanwhile|is (starting|running), not waiting)`),
    );
    expect(await fx.ts.store.all("SELECT run_id FROM lattice_resumes WHERE run_id = ?", [waiting.id])).toHaveLength(1);
  });

  it("keeps secret inputs out of the database and redacts them if the sprite prints them", async () => {
    const sup = fx.tp.supervisor();
    const secret = "hunter2-very-secret";
    const waiting = await sup.startRun({
      role: "Builder",
      command: fx.tp.sprite("sec", {
        steps: [{ waiting: { reason: "need token", expected_inputs: { token: "string" } } }],
        on_resume: [{ sh: "cat .lattice/resume.json" }, { emit: "COMPLETED", payload: { status: "success" } }],
      }),
    });
    const r = await sup.resumeRun(waiting.id, { inputs: {}, secretInputs: { token: secret } });
    const done = await r.finished;
    expect(done.state).toBe("succeeded");
    const dump = JSON.stringify([
      await sup.runs.events(done.id),
      await sup.runs.logs(done.id),
      await fx.ts.store.all("SELECT * FROM lattice_resumes"),
      await fx.ts.store.all("SELECT * FROM lattice_runs"),
    ]);
    expect(dump).not.toContain(secret);
    expect(dump).toContain("[REDACTED]");
  });

  it("resumes a blocked sprite with the error when no action executor is plugged in", async () => {
    const sup = fx.tp.supervisor();
    const run = await sup.startRun({
      role: "Builder",
      command: fx.tp.sprite("blocked", {
        steps: [
          { event: SPEC_EVENTS.openPr },
          { waiting: { reason: "OPEN_PR result", expected_inputs: { pr_url: "string" } } },
        ],
        on_resume: [{ emit: "COMPLETED", payload: { status: "failure", summary: "could not open the PR" } }],
      }),
    });
    expect(run).toMatchObject({
      state: "failed",
      attempt: 2,
      reason: "COMPLETED with status failure: could not open the PR",
    });
    const ack = (await sup.runs.events(run.id, { type: "INFO" }))[0]!.event.payload as {
      metadata: { context: unknown };
    };
    expect(ack.metadata.context).toEqual({
      error: { action: "OPEN_PR", message: "no action executor is configured: OPEN_PR was not carried out" },
    });
  });

  it("hands actions and proposals to the sinks once each, applies environment adjustments, and asks the gate", async () => {
    const seen: StoredEvent[] = [];
    const proposals: StoredEvent[] = [];
    const asked: string[] = [];
    const sup = fx.tp.supervisor({
      actions: {
        async onActionRequest({ run, event }) {
          seen.push(event);
          const p = event.event.payload as { blocking: boolean };
          if (p.blocking) void sup.resumeRun(run.id, { inputs: { pr_url: "https://forge.local/pr/1" } });
          return { status: "done" };
        },
      },
      proposals: {
        async onEnvironmentProposal({ event }) {
          proposals.push(event);
        },
      },
      environment: {
        async adjustmentsFor(role) {
          return { preinstall: [`echo ${role} > preinstalled.txt`], env: { EXTRA_FLAG: "on" } };
        },
      },
      gate: gateFrom(async ({ role }) => {
        asked.push(role);
        return { decision: "CONDITIONAL", reasoning: "degraded kernel", conditions: ["diagnostic only"] };
      }),
    });
    const run = await sup.startRun({
      role: "Builder",
      command: fx.tp.sprite("sinks", {
        steps: [
          { sh: "echo $EXTRA_FLAG > flag.txt; echo $LATTICE_RUN_CONDITIONS > cond.txt" },
          { event: SPEC_EVENTS.postComment },
          { event: SPEC_EVENTS.proposal },
          { event: SPEC_EVENTS.openPr },
          { waiting: { reason: "OPEN_PR", expected_inputs: { pr_url: "string" } } },
        ],
        on_resume: [{ emit: "COMPLETED", payload: { status: "success" } }],
      }),
    });
    expect(run.state).toBe("succeeded");
    expect(seen.map((x) => (x.event.payload as { action: string }).action)).toEqual(["POST_COMMENT", "OPEN_PR"]);
    expect(proposals.length).toBe(1);
    expect(asked).toEqual(["Builder"]);
    expect(run.gate).toEqual({
      decision: "CONDITIONAL",
      reasoning: "degraded kernel",
      conditions: ["diagnostic only"],
    });
    expect(readFileSync(join(run.workspace, "preinstalled.txt"), "utf8").trim()).toBe("Builder");
    expect(readFileSync(join(run.workspace, "flag.txt"), "utf8").trim()).toBe("on");
    expect(readFileSync(join(run.workspace, "cond.txt"), "utf8").trim()).toBe('["diagnostic only"]');
    expect(
      (await sup.runs.events(run.id, { type: "ACTION_REQUEST" })).every((x) => x.dispatch?.status === "done"),
    ).toBe(true);
  });

  it("a DENY from the gate starts no run and leaves the entry open, recording why", async () => {
    await fx.board.post("Human", { id: "d-1", to: "Builder", kind: "build_request" });
    const sup = fx.tp.supervisor({
      gate: gateFrom(async () => ({ decision: "DENY", reasoning: "kernel BLOCKED", conditions: [] })),
    });
    await expect(sup.startRun({ role: "Builder", entryId: "d-1", command: ["true"] })).rejects.toThrow(
      "the run gate denied a run of Builder for entry d-1: kernel BLOCKED",
    );
    expect(await sup.runs.list()).toEqual([]);
    expect((await fx.board.get("d-1")).entry.status).toBe("open");
    expect(await sup.runs.lastGateDecision("d-1")).toMatchObject({
      decision: "DENY",
      reasoning: "kernel BLOCKED",
      entry_version: 1,
    });
  });

  it("refuses bad requests with messages that say what to fix", async () => {
    await fx.board.post("Human", { id: "r-1", to: "Reviewer", kind: "review_request" });
    const sup = fx.tp.supervisor();
    await expect(sup.startRun({ role: "Nobody", command: ["true"] })).rejects.toThrow(
      'role "Nobody" is not configured in any lane (configured roles: Builder, Reviewer)',
    );
    await expect(sup.startRun({ role: "Builder" })).rejects.toThrow(
      "role Builder has no runner.command or runner.agent in pmagent.config.json: configure one or pass the command after --",
    );
    await expect(sup.startRun({ role: "Builder", entryId: "r-1", command: ["true"] })).rejects.toThrow(
      "entry r-1 is addressed to Reviewer, not Builder: run it with --role Reviewer",
    );
    await expect(sup.startRun({ role: "Builder", entryId: "nope", command: ["true"] })).rejects.toThrow(
      "entry nope does not exist in project demo",
    );
    await expect(sup.startRun({ role: "Builder", workspace: "../outside", command: ["true"] })).rejects.toThrow(
      /--workspace "..\/outside" is outside/,
    );
    await expect(sup.resumeRun("run_missing", { inputs: {} })).rejects.toThrow(
      "run run_missing does not exist in project demo",
    );
  });
});
