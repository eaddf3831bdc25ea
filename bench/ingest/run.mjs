#!/usr/bin/env node
/**
 * Ingest benchmark: a sprite writes N mixed events (default 1,000,000) to stdout and its outbox;
 * the supervisor stores each once, durably. Prints events/s stored on SQLite and PostgreSQL and,
 * in the same run, the rate of merely JSON.parse-ing the same lines, with the ratio; and where
 * the CPU went, per event (on Linux).
 *
 *   npm run build && node bench/ingest/run.mjs [N] [--rounds R] [--sqlite-only] [--old DIR]
 *   (PMAGENT_TEST_DATABASE_URL selects the PostgreSQL server; unreachable → SQLite only)
 *
 * On a noisy machine one run can land 20% off either way: each store is measured R times
 * (default 3), alternating them, and every round is printed with the median. The JSON.parse
 * baseline is measured beside each round, on that round's own lines, so a round's ratio compares
 * figures taken under the same load. `--old DIR`: another pmagent checkout (built), whose
 * supervisor is measured on SQLite in the same rounds (the old-vs-new comparison).
 *
 * Beside each SQLite round it also times SQLite storing the round's rows alone (better-sqlite3,
 * nothing read or decoded): the most one SQLite writer allows, against which both the round and
 * the goal can be judged.
 *
 * The goals it prints: issue 38's, pmagent at ≥ 0.8× that storing ceiling on SQLite (median of
 * the rounds' ratios, each ratio taken within one round); and issue 21's, at least 100,000
 * events/s stored durably on SQLite and at least 0.3× the rate of a raw JSON.parse of the same
 * lines, on the same run. A missed figure never fails the benchmark.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import pg from "pg";
import Database from "better-sqlite3";

const here = fileURLToPath(new URL(".", import.meta.url));
const dist = join(here, "../../dist");
const { values: args, positionals } = parseArgs({
  allowPositionals: true,
  options: { rounds: { type: "string" }, "sqlite-only": { type: "boolean" }, old: { type: "string" } },
});
const current = await import(join(dist, "index.js"));
const { parseConfig, PostgresStore } = current;
const old = args.old ? await import(join(args.old, "dist", "index.js")) : null;
const N = Number(positionals[0] ?? 1_000_000);
const ROUNDS = Number(args.rounds ?? 3);
for (const [name, v] of [
  ["N", N],
  ["--rounds", ROUNDS],
]) {
  if (!Number.isInteger(v) || v < 1) {
    console.error(
      `bench/ingest: ${name} must be a positive integer, got ${JSON.stringify(name === "N" ? positionals[0] : args.rounds)}`,
    );
    process.exit(2);
  }
}
const PG_URL = process.env.PMAGENT_TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";

function project(root) {
  const config = {
    project_id: "bench",
    lanes: [
      {
        layer: "bench",
        name: "ingest",
        roles: [
          {
            name: "Writer",
            allowed_kinds: ["bench"],
            runner: { command: [process.execPath, join(here, "sprite.mjs"), String(N)], timeout_s: 3600 },
          },
        ],
      },
    ],
  };
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
    return text
      .slice(text.lastIndexOf(")") + 2)
      .split(" ")
      .map(Number);
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

async function measure(name, store, pm = current) {
  const root = mkdtempSync(join(tmpdir(), "pmagent-bench-"));
  try {
    await pm.migrate(store, pm.migrations);
    const sup = new pm.Supervisor({
      store,
      project: project(root),
      pmagentCommand: [process.execPath, join(dist, "bin/main.js")],
      pollMs: 50,
    });
    const c0 = cpu();
    const t0 = performance.now();
    const run = await sup.startRun({ role: "Writer" });
    const seconds = (performance.now() - t0) / 1000;
    const used = cpuDelta(c0, cpu());
    const stored = Number(
      (await store.get("SELECT COUNT(*) AS n FROM lattice_run_events WHERE run_id = ?", [run.id])).n,
    );
    if (run.state !== "succeeded" || stored !== N + 1)
      throw new Error(`${name}: run ${run.state} (${run.reason}), ${stored} events stored, expected ${N + 1}`);
    // The sprite's CPU as it read it itself: a sandboxed sprite (its own PID namespace) is not a waited-for child here.
    if (used) used.sprite = JSON.parse(readFileSync(join(run.workspace, "bench-sprite-cpu.json"), "utf8")).seconds;
    // The baseline beside the round: JSON.parse of this round's own lines, now.
    const baseline = parseRate(
      readFileSync(join(run.workspace, ".lattice", "outbox.jsonl"), "utf8")
        .split("\n")
        .filter(Boolean),
    );
    const ceiling = store instanceof pm.SqliteStore ? await storingCeiling(store, run.id, pm) : undefined;
    return {
      name,
      stored,
      seconds,
      rate: stored / seconds,
      baseline,
      ratio: stored / seconds / baseline,
      used,
      ceiling,
    };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

/** Rows per commit and per INSERT in `storingCeiling`: a typical flush, and the ingest's chunk. */
const CEILING_COMMIT_ROWS = 7_488;
const CEILING_INSERT_ROWS = 64;

/**
 * What SQLite alone takes to store this round's rows: the same rows, read back, inserted into a
 * new database of the same schema (the same migrations: the same indexes) by better-sqlite3
 * directly, as pmagent's statement does (64 rows per INSERT, ~7,500 per commit), with the
 * connection settings SqliteStore opens with (WAL, synchronous=NORMAL, foreign keys, statement
 * journals in memory, the same cache), nothing read, decoded, hashed or paired and no checkpoint:
 * an upper bound for one SQLite writer, whatever the supervisor does around it. Events/s and
 * ratio to this round's JSON.parse.
 */
async function storingCeiling(source, runId, pm) {
  const rows = await source.all(
    "SELECT run_id, seq, attempt, event_id, event_type, source, outbox_line, event_json, received_ms, event_ts FROM lattice_run_events WHERE run_id = ? ORDER BY seq",
    [runId],
  );
  const dir = mkdtempSync(join(tmpdir(), "pmagent-bench-ceiling-"));
  try {
    const file = join(dir, "ceiling.db");
    const schema = new pm.SqliteStore(file);
    await pm.migrate(schema, pm.migrations);
    await schema.close();
    const db = new Database(file);
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = NORMAL");
    db.pragma("foreign_keys = ON");
    db.pragma("temp_store = MEMORY");
    db.pragma("cache_size = -65536");
    db.pragma("wal_autocheckpoint = 0");
    const values = (n) => new Array(n).fill("(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)").join(", ");
    const insert = (n) =>
      db.prepare(
        `INSERT INTO lattice_run_events (run_id, seq, attempt, event_id, event_type, source, outbox_line, event_json, received_ms, event_ts) VALUES ${values(n)} ON CONFLICT (run_id, event_ts, event_id) DO NOTHING`,
      );
    const full = insert(CEILING_INSERT_ROWS);
    const params = rows.map((r) => [
      r.run_id,
      r.seq,
      r.attempt,
      r.event_id,
      r.event_type,
      r.source,
      r.outbox_line,
      r.event_json,
      r.received_ms,
      r.event_ts,
    ]);
    const t0 = performance.now();
    for (let c = 0; c < params.length; c += CEILING_COMMIT_ROWS) {
      db.exec("BEGIN IMMEDIATE");
      const end = Math.min(c + CEILING_COMMIT_ROWS, params.length);
      for (let i = c; i < end; i += CEILING_INSERT_ROWS) {
        const chunk = params.slice(i, Math.min(i + CEILING_INSERT_ROWS, end));
        (chunk.length === CEILING_INSERT_ROWS ? full : insert(chunk.length)).run(...chunk.flat());
      }
      db.exec("COMMIT");
    }
    const rate = rows.length / ((performance.now() - t0) / 1000);
    const stored = db.prepare("SELECT COUNT(*) AS n FROM lattice_run_events").get().n;
    db.close();
    if (stored !== rows.length) throw new Error(`storing ceiling: ${stored} of ${rows.length} rows stored`);
    return rate;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function parseRate(lines) {
  const t0 = performance.now();
  let n = 0;
  for (const line of lines) if (JSON.parse(line).protocol_version === "v1") n++;
  return n / ((performance.now() - t0) / 1000);
}

const fmt = (x) => Math.round(x).toLocaleString("en-US");

async function sqliteRound(pm = current, name = "SQLite") {
  const dir = mkdtempSync(join(tmpdir(), "pmagent-bench-db-"));
  const store = new pm.SqliteStore(join(dir, "bench.db"));
  try {
    return await measure(name, store, pm);
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
const byStore = new Map([
  ["SQLite", []],
  ...(old ? [["SQLite (old)", []]] : []),
  ...(pgOk ? [["PostgreSQL", []]] : []),
]);
console.log(
  `ingest benchmark: ${fmt(N + 1)} mixed events (INFO, PHASE_STARTED, PHASE_FINISHED, ARTIFACT, COMPLETED), each on stdout and in the outbox; ${ROUNDS} round${ROUNDS > 1 ? "s" : ""} per store, alternating; load ${loadavg()
    .map((x) => x.toFixed(2))
    .join(" ")}`,
);
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const us = (s, n) => ((s * 1e6) / n).toFixed(1);
function report(label, r) {
  console.log(
    `${label.padEnd(20)} stored once each, durably: ${fmt(r.stored)} events in ${r.seconds.toFixed(2)} s = ${fmt(r.rate)} events/s; JSON.parse beside it: ${fmt(r.baseline)} lines/s; ratio ${r.ratio.toFixed(3)}`,
  );
  if (r.ceiling !== undefined)
    console.log(
      `${"".padEnd(20)} SQLite storing alone (the same rows by better-sqlite3, nothing else): ${fmt(r.ceiling)} events/s = ${(r.ceiling / r.baseline).toFixed(3)}× JSON.parse; pmagent at ${(r.rate / r.ceiling).toFixed(2)}× of it`,
    );
  if (r.used)
    console.log(
      `${"".padEnd(20)} CPU per event: supervisor main thread ${us(r.used.main, r.stored)} µs, its other threads ${us(r.used.others, r.stored)} µs, sprite ${us(r.used.sprite, r.stored)} µs (JSON.parse alone: ${(1e6 / r.baseline).toFixed(1)} µs)`,
    );
}
for (let r = 0; r < ROUNDS; r++) {
  for (const [name, rounds] of byStore) {
    const result =
      name === "SQLite"
        ? await sqliteRound()
        : name === "SQLite (old)"
          ? await sqliteRound(old, name)
          : await postgresRound();
    rounds.push(result);
    report(`${name} #${r + 1}`, result);
  }
}
console.log(
  `load after: ${loadavg()
    .map((x) => x.toFixed(2))
    .join(" ")}`,
);
for (const [name, rounds] of byStore) {
  const cpu = rounds.every((r) => r.used) ? rounds.map((r) => r.used) : null;
  const perEvent = cpu
    ? `; CPU per event (median): main ${us(median(cpu.map((c) => c.main)), N + 1)}, other threads ${us(median(cpu.map((c) => c.others)), N + 1)}, sprite ${us(median(cpu.map((c) => c.sprite)), N + 1)} µs`
    : "";
  console.log(
    `${`${name} median`.padEnd(20)} ${fmt(median(rounds.map((r) => r.rate)))} events/s, ratio to JSON.parse ${median(rounds.map((r) => r.ratio)).toFixed(3)} (over ${rounds.length} round${rounds.length > 1 ? "s" : ""})${perEvent}`,
  );
}
if (old) {
  const ratios = byStore.get("SQLite").map((r, i) => r.rate / byStore.get("SQLite (old)")[i].rate);
  console.log(
    `new vs old (SQLite, same rounds): ${ratios.map((x) => `${x.toFixed(2)}×`).join(", ")}; median ${median(ratios).toFixed(2)}×`,
  );
}
const sqlite = byStore.get("SQLite");
const ceilings = sqlite.map((r) => r.ceiling / r.baseline);
console.log(
  `SQLite storing alone, median: ${median(ceilings).toFixed(3)}× JSON.parse (over ${ceilings.length} round${ceilings.length > 1 ? "s" : ""}): the most any supervisor storing through one SQLite writer could reach on this machine`,
);
const ofCeiling = median(sqlite.map((r) => r.rate / r.ceiling));
console.log(
  `goal (issue 38): ingest on SQLite ≥ 0.8× the single-writer storing ceiling of the same rows: ${ofCeiling >= 0.8 ? "met" : "NOT met"} (${ofCeiling.toFixed(2)}×, median of the rounds' ratios: ${sqlite.map((r) => (r.rate / r.ceiling).toFixed(2)).join(", ")})`,
);
const rate = median(sqlite.map((r) => r.rate));
const ratio = median(sqlite.map((r) => r.ratio));
console.log(
  `goal (issue 21): ≥ 100,000 events/s stored durably on SQLite: ${rate >= 100_000 ? "met" : "NOT met"} (${fmt(rate)}/s, median); ≥ 0.3× a raw JSON.parse of the same lines on the same run: ${ratio >= 0.3 ? "met" : "NOT met"} (${ratio.toFixed(3)}×, median of the rounds' ratios)`,
);
