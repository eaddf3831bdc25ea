// bench/follow: what following a run costs the supervisor (issue 38: ≤ 15 MB RSS and ≤ 2 % of a
// core per run, 16 at once). N runs (1, 4, 16) are started at once with `pmagent run`, each a
// shell sprite printing an INFO event every FOLLOW_BENCH_EVERY_MS (default 500); once all are
// running, each supervisor process's CPU (utime+stime from /proc) and RSS are sampled over
// FOLLOW_BENCH_WINDOW_S (default 8) seconds. Today each run has a supervisor process of its own
// (`pmagent run`; a worker also runs one sprite at a time), so the figure per run is one process's.
// Usage: npm run build && node bench/follow/run.mjs   (env: FOLLOW_BENCH_COUNTS=1,4,16)
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { setTimeout as sleep } from "node:timers/promises";

const COUNTS = (process.env.FOLLOW_BENCH_COUNTS ?? "1,4,16").split(",").map(Number);
const EVERY_MS = Number(process.env.FOLLOW_BENCH_EVERY_MS ?? 500);
const WINDOW_S = Number(process.env.FOLLOW_BENCH_WINDOW_S ?? 8);
const root = join(fileURLToPath(import.meta.url), "..", "..", "..");
const cli = join(root, "dist/cli/main.js");
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const TICK = Number(spawnSync("getconf", ["CLK_TCK"]).stdout?.toString().trim() || 100);

const dir = mkdtempSync(join(tmpdir(), "pmagent-bench-follow-"));
const project = join(dir, "project");
mkdirSync(project);
const env = Object.fromEntries(
  Object.entries(process.env).filter(
    ([k]) => !k.startsWith("PMAGENT_") && !k.startsWith("LATTICE_") && k !== "DATABASE_URL",
  ),
);

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

// The sprite: an INFO line on stdout every EVERY_MS until the supervisor stops it (its timeout).
const sprite = `i=0; while true; do i=$((i+1)); printf 'LATTICE_EVENT {"protocol_version":"v1","event_type":"INFO","sprite_id":"%s","work_item_id":"%s","timestamp":"%s","payload":{"message":"tick %d"}}\\n' "$LATTICE_SPRITE_ID" "$LATTICE_WORK_ITEM_ID" "$(date -u +%Y-%m-%dT%H:%M:%S.000Z)" $i; sleep ${EVERY_MS / 1000}; done`;

try {
  execFileSync("git", ["init", "-q", "-b", "main"], { cwd: project });
  execFileSync(process.execPath, [cli, "init"], { cwd: project, env, stdio: "ignore" });
  const load = [loadavg()[0]];
  const rows = [];
  for (const n of COUNTS) {
    const timeout = WINDOW_S + 10 + n;
    const children = Array.from({ length: n }, () =>
      spawn(process.execPath, [cli, "run", "--role", "Aya", "--timeout", String(timeout), "--", "sh", "-c", sprite], {
        cwd: project,
        env,
        stdio: "ignore",
      }),
    );
    const done = children.map((c) => new Promise((resolve) => c.on("exit", resolve)));
    // Started: each supervisor has a sprite (a child process) and has followed it a while.
    const hasChild = (pid) => spawnSync("pgrep", ["-P", String(pid)]).status === 0;
    while (!children.every((c) => hasChild(c.pid))) await sleep(100);
    await sleep(2000);
    const before = children.map((c) => cpuOf(c.pid));
    const t0 = performance.now();
    await sleep(WINDOW_S * 1000);
    const after = children.map((c) => cpuOf(c.pid));
    const wall = (performance.now() - t0) / 1000;
    const rss = children.map((c) => rssMbOf(c.pid)).filter((x) => x !== undefined);
    const cpuPct = after
      .map((a, i) => (a === undefined || before[i] === undefined ? undefined : ((a - before[i]) / wall) * 100))
      .filter((x) => x !== undefined);
    load.push(loadavg()[0]);
    for (const c of children) c.kill("SIGTERM");
    await Promise.all(done);
    rows.push({ n, rss: median(rss), rssMax: Math.max(...rss), cpu: median(cpuPct), cpuMax: Math.max(...cpuPct) });
  }
  console.log(
    `supervisor per followed run: one \`pmagent run\` process per run, each sprite printing an INFO event every ${EVERY_MS} ms; sampled over ${WINDOW_S} s once all run`,
  );
  console.log(
    `load average (1 min) during the run: ${Math.min(...load).toFixed(2)}–${Math.max(...load).toFixed(2)} on ${spawnSync("nproc").stdout?.toString().trim() || "?"} cores`,
  );
  for (const r of rows) {
    const goal = r.n === 16 ? `   goal ≤ 15 MB and ≤ 2 %: ${r.rss <= 15 && r.cpu <= 2 ? "met" : "missed"}` : "";
    console.log(
      `  ${String(r.n).padStart(2)} at once: RSS ${r.rss.toFixed(0)} MB per run (max ${r.rssMax.toFixed(0)}), CPU ${r.cpu.toFixed(1)} % of a core per run (max ${r.cpuMax.toFixed(1)})${goal}`,
    );
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
