/**
 * Chaos: while a sprite writes its events in bulks, the `pmagent run` supervisor's PostgreSQL
 * connections are killed (pg_terminate_backend) each time one is storing events, again once the
 * run's saved position has moved on. Each flush cut off is stored again from the last commit:
 * the run succeeds, its stored events are its outbox's, each once, and its saved position never
 * passes an event not stored. (A run the faults outlasted would be left for `pmagent runs
 * reconcile`, which is run after it either way.)
 */
import { describe, expect, it, vi } from "vitest";
import pg from "pg";
import { RunStore } from "../../src/lattice/index.js";
import { runCli } from "../helpers/proc.js";
import { openPostgresTestStore, PG_URL, postgresAvailable } from "../helpers/stores.js";
import { testProject } from "../lattice/helpers.js";
import { bulkSteps, eventProblems } from "./store-faults.js";

const ROUNDS = 12;
const SIZE = 250;

describe.skipIf(!(await postgresAvailable()))("chaos: the supervisor's PostgreSQL connections killed mid-run", () => {
  it(
    "stores every outbox event exactly once, each flush cut off stored again from the last commit",
    { timeout: 120_000 },
    async () => {
      const ts = await openPostgresTestStore();
      const tp = testProject(ts, { sandbox: "off" });
      const killer = new pg.Client({ connectionString: PG_URL });
      await killer.connect();
      // The supervisor's connections are told apart by their application_name (the pg client reads PGAPPNAME).
      const app = `pmagent-chaos-${ts.env.PMAGENT_DATABASE_SCHEMA}`;
      const options = { cwd: tp.root, env: { ...process.env, ...ts.env, PGAPPNAME: app } };
      const runs = new RunStore(ts.store, "demo");
      try {
        let exited = false;
        const ran = runCli(
          ["run", "--role", "Builder", "--", ...tp.sprite("bulks", { steps: bulkSteps(ROUNDS, SIZE, { sleep: 30 }) })],
          options,
        ).finally(() => (exited = true));
        // Killing starts once the run is followed (its first events are stored).
        await vi.waitFor(async () => expect((await runs.list())[0]?.event_count ?? 0).toBeGreaterThan(0), {
          timeout: 60_000,
          interval: 10,
        });
        const [run] = await runs.list();
        const saved = async () => (await runs.get(run!.id, ts.store, false)).outbox.offset;
        let kills = 0;
        while (!exited) {
          const killed = await killer.query<{ killed: boolean }>(
            `SELECT pg_terminate_backend(pid) AS killed FROM pg_stat_activity WHERE application_name = $1 AND state <> 'idle' AND query LIKE 'INSERT INTO lattice_run_events%'`,
            [app],
          );
          if (!killed.rows.some((r) => r.killed)) continue;
          kills++;
          // The next kill once the flush cut off was stored (or the run is over).
          const at = await saved();
          await vi.waitFor(async () => expect(exited || (await saved()) > at).toBe(true), {
            timeout: 60_000,
            interval: 5,
          });
        }
        const first = await ran;
        const reconciled = await runCli(["runs", "reconcile"], { cwd: tp.root, env: { ...process.env, ...ts.env } });
        const done = await runs.get(run!.id);
        const why = `${kills} kills; run: ${first.stdout}${first.stderr}; reconcile: ${reconciled.stdout}${reconciled.stderr}`;
        expect(await eventProblems(runs, done), why).toEqual([]);
        expect(done.state, why).toBe("succeeded");
        expect(done.event_count).toBe(ROUNDS * SIZE + 1);
        expect(kills, why).toBeGreaterThan(0);
        // Each cut-off flush was tried again by the supervisor itself: nothing was left for reconcile.
        expect(first.code, why).toBe(0);
      } finally {
        await killer.end();
        await ts.cleanup();
        tp.cleanup();
      }
    },
  );
});
