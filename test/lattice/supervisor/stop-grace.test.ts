/**
 * A stopped sprite gets SIGTERM before SIGKILL, in the sandbox too: an agent can save its work and
 * say why it stopped. (In the sandbox the group's SIGTERM ended bwrap, and with it the command by
 * bwrap's parent-death SIGKILL, before the command saw any signal.)
 */
import { describe, expect, it } from "vitest";
import { findSandboxTool, killGroup, processAlive } from "../../../src/lattice/sandbox/index.js";
import { openSqliteTestStore } from "../../helpers/stores.js";
import { useSupervisorFixture } from "../../helpers/supervisor-fixture.js";
import { runCli } from "../../helpers/proc.js";
import { RunStore, type RunRecord } from "../../../src/lattice/index.js";
import { setTimeout as sleep } from "node:timers/promises";
import { outboxReaches } from "../harness.js";

const bwrap = findSandboxTool("auto", process.env.PATH ?? "").bwrap !== null;
const modes = [{ sandbox: "off" }, ...(bwrap ? [{ sandbox: "required" }] : [])];

/** Reports usage over the run's budget (which stops it), then waits; on SIGTERM it writes ERROR and exits 3. */
const SPRITE = [
  `ev() { printf '{"protocol_version":"v1","event_type":"%s","sprite_id":"%s","work_item_id":"%s","timestamp":"%s","payload":%s}\\n' "$1" "$LATTICE_SPRITE_ID" "$LATTICE_WORK_ITEM_ID" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$2" >> "$LATTICE_OUTBOX"; }`,
  `mkdir -p "$(dirname "$LATTICE_OUTBOX")"`,
  `trap 'ev ERROR "{\\"message\\":\\"stopped by the supervisor; work saved\\"}"; exit 3' TERM`,
  `ev INFO '{"message":"5000 in, 0 out","kind":"token_usage","metadata":{"model":"m","input_tokens":5000,"output_tokens":0}}'`,
  `while :; do sleep 0.05; done`,
].join("\n");

/** Ignores SIGTERM (says so, and waits on); only the SIGKILL after the grace period ends it. */
const STUBBORN = [
  SPRITE.split("\n")[0],
  SPRITE.split("\n")[1],
  `trap 'ev INFO "{\\"message\\":\\"SIGTERM ignored\\"}"' TERM`,
  `ev INFO '{"message":"ready"}'`,
  `while :; do sleep 0.05; done`,
].join("\n");

/**
 * The project's one run, once its sprite's pid is stored: the sprite may write before the
 * supervisor has stored it, and a cancel finds the sprite by it.
 */
async function spriteRecorded(runs: RunStore): Promise<RunRecord> {
  for (;;) {
    const [run] = await runs.list();
    if (run?.sprite_pid) return run;
    await sleep(20);
  }
}

describe.each(modes)("a stopped sprite (sandbox $sandbox)", ({ sandbox }) => {
  const fx = useSupervisorFixture(() => openSqliteTestStore(), { config: { sandbox } });

  it("gets SIGTERM first: the ERROR it writes then is stored", async () => {
    const sup = fx.tp.supervisor();
    const run = await sup.startRun({ role: "Builder", command: ["sh", "-c", SPRITE], budget: { max_tokens: 1000 } });
    expect(run.state).toBe("failed");
    expect(run.reason).toBe("budget exceeded: 5,000 tokens > 1,000; the sprite was stopped");
    const errors = await sup.runs.events(run.id, { type: "ERROR" });
    expect(errors.map((e) => (e.event.payload as { message: string }).message)).toEqual([
      "stopped by the supervisor; work saved",
    ]);
  });

  it("that ignores SIGTERM is killed after the grace period, also when `pmagent runs cancel` (another process) stopped it", async () => {
    const sup = fx.tp.supervisor();
    const ready = outboxReaches(fx.tp.root, 1);
    const finished = sup.startRun({ role: "Builder", command: ["sh", "-c", STUBBORN] });
    await ready.reached;
    const run = await spriteRecorded(new RunStore(fx.ts.store, "demo"));
    const cancel = await runCli(["runs", "cancel", run.id], {
      cwd: fx.tp.root,
      env: { ...process.env, ...fx.ts.env },
    });
    expect(cancel.code).toBe(0);
    const done = await finished;
    expect(done.state).toBe("canceled");
    const messages = (await sup.runs.events(done.id)).map((e) => (e.event.payload as { message: string }).message);
    expect(messages).toEqual(["ready", "SIGTERM ignored"]);
  });

  it("is not signalled by a cancel on another host (its pid is not that host's to signal): canceled, the sprite left to its own", async () => {
    const sup = fx.tp.supervisor();
    const runs = new RunStore(fx.ts.store, "demo");
    const ready = outboxReaches(fx.tp.root, 1);
    const finished = sup.startRun({ role: "Builder", command: ["sh", "-c", STUBBORN] });
    await ready.reached;
    const run = await spriteRecorded(runs);
    // The run as another machine's: a cancel here sees a pid that only names a process there.
    await runs.update(run.id, { place: { ...run, host: "another-machine" } });
    const cancel = await runCli(["runs", "cancel", run.id], {
      cwd: fx.tp.root,
      env: { ...process.env, ...fx.ts.env },
    });
    expect(cancel.code).toBe(0);
    expect((await runs.get(run.id)).state).toBe("canceled");
    expect(processAlive(run.sprite_pid!, run.sprite_started)).toBe(true);
    killGroup(run.sprite_pid!);
    const done = await finished;
    expect((await sup.runs.events(done.id)).map((e) => (e.event.payload as { message: string }).message)).toEqual([
      "ready",
    ]);
  });
});
