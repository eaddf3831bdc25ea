#!/usr/bin/env node
/**
 * Ingest benchmark: a sprite writes N mixed events (default 1,000,000) to stdout and its outbox;
 * the supervisor stores each once, durably. Prints events/s stored on SQLite and PostgreSQL and,
 * in the same run, the rate of merely JSON.parse-ing the same lines, with the ratio; and where
 * the CPU went, per event (on Linux).
 *
 *   npm run build && node bench/ingest/run.mjs [N] [--rounds R] [--sqlite-only]
 *   (PMAGENT_TEST_DATABASE_URL selects the PostgreSQL server; unreachable → SQLite only)
 *
 * On a noisy machine one run can land 20% off either way: --rounds R measures each store R times,
 * alternating them, and prints every round and the median.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import pg from "pg";

const here = fileURLToPath(new URL(".", import.meta.url));
const dist = join(here, "../../dist");
const { parseConfig, SqliteStore, PostgresStore, migrate, migrations, Supervisor } = await import(join(dist, "index.js"));

const { values: args, positionals } = parseArgs({ allowPositionals: true, options: { rounds: { type: "string" }, "sqlite-only": { type: "boolean" } } });
const N = Number(positionals[0] ?? 1_000_000);
const ROUNDS = Number(args.rounds ?? 1);
for (const [name, v] of [["N", N], ["--rounds", ROUNDS]]) {
  if (!Number.isInteger(v) || v < 1) {
    console.error(`bench/ingest: ${name} must be a positive integer, got ${JSON.stringify(name === "N" ? positionals[0] : args.rounds)}`);
    process.exit(2);
  }
}
const PG_URL = process.env.PMAGENT_TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";

function project(root) {
  const config = { project_id: "bench", lanes: [{ layer: "bench", name: "ingest", roles: [{ name: "Writer", allowed_kinds: ["bench"], runner: { command: [process.execPath, join(here, "sprite.mjs"), String(N)], timeout_s: 3600 } }] }] };
  const text = JSON.stringify(config);
  writeFileSync(join(root, "pmagent.config.json"), text);
  return { root, configPath: join(root, "pmagent.config.json"), config: parseConfig(text, "bench config") };
}

/**
 * CPU seconds of this process's threads (Linux /proc; null elsewhere) and of its waited-for
 * children. CPU per event holds on a noisy machine where wall time does not, and says where the
 * time goes: the supervisor's main thread, its other threads (outbox decoder, SQLite checkpointer,
 * V8's GC helpers), the sprite.
 */
function cpu() {
  const task = `/proc/${process.pid}/task`;
  if (!existsSync(task)) return null;
  const fields = (path) => {
    const text = readFileSync(path, "utf8");
    return text.slice(text.lastIndexOf(")") + 2).split(" ").map(Number);
  };
  const ticks = 100; // USER_HZ on Linux
  const threads = new Map();
  for (const tid of readdirSync(task)) {
    try {
      const f = fields(`${task}/${tid}/stat`);
      threads.set(tid, (f[11] + f[12]) / ticks);
    } catch {
      // the thread ended between the listing and the read
    }
  }
  const self = fields(`/proc/${process.pid}/stat`);
  return { threads, children: (self[13] + self[14]) / ticks };
}

function cpuDelta(before, after) {
  if (!before || !after) return null;
  let main = 0;
  let others = 0;
  for (const [tid, t] of after.threads) {
    const d = t - (before.threads.get(tid) ?? 0);
    if (tid === String(process.pid)) main += d;
    else others += d;
  }
  return { main, others, sprite: after.children - before.children };
}

async function measure(name, store) {
  const root = mkdtempSync(join(tmpdir(), "pmagent-bench-"));
  try {
    await migrate(store, migrations);
    const sup = new Supervisor({ store, project: project(root), pmagentCommand: [process.execPath, join(dist, "cli/main.js")], pollMs: 50 });
    const c0 = cpu();
    const t0 = performance.now();
    const run = await sup.startRun({ role: "Writer" });
    const seconds = (performance.now() - t0) / 1000;
    const used = cpuDelta(c0, cpu());
    const stored = Number((await store.get("SELECT COUNT(*) AS n FROM lattice_run_events WHERE run_id = ?", [run.id])).n);
    if (run.state !== "succeeded" || stored !== N + 1) throw new Error(`${name}: run ${run.state} (${run.reason}), ${stored} events stored, expected ${N + 1}`);
    const lines = readFileSync(join(run.workspace, ".lattice", "outbox.jsonl"), "utf8").split("\n").filter(Boolean);
    return { name, stored, seconds, rate: stored / seconds, lines, used };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

function parseRate(lines) {
  const t0 = performance.now();
  let n = 0;
  for (const line of lines) if (JSON.parse(line).protocol_version === "v1") n++;
  return n / ((performance.now() - t0) / 1000);
}

const fmt = (x) => Math.round(x).toLocaleString("en-US");

async function sqliteRound() {
  const dir = mkdtempSync(join(tmpdir(), "pmagent-bench-db-"));
  const store = new SqliteStore(join(dir, "bench.db"));
  try {
    return await measure("SQLite", store);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function postgresRound() {
  const schema = `bench_${process.pid}`;
  const store = await PostgresStore.connect(PG_URL, { schema });
  try {
    return await measure("PostgreSQL", store);
  } finally {
    await store.exec(`DROP SCHEMA ${schema} CASCADE`);
    await store.close();
  }
}

let pgOk = !args["sqlite-only"];
if (pgOk) {
  try {
    const c = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 2000 });
    await c.connect();
    await c.end();
  } catch (err) {
    pgOk = false;
    console.log(`PostgreSQL at ${PG_URL} unreachable (${err.message}): skipped`);
  }
}
const byStore = new Map([["SQLite", []], ...(pgOk ? [["PostgreSQL", []]] : [])]);
for (let r = 0; r < ROUNDS; r++) {
  // The lines (for the JSON.parse baseline) are kept from the first round only: a million strings a round would load the later ones.
  byStore.get("SQLite").push(await sqliteRound());
  if (pgOk) byStore.get("PostgreSQL").push({ ...(await postgresRound()), lines: null });
  if (r > 0) byStore.get("SQLite")[r].lines = null;
}
const baseline = parseRate(byStore.get("SQLite")[0].lines);
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
console.log(`ingest benchmark: ${fmt(N + 1)} mixed events (INFO, PHASE_STARTED, PHASE_FINISHED, ARTIFACT, COMPLETED), each on stdout and in the outbox${ROUNDS > 1 ? `; ${ROUNDS} rounds per store` : ""}`);
console.log(`baseline  JSON.parse of the same lines: ${fmt(baseline)} lines/s`);
for (const [name, rounds] of byStore) {
  for (const [i, r] of rounds.entries()) {
    const label = ROUNDS > 1 ? `${name} #${i + 1}` : name;
    console.log(`${label.padEnd(13)} stored once each, durably: ${fmt(r.stored)} events in ${r.seconds.toFixed(2)} s = ${fmt(r.rate)} events/s  (ratio to JSON.parse: ${(r.rate / baseline).toFixed(3)})`);
    if (r.used) {
      const us = (s) => ((s * 1e6) / r.stored).toFixed(1);
      console.log(`${"".padEnd(13)} CPU per event: supervisor main thread ${us(r.used.main)} µs, its other threads ${us(r.used.others)} µs, sprite ${us(r.used.sprite)} µs (JSON.parse alone: ${(1e6 / baseline).toFixed(1)} µs)`);
    }
  }
  if (ROUNDS > 1) {
    const rate = median(rounds.map((r) => r.rate));
    console.log(`${`${name} median`.padEnd(13)} ${fmt(rate)} events/s over ${ROUNDS} rounds (ratio to JSON.parse: ${(rate / baseline).toFixed(3)})`);
  }
}
if (byStore.get("SQLite").length) {
  const rate = median(byStore.get("SQLite").map((r) => r.rate));
  console.log(`goal: at least 100,000 events/s stored on SQLite: ${rate >= 100_000 ? "met" : "NOT met"} (${fmt(rate)}${ROUNDS > 1 ? ", median" : ""})`);
}
