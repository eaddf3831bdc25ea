// bench/machines: 200 entries drained by workers on 2 machines (4 workers each, --concurrency 4)
// against the same workers and total concurrency on 1 machine (8 workers, --concurrency 4), one PostgreSQL
// store. Each "machine" is a project directory of its own; where this process may make mount
// namespaces (root, unshare), each machine's workers run in one where the other machine's
// directory is covered by an empty tmpfs, as on real machines. The sprite is short (a shell
// script: INFO, 0.2 s of "work", COMPLETED), so what is measured is pmagent's share.
// Printed per round: throughput (entries/s) of both set-ups and their ratio (goal ≥ 1: spreading
// over machines costs nothing), claim → first event latency p50/p99, double claims (must be 0),
// and the workers' peak RSS per concurrent run.
// Usage: npm run bench:machines [-- --entries 200 --rounds 3]   (env PMAGENT_BENCH_PG_URL)
import { parseArgs } from "node:util";
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir, loadavg } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { Blackboard, PostgresStore, migrate, migrations } from "../../dist/index.js";

const HERE = dirname(fileURLToPath(import.meta.url));
const CLI = join(HERE, "..", "..", "dist", "bin", "main.js");
const SPRITE = join(HERE, "sprite.sh");
const PG_URL = process.env.PMAGENT_BENCH_PG_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const { values: args } = parseArgs({ options: { entries: { type: "string" }, rounds: { type: "string" } } });
const N = Number(args.entries ?? 200);
const ROUNDS = Number(args.rounds ?? 3);
for (const [name, n] of [
  ["entries", N],
  ["rounds", ROUNDS],
]) {
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a positive whole number (got ${n})`);
}
const canUnshare = spawnSync("unshare", ["-m", "--propagation", "private", "true"]).status === 0;
const SETUPS = [
  { name: "2 machines x 4 workers x concurrency 4", machines: 2, workers: 4, concurrency: 4 },
  // The baseline: the same worker processes and total concurrency, all on one machine.
  { name: "1 machine x 8 workers x concurrency 4", machines: 1, workers: 8, concurrency: 4 },
];

const pct = (values, p) => {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const fmt = (n, d = 1) => n.toLocaleString("en-US", { maximumFractionDigits: d, minimumFractionDigits: d });
const median = (xs) => pct(xs, 50);

function project(root) {
  mkdirSync(root, { recursive: true });
  const config = {
    project_id: "bench-machines",
    humans: ["Human"],
    lanes: [
      {
        layer: "bench",
        name: "machines",
        roles: [
          { name: "Builder", allowed_kinds: ["build_request"], runner: { command: ["sh", SPRITE], timeout_s: 120 } },
        ],
      },
    ],
  };
  writeFileSync(join(root, "pmagent.config.json"), JSON.stringify(config, null, 2));
}

/** Peak RSS (kB) of a process while it runs, sampled from /proc. */
function sampleRss(pid, peak) {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    if (m) peak.kb = Math.max(peak.kb, Number(m[1]));
  } catch {
    /* exited */
  }
}

function startWorker(root, others, schema, concurrency, i) {
  const env = {
    ...process.env,
    PMAGENT_DATABASE_URL: PG_URL,
    PMAGENT_DATABASE_SCHEMA: schema,
    PMAGENT_MACHINE: root.split("/").pop(),
    NO_COLOR: "1",
  };
  const argv = [
    process.execPath,
    CLI,
    "worker",
    "--role",
    "Builder",
    "--once",
    "--concurrency",
    String(concurrency),
    "--worker-id",
    `w${i}@${env.PMAGENT_MACHINE}`,
    "--format",
    "json",
  ];
  const hide = canUnshare && others.length > 0;
  const child = hide
    ? spawn(
        "unshare",
        [
          "-m",
          "--propagation",
          "private",
          "sh",
          "-c",
          `${others.map((o) => `mount -t tmpfs -o size=1m none ${o} &&`).join(" ")} exec "$@"`,
          "sh",
          ...argv,
        ],
        { cwd: root, env, stdio: ["ignore", "pipe", "pipe"] },
      )
    : spawn(argv[0], argv.slice(1), { cwd: root, env, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stdout.on("data", (d) => (out += d));
  child.stderr.on("data", (d) => (err += d));
  const peak = { kb: 0 };
  // The worker is the unshare'd sh's exec: the same pid.
  const timer = setInterval(() => sampleRss(child.pid, peak), 100);
  const done = new Promise((resolve, reject) =>
    child.once("exit", (code) => {
      clearInterval(timer);
      if (code === 0)
        resolve({
          runs: out
            .trim()
            .split("\n")
            .filter(Boolean)
            .map((l) => JSON.parse(l)),
          peak: peak.kb,
        });
      else reject(new Error(`worker on ${root} exited ${code}: ${err.slice(-2000)}`));
    }),
  );
  return done;
}

async function round(setup) {
  const schema = `bench_machines_${process.pid}`;
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  const base = mkdtempSync(join(tmpdir(), "pmagent-bench-machines-"));
  const store = await PostgresStore.connect(PG_URL, { schema });
  try {
    await migrate(store, migrations);
    const roots = Array.from({ length: setup.machines }, (_, m) =>
      join(base, `machine-${String.fromCharCode(97 + m)}`),
    );
    roots.forEach(project);
    const board = new Blackboard(store, { projectId: "bench-machines", humans: ["Human"] });
    for (let i = 0; i < N; i++)
      await board.post("Human", {
        id: `e-${String(i).padStart(4, "0")}`,
        to: "Builder",
        kind: "build_request",
        payload: { summary: `entry ${i}` },
      });
    const t0 = performance.now();
    const workers = roots.flatMap((root) =>
      Array.from({ length: setup.workers }, (_, i) =>
        startWorker(
          root,
          roots.filter((r) => r !== root),
          schema,
          setup.concurrency,
          `${root.slice(-1)}${i}`,
        ),
      ),
    );
    // Every worker ends before anything is judged (a failed one must not leave the others writing to a dropped schema).
    const settled = await Promise.allSettled(workers);
    const failed = settled.find((r) => r.status === "rejected");
    if (failed) throw failed.reason;
    const results = settled.map((r) => r.value);
    const seconds = (performance.now() - t0) / 1000;
    const runs = results.flatMap((r) => r.runs);
    const bad = runs.filter((r) => r.state !== "succeeded");
    if (bad.length > 0) throw new Error(`${bad.length} runs did not succeed: ${bad[0].reason}`);
    const claims = await store.all(
      "SELECT entry_id, COUNT(*) AS n FROM bb_history WHERE project_id = 'bench-machines' AND action IN ('claim', 'takeover') GROUP BY entry_id",
    );
    const doubles = claims.filter((c) => Number(c.n) > 1).length;
    const perEntry = await store.all(
      `SELECT h.at_ms AS claimed, (SELECT MIN(e.received_ms) FROM lattice_run_events e JOIN lattice_runs r ON r.id = e.run_id WHERE r.entry_id = h.entry_id) AS first
         FROM bb_history h WHERE h.project_id = 'bench-machines' AND h.action = 'claim'`,
    );
    const latency = perEntry.map((r) => Number(r.first) - Number(r.claimed));
    const machinesUsed = new Set(runs.map((r) => r.host)).size;
    const rssPerRun = results.map((r) => r.peak / 1024 / setup.concurrency);
    return {
      seconds,
      throughput: N / seconds,
      p50: pct(latency, 50),
      p99: pct(latency, 99),
      doubles,
      done: runs.length,
      machinesUsed,
      rssPerRun: median(rssPerRun),
      rssPeak: Math.max(...results.map((r) => r.peak / 1024)),
    };
  } finally {
    await store.close();
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.end();
    rmSync(base, { recursive: true, force: true });
  }
}

console.log(
  `bench/machines: ${N} entries, ${ROUNDS} rounds (set-ups alternate which goes first); machines ${canUnshare ? "in mount namespaces of their own" : "as directories (no unshare here)"}; load ${loadavg()
    .map((l) => l.toFixed(2))
    .join(" ")}`,
);
const ratios = [];
const all = { [SETUPS[0].name]: [], [SETUPS[1].name]: [] };
for (let r = 0; r < ROUNDS; r++) {
  const order = r % 2 === 0 ? SETUPS : [...SETUPS].reverse();
  const got = {};
  for (const s of order) {
    got[s.name] = await round(s);
    all[s.name].push(got[s.name]);
    const g = got[s.name];
    console.log(
      `  round ${r + 1} ${s.name}: ${g.done} runs on ${g.machinesUsed} machine(s) in ${fmt(g.seconds, 2)} s = ${fmt(g.throughput)} entries/s; claim→first event p50 ${g.p50} ms, p99 ${g.p99} ms; double claims ${g.doubles}; worker peak RSS ${fmt(g.rssPeak, 0)} MB, ${fmt(g.rssPerRun)} MB per concurrent run`,
    );
  }
  ratios.push(got[SETUPS[0].name].throughput / got[SETUPS[1].name].throughput);
  console.log(
    `  round ${r + 1} ratio (2 machines / 1 machine throughput): ${fmt(ratios.at(-1), 2)}x; load ${loadavg()[0].toFixed(2)}`,
  );
}
const m = median(ratios);
const doubles = Object.values(all)
  .flat()
  .reduce((n, g) => n + g.doubles, 0);
console.log(
  `median ratio ${fmt(m, 2)}x (goal >= 1.00x: spreading the team over machines costs nothing) ${m >= 1 ? "met" : "missed"}; double claims ${doubles} (goal 0) ${doubles === 0 ? "met" : "MISSED"}`,
);
for (const s of SETUPS) {
  const g = all[s.name];
  console.log(
    `  ${s.name}: median ${fmt(median(g.map((x) => x.throughput)))} entries/s, claim→first event p50 ${median(g.map((x) => x.p50))} ms, p99 ${median(g.map((x) => x.p99))} ms, ${fmt(median(g.map((x) => x.rssPerRun)))} MB RSS per concurrent run`,
  );
}
