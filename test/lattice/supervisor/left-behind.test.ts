/**
 * What a sprite leaves running when its own process ends (a child it started; in the sandbox, the
 * sandboxed command bwrap's parent-death signal has not reached yet) is stopped before the run's
 * output is read to the end: nothing it writes to the outbox afterwards goes unstored.
 */
import { describe, expect, it } from "vitest";
import { findSandboxTool, processesOfRun, signalProcess } from "../../../src/lattice/sandbox/index.js";
import { RunStore } from "../../../src/lattice/index.js";
import { openSqliteTestStore } from "../../helpers/stores.js";
import { useSupervisorFixture } from "../../helpers/supervisor-fixture.js";
import { crashTrial, lostOrDoubled, outboxAndStored } from "../harness.js";

const bwrap = findSandboxTool("auto", process.env.PATH ?? "").bwrap !== null;
const modes = [{ sandbox: "off" }, ...(bwrap ? [{ sandbox: "required" }] : [])];

/** An INFO event line with `message` (printf's %d the counter `$i`), appended to the outbox. */
const info = (message: string) =>
  `printf '{"protocol_version":"v1","event_type":"INFO","sprite_id":"%s","work_item_id":"%s","timestamp":"%s","payload":{"message":"${message}"}}\\n' ` +
  `"$LATTICE_SPRITE_ID" "$LATTICE_WORK_ITEM_ID" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" $i >> .lattice/outbox.jsonl`;
/** A background child writing INFO events to the outbox until it is stopped; on SIGTERM it writes one more and exits. */
const WRITER =
  `( i=0; trap '${info("left behind, stopped after %d").replaceAll("'", "'\\''")}; exit 0' TERM; ` +
  `while :; do i=$((i+1)); ${info("left behind %d")}; sleep 0.01; done ) </dev/null >/dev/null 2>&1 &`;
/** The sprite goes on once the writer has written `n` events (its own poll: the test waits on no timer). */
const writerWrote = (n: number) =>
  `until [ "$(grep -c 'left behind' .lattice/outbox.jsonl 2>/dev/null)" -ge ${n} ]; do sleep 0.01; done`;

/** A sprite that starts the writer, completes once it wrote `n` events, and leaves it running. */
const leavesWriter = (n: number) => ({
  steps: [
    { sh: WRITER },
    { sh: writerWrote(n) },
    { emit: "COMPLETED", payload: { status: "success", summary: "done; a writer left running" } },
  ],
});

/** Clean-up after a failed assertion: whatever of the run still runs (a process may end meanwhile). */
function killAll(runId: string): void {
  for (const { pid } of processesOfRun(runId)) signalProcess(pid, "SIGKILL");
}

describe.each(modes)("processes a sprite leaves behind (sandbox $sandbox)", ({ sandbox }) => {
  const fx = useSupervisorFixture(() => openSqliteTestStore(), { config: { sandbox } });

  it("are stopped when the sprite's process ends, before its output is drained: every outbox event stored", async () => {
    await fx.board.post("Human", { id: "lb-1", to: "Builder", kind: "build_request" });
    const sup = fx.tp.supervisor();
    const run = await sup.startRun({
      role: "Builder",
      entryId: "lb-1",
      command: fx.tp.sprite("leaves", leavesWriter(3)),
    });
    try {
      expect(processesOfRun(run.id)).toEqual([]);
      const result = await outboxAndStored(new RunStore(fx.ts.store, "demo"), [run]);
      expect(lostOrDoubled({ ...result, restart: "" })).toEqual([]);
      expect(result.outbox.get(run.id)!.length).toBeGreaterThanOrEqual(4);
      // Stopped as a group is (SIGTERM first), the writer's last words are stored too. In the
      // sandbox the kernel ends it (SIGKILL) with the pid namespace, once the sprite's command exits.
      const messages = result.stored.get(run.id)!.map((e) => (e.event.payload as { message?: string }).message);
      expect(messages.filter((m) => m?.startsWith("left behind, stopped after"))).toHaveLength(
        sandbox === "off" ? 1 : 0,
      );
      expect(run.state).toBe("succeeded");
    } finally {
      killAll(run.id);
    }
  });

  it("are stopped by the reconcile that took the run over after the supervisor was killed", async () => {
    await fx.board.post("Human", { id: "lb-2", to: "Builder", kind: "build_request" });
    const runs = new RunStore(fx.ts.store, "demo");
    const result = await crashTrial({
      root: fx.tp.root,
      projectId: "demo",
      store: fx.ts.store,
      storeEnv: fx.ts.env,
      restart: () => fx.tp.supervisor(),
      role: "Builder",
      entryId: "lb-2",
      command: fx.tp.sprite("crashes", leavesWriter(30)),
      // Killed while the sprite waits for its writer. Unsandboxed, the sprite lives on and the
      // reconcile follows it to its end; in the sandbox, bwrap --die-with-parent ends it with the
      // supervisor, and the command inside bwrap dies a moment after bwrap itself.
      kill: { afterOutboxLines: 3, jitterMs: 0 },
    });
    try {
      expect(result.runs.map((r) => r.state)).toEqual(sandbox === "off" ? ["succeeded"] : [expect.any(String)]);
      expect(processesOfRun(result.runs[0]!.id)).toEqual([]);
      // Read again now that nothing of the run runs: the outbox is what was stored.
      expect(lostOrDoubled({ ...(await outboxAndStored(runs, result.runs)), restart: result.restart })).toEqual([]);
    } finally {
      for (const run of result.runs) killAll(run.id);
    }
  });
});
