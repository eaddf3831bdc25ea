import { describe, expect, it } from "vitest";
import { Worker, type RunRecord } from "../../../src/lattice/index.js";
import { availableStoreKinds } from "../../helpers/stores.js";
import { useSupervisorFixture } from "../../helpers/supervisor-fixture.js";

const kinds = await availableStoreKinds();

describe.each(kinds)("resumes queued for any worker, on $name", (kind) => {
  const fx = useSupervisorFixture(kind);

  async function waitingRun(): Promise<RunRecord> {
    const run = await fx.tp.supervisor().startRun({
      role: "Builder",
      command: fx.tp.sprite("queued", {
        steps: [{ waiting: { reason: "pick", expected_inputs: { n: "integer" } } }],
        on_resume: [{ sh: "cat .lattice/resume.json" }, { emit: "COMPLETED", payload: { status: "success" } }],
      }),
    });
    expect(run.state).toBe("waiting");
    return run;
  }

  it("records checked inputs; a worker of the role takes the resume, once, and carries it out", async () => {
    const waiting = await waitingRun();
    const sup = fx.tp.supervisor();
    expect(
      await sup.queueResume(waiting.id, { inputs: { n: 7 }, context: { note: "from the console" } }),
    ).toMatchObject({ noop: false });
    // The same again is a no-op; other inputs are refused while one is queued.
    expect(
      await sup.queueResume(waiting.id, { inputs: { n: 7 }, context: { note: "from the console" } }),
    ).toMatchObject({ noop: true });
    await expect(sup.queueResume(waiting.id, { inputs: { n: 8 } })).rejects.toMatchObject({
      code: "resume_queued",
      message: `run ${waiting.id} has a resume queued already, with other inputs ({"n":7}): a worker of Builder will carry it out`,
    });
    expect((await sup.runs.get(waiting.id)).state).toBe("waiting");

    const runs: RunRecord[] = [];
    const started: string[] = [];
    // Two workers of the role look at once: one resumes the run, the other finds nothing. (They
    // share this process's supervisor, as workers of one process do; workers of two processes are
    // in test/machines.)
    const shared = fx.tp.supervisor();
    await Promise.all(
      ["w-1", "w-2"].map((id) =>
        new Worker({
          supervisor: shared,
          roles: ["Builder"],
          id,
          once: true,
          onStarted: (run) => started.push(run),
          onRun: (r) => runs.push(r),
        }).run(new AbortController().signal),
      ),
    );
    expect(started).toEqual([waiting.id]);
    expect(runs.map((r) => [r.id, r.state, r.attempt])).toEqual([[waiting.id, "succeeded", 2]]);
    const resumeFile = (await sup.runs.logs(waiting.id, { stream: "stdout" })).map((l) => l.text).join("\n");
    expect(JSON.parse(resumeFile.slice(resumeFile.indexOf("{"), resumeFile.lastIndexOf("}") + 1))).toMatchObject({
      inputs: { n: 7 },
      context: { note: "from the console" },
    });
    expect(await sup.runs.queuedResume(waiting.id)).toBeUndefined();
  });

  it("a resume given directly carries out the queued one's place: the queue is left empty", async () => {
    const waiting = await waitingRun();
    const sup = fx.tp.supervisor();
    await sup.queueResume(waiting.id, { inputs: { n: 1 } });
    expect((await (await sup.resumeRun(waiting.id, { inputs: { n: 2 } })).finished).state).toBe("succeeded");
    expect(await sup.runs.queuedResume(waiting.id)).toBeUndefined();
    expect(await sup.takeQueuedResume(["Builder"])).toBeUndefined();
  });

  it("refuses inputs that do not match the run's expected_inputs, and a run that is not waiting, with the reason", async () => {
    const waiting = await waitingRun();
    const sup = fx.tp.supervisor();
    await expect(sup.queueResume(waiting.id, { inputs: { n: "seven" } })).rejects.toMatchObject({
      code: "invalid_resume_inputs",
      message:
        "resume inputs do not match the WAITING event's expected_inputs:\n  inputs.n: expected integer, got string",
    });
    await expect(sup.queueResume(waiting.id, { inputs: {} })).rejects.toMatchObject({
      code: "invalid_resume_inputs",
      message: expect.stringContaining("inputs.n: missing (expected integer)"),
    });
    expect(await sup.runs.queuedResume(waiting.id)).toBeUndefined();
    await sup.cancel(waiting.id, "not needed");
    await expect(sup.queueResume(waiting.id, { inputs: { n: 1 } })).rejects.toMatchObject({
      code: "run_not_waiting",
      message: `run ${waiting.id} is canceled, not waiting: only a waiting run can be resumed`,
    });
  });
});
