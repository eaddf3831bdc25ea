/**
 * Chaos: the SQLite file is on a disk that fills mid-run (a 1 MB tmpfs of its own). `pmagent run`
 * stores the sprite's first events, then fails to store a bulk that does not fit. It tries again,
 * from the last commit, while the sprite runs: when the space comes back meanwhile, everything is
 * stored by the run itself. When it does not, the run is left unfinished with its saved outbox
 * position after the last events it stored (no hole below it), saying "disk full"; a reconcile
 * while the disk is still full leaves it so again (exit 1), and once the disk has room
 * `pmagent runs reconcile` stores the rest. Either way the run's stored events are
 * its outbox's, each once.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { RunStore, type RunRecord } from "../../src/lattice/index.js";
import { SqliteStore } from "../../src/store/index.js";
import { testProject, type TestProject } from "../lattice/helpers.js";
import { COMPLETED_STEP, eventProblems, smallDisk, type SmallDisk, type Started } from "./store-faults.js";

/** Stored before the disk fills; then one bulk that does not fit in what is left of 1 MB. */
const FIRST = 100;
const BULK = 3000;
const RETRYING = "storing the run's events failed; trying again";

describe("chaos: the SQLite file's disk fills mid-run", () => {
  let tp: TestProject;
  beforeAll(() => {
    tp = testProject(null, { sandbox: "off" });
  });
  afterAll(() => tp?.cleanup());

  /** The run on `disk` (its store as it is now), and what is wrong with its events. */
  const runOn = async (disk: SmallDisk): Promise<{ run: RunRecord; problems: string[] }> => {
    const store = new SqliteStore(await disk.copyOut(join(disk.dir, "pmagent.db")));
    try {
      const runs = new RunStore(store, "demo");
      const [run] = await runs.list();
      return { run: run!, problems: await eventProblems(runs, run!) };
    } finally {
      await store.close();
    }
  };
  const options = (disk: SmallDisk) => ({
    cwd: tp.root,
    env: { ...process.env, PMAGENT_SQLITE_PATH: join(disk.dir, "pmagent.db") },
  });
  /**
   * `pmagent run` of a sprite that writes FIRST events, waits for `bulk()`, writes BULK more,
   * waits for `complete()`, and completes. `release` lets it run to its end (a failed test leaves no sprite waiting).
   */
  const runFiller = (
    disk: SmallDisk,
    name: string,
  ): Started & { bulk(): void; complete(): void; release(): Promise<unknown> } => {
    const files = { bulk: join(tp.root, `${name}.bulk`), complete: join(tp.root, `${name}.complete`) };
    const wait = (file: string) => ({ sh: `while [ ! -e ${file} ]; do sleep 0.01; done` });
    const steps = [{ bulk: FIRST }, wait(files.bulk), { bulk: BULK }, wait(files.complete), COMPLETED_STEP];
    const ran = disk.pmagent(["run", "--role", "Builder", "--", ...tp.sprite(name, { steps })], options(disk));
    const bulk = () => writeFileSync(files.bulk, "");
    const complete = () => writeFileSync(files.complete, "");
    return { ...ran, bulk, complete, release: () => (bulk(), complete(), ran.done) };
  };
  /** Resolves once the run has stored its first FIRST events (read with `pmagent runs list`). */
  const firstStored = async (disk: SmallDisk, ran: Started) => {
    const early = ran.done.then((r) =>
      Promise.reject(new Error(`pmagent run exited before the disk filled: ${JSON.stringify(r)}`)),
    );
    early.catch(() => undefined);
    const stored = vi.waitFor(
      async () => {
        const list = await disk.pmagent(["runs", "list", "--format", "json"], options(disk)).done;
        expect((JSON.parse(list.stdout || "{}") as { items?: RunRecord[] }).items?.[0]?.event_count).toBe(FIRST);
      },
      { timeout: 60_000, interval: 50 },
    );
    await Promise.race([stored, early]);
  };

  it(
    "says so, saves no position past what it stored, and reconcile stores the rest once there is room: each event once, no hole",
    { timeout: 120_000 },
    async () => {
      const disk = await smallDisk("1m");
      const ran = runFiller(disk, "left");
      try {
        await firstStored(disk, ran);
        ran.bulk();
        ran.complete();
        const first = await ran.done;
        const left = await runOn(disk);
        expect(left.problems, first.stdout + first.stderr).toEqual([]);
        expect(left.run.reason).toMatch(
          /^disk full while storing events: database or disk is full; the events before outbox line \d+ are stored: once the fault clears, `pmagent runs reconcile` stores the rest$/,
        );
        expect(first.code).toBe(1);
        expect(first.stdout).toContain("disk full while storing events");
        expect(first.stderr).toContain(RETRYING);
        // Left for reconcile: unfinished, no supervisor; everything before its saved position stored, not the bulk.
        expect(left.run.state).toBe("running");
        expect(left.run.supervisor_pid).toBeNull();
        expect(left.run.event_count).toBeGreaterThanOrEqual(FIRST);
        expect(left.run.event_count).toBeLessThan(FIRST + BULK + 1);

        // Reconciled while the disk is still full: left again, saying so.
        const tooSoon = await disk.pmagent(["runs", "reconcile"], options(disk)).done;
        expect(tooSoon.code, tooSoon.stdout + tooSoon.stderr).toBe(1);
        expect(tooSoon.stdout).toContain(`${left.run.id}  running  Builder`);
        expect(tooSoon.stdout).toContain("disk full while storing events");
        expect((await runOn(disk)).problems).toEqual([]);

        await disk.grow("64m");
        const reconciled = await disk.pmagent(["runs", "reconcile"], options(disk)).done;
        expect(reconciled.code, reconciled.stdout + reconciled.stderr).toBe(0);
        const done = await runOn(disk);
        expect(done.run.state, done.run.reason ?? "").toBe("succeeded");
        expect(done.problems).toEqual([]);
        expect(done.run.event_count).toBe(FIRST + BULK + 1);
      } finally {
        await ran.release();
        await disk.close();
      }
    },
  );

  it(
    "tries again while the sprite runs: the space comes back and the run stores everything itself, each event once",
    { timeout: 120_000 },
    async () => {
      const disk = await smallDisk("1m");
      const ran = runFiller(disk, "back");
      try {
        await firstStored(disk, ran);
        ran.bulk();
        // The bulk did not fit; the supervisor says it tries again. The space comes back, the sprite goes on.
        await ran.saysOnStderr(RETRYING);
        await disk.grow("64m");
        ran.complete();
        const first = await ran.done;
        expect(first.code, first.stdout + first.stderr).toBe(0);
        const done = await runOn(disk);
        expect(done.run.state).toBe("succeeded");
        expect(done.problems).toEqual([]);
        expect(done.run.event_count).toBe(FIRST + BULK + 1);
      } finally {
        await ran.release();
        await disk.close();
      }
    },
  );
});
