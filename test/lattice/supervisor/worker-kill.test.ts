/**
 * One sprite per entry: a `pmagent worker` killed with SIGKILL takes its sprite with it, and a
 * worker that takes an entry over fences the run of a worker that stalled (SIGSTOP): that run is
 * canceled as superseded, its sprite killed, its late output and its finish refused.
 */
import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import Database from "better-sqlite3";
import { join } from "node:path";
import { RunStore, WORKER_DIED, Worker, findSandboxTool, type RunRecord } from "../../../src/lattice/index.js";
import { findSpriteOfRun, processAlive } from "../../../src/lattice/sandbox/processes.js";
import { availableStoreKinds } from "../../helpers/stores.js";
import { expireLease, longSprite, setRunnerOnDisk, startWorker, waitForDeath, waitForFile } from "../harness.js";

/** Resolve once `done()` holds (checked every 10 ms: the processes here are not our children), or fail after 10 s. */
function waitUntil(done: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    const check = () =>
      done()
        ? resolve()
        : Date.now() > deadline
          ? reject(new Error(`not done within ${timeoutMs} ms`))
          : setTimeout(check, 10);
    check();
  });
}
import { useSupervisorFixture } from "../../helpers/supervisor-fixture.js";

/** No other connection holds the SQLite file's write lock now. */
function writable(file: string): boolean {
  const db = new Database(file, { timeout: 0 });
  try {
    db.exec("BEGIN IMMEDIATE");
    db.exec("ROLLBACK");
    return true;
  } catch (err) {
    if ((err as { code?: string }).code !== "SQLITE_BUSY") throw err;
    return false;
  } finally {
    db.close();
  }
}

/**
 * Stop `child` (SIGSTOP) at a moment it holds no SQLite write lock: one stopped inside a write
 * transaction (its ingest flushes the sprite's events all along) would lock every other writer
 * of the file out until it goes on. On PostgreSQL its row locks are not in the test's way.
 */
async function stallOutsideWrite(
  child: { kill(signal: NodeJS.Signals): boolean },
  file: string | undefined,
): Promise<void> {
  for (;;) {
    child.kill("SIGSTOP");
    if (file === undefined || writable(file)) return;
    child.kill("SIGCONT");
    await waitUntil(() => writable(file));
  }
}

const kinds = await availableStoreKinds();

describe.each(kinds)("one sprite per entry on $name", (kind) => {
  const fx = useSupervisorFixture(kind);

  /** A worker in this process that takes the entry over and runs a quick sprite. */
  async function takeOver(id: string): Promise<RunRecord[]> {
    fx.tp.project.config.lanes[0]!.roles[0]!.runner = {
      command: fx.tp.sprite("quick", { steps: [{ emit: "COMPLETED", payload: { status: "success" } }] }),
      env: {},
      timeout_s: 60,
    };
    const runs: RunRecord[] = [];
    await new Worker({
      supervisor: fx.tp.supervisor(),
      roles: ["Builder"],
      id,
      once: true,
      onRun: (r) => runs.push(r),
    }).run(new AbortController().signal);
    return runs;
  }

  it(
    "kills a worker's sprite with the worker (SIGKILL); the next worker starts the entry afresh",
    { timeout: 60_000 },
    async () => {
      // Unsandboxed, the parent-death signal (setpriv) does it; the sandboxed case is below.
      const pidFile = join(fx.tp.root, "sprite.pid");
      setRunnerOnDisk(fx.tp, fx.tp.sprite("long", longSprite(pidFile)), "off");
      await fx.board.post("Human", { id: "e1", to: "Builder", kind: "build_request" });
      const w = startWorker(fx.tp.root, fx.ts.env, ["--role", "Builder", "--worker-id", "w-a"]);
      try {
        await waitForFile(pidFile);
        const pid = Number(readFileSync(pidFile, "utf8"));
        expect(processAlive(pid)).toBe(true);
        w.child.kill("SIGKILL");
        await w.exited;
        // The parent-death signal: the sprite is gone without anyone reconciling.
        await waitForDeath(pid);
      } finally {
        w.child.kill("SIGKILL");
      }
      await expireLease(fx.ts, "e1");
      const runs = await takeOver("w-b");
      expect(runs.map((r) => [r.entry_id, r.state, r.worker])).toEqual([["e1", "succeeded", "w-b"]]);
      const [old] = (await new RunStore(fx.ts.store, "demo").list({ entryId: "e1" })).filter((r) => r.worker === "w-a");
      // Reconciled by the next worker: canceled (its worker died), the entry left for the takeover, not errored.
      expect(old).toMatchObject({ state: "canceled", reason: WORKER_DIED });
      expect((await fx.board.get("e1")).entry.status).toBe("done");
      expect((await fx.board.history("e1")).map((h) => h.action)).toEqual(["post", "claim", "takeover", "status"]);
    },
  );

  it.runIf(findSandboxTool("auto", process.env.PATH ?? "").bwrap !== null)(
    "kills a sandboxed sprite and everything in its sandbox with the worker (bwrap --die-with-parent under setpriv)",
    { timeout: 60_000 },
    async () => {
      // In the sandbox the project root is read-only and pids are the namespace's own: the sprite
      // marks its workspace, and the sandbox's processes are found by the run id in their environment.
      setRunnerOnDisk(fx.tp, fx.tp.sprite("long", longSprite("/workspace/sprite.pid")), "required");
      await fx.board.post("Human", { id: "e3", to: "Builder", kind: "build_request" });
      const w = startWorker(fx.tp.root, fx.ts.env, ["--role", "Builder", "--worker-id", "w-a"]);
      const runStore = new RunStore(fx.ts.store, "demo");
      try {
        const workspace = await new Promise<string>((resolve, reject) => {
          const deadline = Date.now() + 30_000;
          const look = async () => {
            const [run] = await runStore.list({ entryId: "e3" });
            if (run?.workspace) resolve(run.workspace);
            else if (Date.now() > deadline) reject(new Error("no run of e3 within 30 s"));
            else setTimeout(() => void look(), 20);
          };
          void look();
        });
        await waitForFile(join(workspace, "sprite.pid"));
        const [run] = await runStore.list({ entryId: "e3" });
        expect(run!.sprite_pid).not.toBeNull();
        expect(processAlive(run!.sprite_pid!)).toBe(true);
        w.child.kill("SIGKILL");
        await w.exited;
        await waitForDeath(run!.sprite_pid!);
        // Nothing of the sandbox lives on: no process holds the run's id in its environment.
        await waitUntil(() => findSpriteOfRun(run!.id) === null);
      } finally {
        w.child.kill("SIGKILL");
      }
    },
  );

  it(
    "fences the run of a stalled worker on takeover: its sprite is killed, its late events and its finish refused",
    { timeout: 60_000 },
    async () => {
      const pidFile = join(fx.tp.root, "sprite.pid");
      setRunnerOnDisk(fx.tp, fx.tp.sprite("long", longSprite(pidFile, 20)), "off");
      await fx.board.post("Human", { id: "e2", to: "Builder", kind: "build_request" });
      const w = startWorker(fx.tp.root, fx.ts.env, ["--role", "Builder", "--worker-id", "w-a", "--once"]);
      try {
        await waitForFile(pidFile);
        const pid = Number(readFileSync(pidFile, "utf8"));
        // The worker stalls (alive, not heartbeating) while its sprite writes on.
        await stallOutsideWrite(w.child, fx.ts.file);
        await waitForFile(`${pidFile}.busy`);
        const runStore = new RunStore(fx.ts.store, "demo");
        const [old] = await runStore.list({ entryId: "e2" });
        const storedBefore = (await runStore.events(old!.id)).length;

        await expireLease(fx.ts, "e2");
        const runs = await takeOver("w-b");
        expect(runs.map((r) => [r.entry_id, r.state, r.worker])).toEqual([["e2", "succeeded", "w-b"]]);
        await waitForDeath(pid);
        expect(await runStore.get(old!.id)).toMatchObject({
          state: "canceled",
          reason: expect.stringMatching(/^superseded: entry e2 was taken over by w-b/),
        });

        // The stalled worker wakes up: what its sprite wrote meanwhile is refused, and so is its finish.
        w.child.kill("SIGCONT");
        await w.exited;
        const after = await runStore.get(old!.id);
        expect(after).toMatchObject({ state: "canceled", reason: expect.stringMatching(/^superseded: /) });
        expect((await runStore.events(old!.id)).length).toBe(storedBefore);
        expect((await fx.board.get("e2")).entry).toMatchObject({ status: "done" });
        // Only the new run moved the entry on.
        expect((await fx.board.history("e2")).map((h) => h.action)).toEqual(["post", "claim", "takeover", "status"]);
        expect((await fx.board.history("e2"))[3]!.changes).toMatchObject({
          note: { to: `run ${runs[0]!.id} succeeded` },
        });
      } finally {
        w.child.kill("SIGCONT");
        w.child.kill("SIGKILL");
      }
    },
  );
});
