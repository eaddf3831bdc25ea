import { describe, expect, it } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Worker, WORKER_STOPPED, followRunEvents, gateFrom, type RunRecord } from "../../../src/lattice/index.js";
import { availableStoreKinds } from "../../helpers/stores.js";
import { useSupervisorFixture } from "../../helpers/supervisor-fixture.js";

const kinds = await availableStoreKinds();

describe.each(kinds)("worker on $name", (kind) => {
  const fx = useSupervisorFixture(kind);

  function useRunner(scenario: unknown): void {
    fx.tp.project.config.lanes[0]!.roles[0]!.runner = {
      command: fx.tp.sprite("runner", scenario),
      env: {},
      timeout_s: 120,
    };
  }

  it("claims open entries for its role oldest first, runs the configured command, and moves the lane on", async () => {
    useRunner({
      steps: [
        { emit: "PHASE_STARTED", payload: { phase: "build" } },
        { emit: "ARTIFACT", payload: { kind: "file", ref: "out.txt" } },
        { emit: "COMPLETED", payload: { status: "success" } },
      ],
    });
    await fx.board.post("Human", { id: "a", to: "Builder", kind: "build_request", created_at: "2026-01-01T00:00:00Z" });
    await fx.board.post("Human", { id: "b", to: "Builder", kind: "build_request", created_at: "2026-01-02T00:00:00Z" });
    await fx.board.post("Human", { id: "other-kind", to: "Builder", kind: "unrelated" });
    const runs: RunRecord[] = [];
    const worker = new Worker({
      supervisor: fx.tp.supervisor(),
      roles: ["Builder"],
      id: "w1",
      once: true,
      onRun: (r) => runs.push(r),
    });
    await worker.run(new AbortController().signal);
    expect(runs.map((r) => [r.entry_id, r.state, r.worker])).toEqual([
      ["a", "succeeded", "w1"],
      ["b", "succeeded", "w1"],
    ]);
    expect((await fx.board.get("a")).entry.status).toBe("done");
    expect((await fx.board.get("b-review")).entry).toMatchObject({ to: "Reviewer", status: "open" });
    expect((await fx.board.get("other-kind")).entry.status).toBe("open");
    const claims = (await fx.board.history("a")).map((h) => h.action);
    expect(claims).toEqual(["post", "claim", "status"]);
  });

  it("without a gate, takes over an entry whose claimer's lease expired", async () => {
    useRunner({ steps: [{ emit: "COMPLETED", payload: { status: "success" } }] });
    await fx.board.post("Human", { id: "stale", to: "Builder", kind: "build_request" });
    // A claimer that died: its 1 ms lease has run out by the worker's clock, a second on (no waiting).
    expect(await fx.board.claim("gone", "Builder", ["build_request"], 1)).toMatchObject({ claimed_by: "gone" });
    const runs: RunRecord[] = [];
    const worker = new Worker({
      supervisor: fx.tp.supervisor(undefined, { clock: () => Date.now() + 1_000 }),
      roles: ["Builder"],
      id: "w2",
      once: true,
      onRun: (r) => runs.push(r),
    });
    await worker.run(new AbortController().signal);
    expect(runs.map((r) => [r.entry_id, r.state, r.worker])).toEqual([["stale", "succeeded", "w2"]]);
    expect((await fx.board.history("stale")).map((h) => [h.action, h.changes])).toEqual([
      ["post", expect.anything()],
      ["claim", expect.anything()],
      ["takeover", { claimed_by: { from: "gone", to: "w2" } }],
      [
        "status",
        {
          status: { from: "in_progress", to: "done" },
          note: { from: null, to: expect.stringMatching(/^run run_.* succeeded$/) },
        },
      ],
    ]);
  });

  it("asks the gate before claiming: a denied entry stays open with the reason recorded, the next one runs", async () => {
    useRunner({ steps: [{ emit: "COMPLETED", payload: { status: "success" } }] });
    await fx.board.post("Human", {
      id: "blocked",
      to: "Builder",
      kind: "build_request",
      created_at: "2026-01-01T00:00:00Z",
      payload: { risky: true },
    });
    await fx.board.post("Human", {
      id: "fine",
      to: "Builder",
      kind: "build_request",
      created_at: "2026-01-02T00:00:00Z",
    });
    let asked = 0;
    const gate = gateFrom(async ({ entry }) => {
      asked++;
      return entry?.payload.risky
        ? { decision: "DENY", reasoning: "risky work while DEGRADED", conditions: [] }
        : { decision: "ALLOW", reasoning: "", conditions: [] };
    });
    const runs: RunRecord[] = [];
    const worker = new Worker({
      supervisor: fx.tp.supervisor({ gate }),
      roles: ["Builder"],
      once: true,
      onRun: (r) => runs.push(r),
    });
    await worker.run(new AbortController().signal);
    expect(runs.map((r) => r.entry_id)).toEqual(["fine"]);
    expect((await fx.board.get("blocked")).entry.status).toBe("open");
    expect(await fx.tp.supervisor().runs.lastGateDecision("blocked")).toMatchObject({
      decision: "DENY",
      reasoning: "risky work while DEGRADED",
    });
    // Asked once per entry: the recorded DENY is not asked again while the entry is unchanged.
    expect(asked).toBe(2);
  });

  it("with a gate, reads the backlog past a first page of candidates that are all denied or not its kind", async () => {
    useRunner({ steps: [{ emit: "COMPLETED", payload: { status: "success" } }] });
    const day = (i: number) => new Date(Date.parse("2026-01-01T00:00:00Z") + i * 60_000).toISOString();
    // 40 entries older than the one that may run: some of another kind, the rest denied by the gate.
    for (let i = 0; i < 40; i++) {
      await fx.board.post("Human", {
        id: `old-${i}`,
        to: "Builder",
        kind: i % 2 ? "unrelated" : "build_request",
        created_at: day(i),
        payload: { risky: true },
      });
    }
    await fx.board.post("Human", { id: "allowed", to: "Builder", kind: "build_request", created_at: day(41) });
    const gate = gateFrom(async ({ entry }) =>
      entry?.payload.risky
        ? { decision: "DENY", reasoning: "risky", conditions: [] }
        : { decision: "ALLOW", reasoning: "", conditions: [] },
    );
    const runs: RunRecord[] = [];
    const worker = new Worker({
      supervisor: fx.tp.supervisor({ gate }),
      roles: ["Builder"],
      once: true,
      onRun: (r) => runs.push(r),
    });
    await worker.run(new AbortController().signal);
    expect(runs.map((r) => r.entry_id)).toEqual(["allowed"]);
    expect((await fx.board.list({ status: "open", to: "Builder" })).length).toBe(40);
  });

  it("stops cleanly on abort: the sprite is stopped, the run canceled, the entry left for another worker", async () => {
    useRunner({ steps: [{ emit: "PHASE_STARTED", payload: { phase: "long" } }, { sleep: 60_000 }] });
    await fx.board.post("Human", { id: "long", to: "Builder", kind: "build_request" });
    const stop = new AbortController();
    const sup = fx.tp.supervisor();
    let started!: (runId: string) => void;
    const runId = new Promise<string>((resolve) => (started = resolve));
    const worker = new Worker({ supervisor: sup, roles: ["Builder"], pollMs: 50, onStarted: (id) => started(id) });
    const running = worker.run(stop.signal);
    // Stop once the run has stored its first event: followed as it is stored, not polled for.
    for await (const events of followRunEvents(sup.runs, await runId, {})) if (events.length > 0) break;
    stop.abort();
    await running;
    const [run] = await sup.runs.list();
    expect(run).toMatchObject({ state: "canceled", reason: WORKER_STOPPED });
    expect((await fx.board.get("long")).entry.status).toBe("in_progress");
  });

  it("with concurrency N runs N entries at once in one process, each claimed once", async () => {
    // A barrier the sprites share (unsandboxed): each marks itself and waits for the other two,
    // so the runs can all succeed only when all three run at the same time.
    const barrier = mkdtempSync(join(tmpdir(), "pmagent-barrier-"));
    fx.tp.project.config.sandbox = "off";
    const wait = `touch ${barrier}/$LATTICE_RUN_ID; i=0; while [ "$(ls ${barrier} | wc -l)" -lt 3 ]; do i=$((i+1)); [ $i -gt 600 ] && exit 1; sleep 0.05; done`;
    useRunner({ steps: [{ sh: wait }, { emit: "COMPLETED", payload: { status: "success" } }] });
    for (const id of ["c1", "c2", "c3"]) await fx.board.post("Human", { id, to: "Builder", kind: "build_request" });
    const runs: RunRecord[] = [];
    const worker = new Worker({
      supervisor: fx.tp.supervisor(),
      roles: ["Builder"],
      id: "wide",
      once: true,
      concurrency: 3,
      onRun: (r) => runs.push(r),
    });
    expect(worker.concurrency).toBe(3);
    try {
      await worker.run(new AbortController().signal);
    } finally {
      rmSync(barrier, { recursive: true, force: true });
    }
    expect(runs.map((r) => [r.entry_id, r.state]).sort()).toEqual([
      ["c1", "succeeded"],
      ["c2", "succeeded"],
      ["c3", "succeeded"],
    ]);
    for (const id of ["c1", "c2", "c3"])
      expect((await fx.board.history(id)).filter((h) => h.action === "claim")).toHaveLength(1);
  });

  it("two supervisors syncing one finished run at once (a worker's reconcile beside another's): the entry is moved once, neither fails", async () => {
    useRunner({ steps: [{ emit: "COMPLETED", payload: { status: "success" } }] });
    await fx.board.post("Human", { id: "twice", to: "Builder", kind: "build_request" });
    expect(await fx.board.claim("w", "Builder", ["build_request"])).toMatchObject({ claimed_by: "w" });
    const run = await fx.tp.supervisor().startRun({ role: "Builder", entryId: "twice", worker: "w" });
    expect(run.state).toBe("succeeded");
    // As the run stood before its supervisor synced its entry.
    await fx.ts.store.run("UPDATE lattice_runs SET entry_synced = 0 WHERE id = ?", [run.id]);
    await fx.ts.store.run(
      "UPDATE bb_entries SET status = 'in_progress', claimed_by = 'w' WHERE project_id = 'demo' AND id = 'twice'",
    );
    await Promise.all([fx.tp.supervisor().reconcile(), fx.tp.supervisor().reconcile()]);
    expect((await fx.board.get("twice")).entry.status).toBe("done");
    expect((await fx.board.history("twice")).filter((h) => h.to_status === "done")).toHaveLength(2);
    expect((await fx.tp.supervisor().runs.get(run.id)).entry_synced).toBe(true);
  });

  it("refuses a concurrency that is not a whole number of at least 1", () => {
    for (const concurrency of [0, -2, 1.5]) {
      expect(() => new Worker({ supervisor: fx.tp.supervisor(), roles: ["Builder"], concurrency })).toThrow(
        `a worker's concurrency must be a whole number of at least 1, got ${concurrency}`,
      );
    }
  });

  it("refuses an unknown role up front", () => {
    expect(() => new Worker({ supervisor: fx.tp.supervisor(), roles: ["Ghost"] })).toThrow(
      'role "Ghost" is not configured in any lane (configured roles: Builder, Reviewer)',
    );
  });
});
