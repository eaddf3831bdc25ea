// bench/follow: what following a run costs the supervisor (issue 38: ≤ 15 MB RSS and ≤ 2 % of a
// core per run, 16 at once). For N = 1, 4, 16 concurrent runs, each a shell sprite appending an
// INFO event to its outbox every FOLLOW_BENCH_EVERY_MS (default 500), two set-ups take turns:
//   worker:  one `pmagent worker --concurrency N` process following all N runs (the issue's
//            "workers that scale"): its RSS and CPU divided by N, and the marginal RSS of a run,
//            (RSS at N − RSS at 1) / (N − 1);
//   run:     one `pmagent run` process per run (what a person starts by hand): the median
//            process's RSS and CPU.
// Once all N sprites run, CPU (utime+stime from /proc) and RSS are sampled over
// FOLLOW_BENCH_WINDOW_S (default 8) seconds. The goal is checked on the worker at N = 16.
// Usage: npm run build && node bench/follow/run.mjs   (env: FOLLOW_BENCH_COUNTS=1,4,16)
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { setTimeout as sleep } from "node:timers/promises";

const COUNTS = (process.env.FOLLOW_BENCH_COUNTS ?? "1,4,16").split(",").map(Number);
const EVERY_MS = Number(process.env.FOLLOW_BENCH_EVERY_MS ?? 500);
const WINDOW_S = Number(process.env.FOLLOW_BENCH_WINDOW_S ?? 8);
const root = join(fileURLToPath(import.meta.url), "..", "..", "..");
const cli = join(root, "dist/bin/main.js");
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const TICK = Number(spawnSync("getconf", ["CLK_TCK"]).stdout?.toString().trim() || 100);
/** The sprites' marker in their command line: how the bench counts the ones running. */
const MARK = `pmagent-bench-follow-${process.pid}`;

const dir = mkdtempSync(join(tmpdir(), "pmagent-bench-follow-"));
const project = join(dir, "project");
mkdirSync(project);
const env = {
  ...Object.fromEntries(
    Object.entries(process.env).filter(
      ([k]) => !k.startsWith("PMAGENT_") && !k.startsWith("LATTICE_") && k !== "DATABASE_URL",
    ),
  ),
  NO_COLOR: "1",
};

/** CPU seconds (utime + stime) of a process, or undefined once it is gone. */
function cpuOf(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(f[11]) + Number(f[12])) / TICK;
  } catch {
    return undefined;
  }
}
function rssMbOf(pid) {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}
const running = () => Number(spawnSync("pgrep", ["-c", "-f", MARK]).stdout?.toString().trim() || 0);

// The sprite: an INFO event appended to its outbox every EVERY_MS until the supervisor stops it.
const sprite = `i=0; mkdir -p "$LATTICE_WORKSPACE/.lattice"; while true; do i=$((i+1)); printf '{"protocol_version":"v1","event_type":"INFO","sprite_id":"%s","work_item_id":"%s","timestamp":"%s","payload":{"message":"tick %d"}}\\n' "$LATTICE_SPRITE_ID" "$LATTICE_WORK_ITEM_ID" "$(date -u +%Y-%m-%dT%H:%M:%S.000Z)" $i >> "$LATTICE_OUTBOX"; sleep ${EVERY_MS / 1000}; done`;
const command = ["sh", "-c", sprite, MARK];

/** Sample the given processes once `n` sprites run; then stop them. */
async function sample(pids, n, stop) {
  while (running() < n) await sleep(100);
  await sleep(2000);
  const before = pids.map(cpuOf);
  const t0 = performance.now();
  await sleep(WINDOW_S * 1000);
  const after = pids.map(cpuOf);
  const wall = (performance.now() - t0) / 1000;
  const rss = pids.map(rssMbOf);
  const cpu = after.map((a, i) => (a === undefined || before[i] === undefined ? NaN : ((a - before[i]) / wall) * 100));
  load.push(loadavg()[0]);
  await stop();
  while (running() > 0) await sleep(100);
  return { rss, cpu };
}

async function viaWorker(n) {
  for (let i = 0; i < n; i++)
    execFileSync(process.execPath, [cli, "bb", "post", "--to", "Bench", "--kind", "follow", "--summary", `run ${i}`], {
      cwd: project,
      env,
      stdio: "ignore",
    });
  const worker = spawn(process.execPath, [cli, "worker", "--role", "Bench", "--concurrency", String(n)], {
    cwd: project,
    env,
    stdio: "ignore",
  });
  const exited = new Promise((resolve) => worker.once("exit", resolve));
  const { rss, cpu } = await sample([worker.pid], n, async () => {
    worker.kill("SIGTERM");
    await exited;
  });
  return { n, processRss: rss[0], rss: rss[0] / n, cpu: cpu[0] / n };
}

async function viaRun(n) {
  const timeout = WINDOW_S + 30 + n;
  const children = Array.from({ length: n }, () =>
    spawn(process.execPath, [cli, "run", "--role", "Bench", "--timeout", String(timeout), "--", ...command], {
      cwd: project,
      env,
      stdio: "ignore",
    }),
  );
  const done = children.map((c) => new Promise((resolve) => c.once("exit", resolve)));
  const { rss, cpu } = await sample(
    children.map((c) => c.pid),
    n,
    async () => {
      for (const c of children) c.kill("SIGTERM");
      await Promise.all(done);
    },
  );
  return { n, rss: median(rss.filter(Number.isFinite)), cpu: median(cpu.filter(Number.isFinite)) };
}

const load = [loadavg()[0]];
try {
  execFileSync("git", ["init", "-q", "-b", "main"], { cwd: project });
  const config = {
    project_id: "bench-follow",
    humans: ["Human"],
    lanes: [
      {
        layer: "bench",
        name: "follow",
        roles: [{ name: "Bench", allowed_kinds: ["follow"], runner: { command, timeout_s: 3600 } }],
      },
    ],
  };
  writeFileSync(join(project, "pmagent.config.json"), JSON.stringify(config, null, 2));
  const worker = [];
  const perRun = [];
  for (const n of COUNTS) {
    worker.push(await viaWorker(n));
    perRun.push(await viaRun(n));
  }
  const one = worker.find((w) => w.n === 1);
  console.log(
    `supervisor per followed run: each sprite appends an INFO event every ${EVERY_MS} ms; sampled over ${WINDOW_S} s once all run; the two set-ups take turns`,
  );
  console.log(
    `load average (1 min) during the run: ${Math.min(...load).toFixed(2)}–${Math.max(...load).toFixed(2)} on ${spawnSync("nproc").stdout?.toString().trim() || "?"} cores`,
  );
  for (const [i, w] of worker.entries()) {
    const r = perRun[i];
    const marginal =
      one && w.n > 1 ? `, marginal ${((w.processRss - one.processRss) / (w.n - 1)).toFixed(1)} MB per added run` : "";
    const goal = w.n === 16 ? `   goal ≤ 15 MB and ≤ 2 % per run: ${w.rss <= 15 && w.cpu <= 2 ? "met" : "missed"}` : "";
    console.log(
      `  ${String(w.n).padStart(2)} at once, one worker: ${w.processRss.toFixed(0)} MB in all = ${w.rss.toFixed(1)} MB per run${marginal}; CPU ${w.cpu.toFixed(2)} % of a core per run${goal}`,
    );
    console.log(
      `  ${String(r.n).padStart(2)} at once, a \`pmagent run\` each: ${r.rss.toFixed(0)} MB per run, CPU ${r.cpu.toFixed(2)} % of a core per run (worker/run RSS per run ${(w.rss / r.rss).toFixed(2)}×)`,
    );
  }
} finally {
  spawnSync("pkill", ["-f", MARK]);
  rmSync(dir, { recursive: true, force: true });
}
