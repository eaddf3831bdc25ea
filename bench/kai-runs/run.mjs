// Kai's runs collector at scale: 200,000 events in 2,000 runs spread over a year (SQLite), read for
// a 7-day window with `collectRuns`, beside the baseline of listing every run with its event count
// (`RunStore.list()`, what a collector without window queries would do) in the same run, with the
// ratio. Run: `npm run build && node bench/kai-runs/run.mjs` (KAI_RUNS_BENCH_RUNS,
// KAI_RUNS_BENCH_EVENTS_PER_RUN, KAI_RUNS_BENCH_REPEAT override the sizes).
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { performance } from "node:perf_hooks";
import {
  ActionStore,
  LocalForge,
  ProposalStore,
  RunStore,
  SqliteStore,
  collectRuns,
  docUpdateLane,
  migrate,
  migrations,
} from "../../dist/index.js";

const RUNS = Number(process.env.KAI_RUNS_BENCH_RUNS ?? 2_000);
const PER_RUN = Number(process.env.KAI_RUNS_BENCH_EVENTS_PER_RUN ?? 100);
const REPEAT = Number(process.env.KAI_RUNS_BENCH_REPEAT ?? 5);
const OUT = join(tmpdir(), `pmagent-bench-kai-runs-${process.pid}`);
const NOW = Date.now();
const DAY = 86_400_000;
const lane = docUpdateLane();
const roles = lane.roles.map((r) => r.name);

async function seed(store) {
  const step = (365 * DAY) / RUNS;
  await store.transaction(async (tx) => {
    for (let i = 0; i < RUNS; i++) {
      const created = Math.floor(NOW - 365 * DAY + i * step);
      const id = `run_${String(i).padStart(6, "0")}`;
      const waiting = i % 97 === 0;
      const state = waiting ? "waiting" : i % 13 === 0 ? "failed" : "succeeded";
      const finished = waiting ? null : created + 60_000;
      await tx.run(
        `INSERT INTO lattice_runs (id, project_id, role, entry_id, sprite_id, work_item_id, state, command_json, workspace, checkpoint_dir, run_dir, worker, host, supervisor_pid, sprite_pid, sprite_started,
           attempt, outbox_offset, outbox_line, stdout_offset, stderr_offset, waiting_json, gate_json, exit_code, exit_signal, reason, log_bytes, log_truncated, entry_synced, created_at, created_ms, updated_ms, finished_ms)
         VALUES (?, 'bench', ?, ?, 's', ?, ?, '[]', '/w', '/c', '/r', NULL, 'h', NULL, NULL, NULL, 1, 0, 1, 0, 0, ?, NULL, NULL, NULL, NULL, 0, 0, 1, ?, ?, ?, ?)`,
        [
          id,
          roles[i % roles.length],
          `req-${i}`,
          `req-${i}`,
          state,
          waiting
            ? JSON.stringify({
                event_id: "e0",
                reason: "r",
                checkpoint_id: "chk_0",
                expected_inputs: { approved: "boolean" },
              })
            : null,
          new Date(created).toISOString(),
          created,
          finished ?? created,
          finished,
        ],
      );
      for (let s = 0; s < PER_RUN; s++) {
        const type = s === PER_RUN - 1 ? (waiting ? "WAITING" : "COMPLETED") : s % 10 === 5 ? "ARTIFACT" : "INFO";
        const payload =
          type === "ARTIFACT"
            ? { kind: "file", ref: `reports/r${i}-${s}.json` }
            : type === "WAITING"
              ? { reason: "r", checkpoint_id: "chk_0", expected_inputs: { approved: "boolean" } }
              : { message: `m${s}` };
        await tx.run(
          `INSERT INTO lattice_run_events (run_id, seq, attempt, event_id, event_type, source, outbox_line, event_json, received_ms) VALUES (?, ?, 1, ?, ?, 'outbox', ?, ?, ?)`,
          [id, s, `${id}-${s}`, type, s + 1, JSON.stringify({ event_type: type, payload }), created + s * 100],
        );
      }
    }
  });
}

async function time(label, f) {
  const times = [];
  let out;
  for (let i = 0; i < REPEAT; i++) {
    const t = performance.now();
    out = await f();
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  const median = times[Math.floor(times.length / 2)];
  console.log(
    `${label.padEnd(52)} median ${median.toFixed(1).padStart(8)} ms  (min ${times[0].toFixed(1)}, max ${times.at(-1).toFixed(1)})`,
  );
  return { median, out };
}

rmSync(OUT, { recursive: true, force: true });
mkdirSync(OUT, { recursive: true });
const store = new SqliteStore(join(OUT, "runs.db"));
try {
  await migrate(store, migrations);
  const t = performance.now();
  await seed(store);
  console.log(`seeded ${RUNS} runs, ${RUNS * PER_RUN} events in ${((performance.now() - t) / 1000).toFixed(1)} s`);
  const readers = {
    runs: new RunStore(store, "bench"),
    actions: new ActionStore(store),
    proposals: new ProposalStore({ store, projectId: "bench", humans: ["Human"] }),
    forge: new LocalForge({ store, projectId: "bench", root: OUT, bareRepo: "forge.git" }),
  };
  const window = { since: new Date(NOW - 7 * DAY), until: new Date(NOW) };
  const latestEntries = Array.from({ length: 20 }, (_, i) => `req-${RUNS - 1 - i * 7}`);
  const base = await time("baseline: RunStore.list() (every run, counted)", () => readers.runs.list());
  const kai = await time("collectRuns, 7 days + 20 entries' latest runs", () =>
    collectRuns(readers, lane, window, latestEntries),
  );
  const past = await time("collectRuns, as_of 180 days ago", () =>
    collectRuns(readers, lane, { since: new Date(NOW - 187 * DAY), until: new Date(NOW - 180 * DAY) }, latestEntries),
  );
  console.log(`runs read: baseline ${base.out.length}, window ${kai.out.length}, past window ${past.out.length}`);
  console.log(
    `ratio collectRuns / baseline: ${(kai.median / base.median).toFixed(3)} (as_of: ${(past.median / base.median).toFixed(3)})`,
  );
} finally {
  await store.close();
  rmSync(OUT, { recursive: true, force: true });
}
