// bench/start: how long a run takes to start on a large repository (issue 38), from `pmagent run
// --entry ID` (claim, workspace, sandbox) to the sprite's first instruction, beside the same
// work done by hand in the same run: `git worktree add` + `bwrap … true`, and `git clone --shared`
// (what a run's workspace is made with today) + `bwrap … true`. The repository has
// START_BENCH_FILES files (default 50,000) in one commit. Several rounds; in each the three take
// turns, and the ratio to the by-hand worktree is taken per round; medians over rounds are printed.
// Usage: npm run build && node bench/start/run.mjs   (env: START_BENCH_ROUNDS=3, START_BENCH_FILES=50000)
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROUNDS = Number(process.env.START_BENCH_ROUNDS ?? 3);
const FILES = Number(process.env.START_BENCH_FILES ?? 50_000);
const root = join(fileURLToPath(import.meta.url), "..", "..", "..");
const cli = join(root, "dist/bin/main.js");
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
/** Wall clock in ms with sub-ms digits, comparable with `date +%s%N` in the sprite. */
const nowMs = () => performance.timeOrigin + performance.now();

const dir = mkdtempSync(join(tmpdir(), "pmagent-bench-start-"));
const repo = join(dir, "repo");
const env = Object.fromEntries(
  Object.entries(process.env).filter(
    ([k]) => !k.startsWith("PMAGENT_") && !k.startsWith("LATTICE_") && k !== "DATABASE_URL",
  ),
);
const git = (args, cwd = repo) =>
  execFileSync("git", ["-c", "user.name=bench", "-c", "user.email=bench@example.invalid", ...args], {
    cwd,
    env,
    stdio: ["ignore", "pipe", "pipe"],
    maxBuffer: 1 << 28,
  });
const pmagent = (args, input) =>
  execFileSync(process.execPath, [cli, ...args], { cwd: repo, env, input, stdio: ["pipe", "pipe", "pipe"] });
// Each case writes and removes 50,000 files; flushed before the next case starts (untimed), the
// previous case's writeback and discards do not land in the next one's time.
const settleDisk = () => execFileSync("sync");
// The sandbox a run gets, by hand: the machine read-only, the workspace writable.
const bwrapTrue = (ws) =>
  execFileSync(
    "bwrap",
    [
      "--ro-bind",
      "/",
      "/",
      "--dev",
      "/dev",
      "--proc",
      "/proc",
      "--tmpfs",
      "/tmp",
      "--bind",
      ws,
      ws,
      "--chdir",
      ws,
      "--unshare-pid",
      "--die-with-parent",
      "--",
      "true",
    ],
    { env, stdio: "ignore" },
  );

try {
  mkdirSync(repo);
  git(["init", "-q", "-b", "main"]);
  const t0 = nowMs();
  for (let i = 0; i < FILES; i++) {
    const sub = join(repo, "src", `d${Math.floor(i / 500)}`, `e${Math.floor(i / 50) % 10}`);
    if (i % 50 === 0) mkdirSync(sub, { recursive: true });
    writeFileSync(join(sub, `f${i}.txt`), `file ${i}\n`);
  }
  pmagent(["init"]);
  git(["add", "-A"]);
  git(["commit", "-q", "-m", "a large repository"]);
  settleDisk();
  console.log(`repository: ${FILES} files (+ pmagent config), made in ${((nowMs() - t0) / 1000).toFixed(1)} s`);

  const cases = {
    "git worktree add + bwrap … true (by hand)": (round) => {
      const ws = join(dir, `wt-${round}`);
      const s = nowMs();
      git(["worktree", "add", "--quiet", "--detach", ws, "HEAD"]);
      bwrapTrue(ws);
      const ms = nowMs() - s;
      git(["worktree", "remove", "--force", ws]);
      settleDisk();
      return ms;
    },
    "git clone --shared + bwrap … true (by hand)": (round) => {
      const ws = join(dir, `clone-${round}`);
      const s = nowMs();
      git(["clone", "--quiet", "--shared", repo, ws], dir);
      bwrapTrue(ws);
      const ms = nowMs() - s;
      rmSync(ws, { recursive: true, force: true });
      settleDisk();
      return ms;
    },
    "pmagent run --entry ID → first instruction": (round) => {
      const id = `bench-start-${round}`;
      pmagent(
        ["bb", "post", "-"],
        JSON.stringify({ id, to: "Aya", kind: "doc_update_proposal_request", payload: { summary: "start" } }),
      );
      const before = new Set(
        readdirSync(join(repo, ".pmagent", "workspaces"), { withFileTypes: false }).filter(Boolean),
      );
      const s = nowMs();
      const r = spawnSync(
        process.execPath,
        [cli, "run", "--role", "Aya", "--entry", id, "--", "sh", "-c", "date +%s%N > first-instruction.txt"],
        { cwd: repo, env, stdio: ["ignore", "pipe", "pipe"] },
      );
      if (r.status !== 0) throw new Error(`pmagent run exited with ${r.status}: ${r.stderr}`);
      const ws = readdirSync(join(repo, ".pmagent", "workspaces")).find((n) => !before.has(n));
      const wsPath = join(repo, ".pmagent", "workspaces", ws);
      const first = Number(BigInt(readFileSync(join(wsPath, "first-instruction.txt"), "utf8").trim()) / 1000n) / 1000;
      rmSync(wsPath, { recursive: true, force: true });
      settleDisk();
      return first - s;
    },
  };
  mkdirSync(join(repo, ".pmagent", "workspaces"), { recursive: true });
  const BASE = Object.keys(cases)[0];
  const per = new Map(Object.keys(cases).map((n) => [n, { ms: [], ratio: [], extra: [] }]));
  const load = [loadavg()[0]];
  for (let round = 0; round < ROUNDS; round++) {
    const times = {};
    for (const [name, run] of Object.entries(cases)) times[name] = run(round);
    for (const name of Object.keys(cases)) {
      per.get(name).ms.push(times[name]);
      per.get(name).ratio.push(times[name] / times[BASE]);
      per.get(name).extra.push(times[name] - times[BASE]);
    }
    load.push(loadavg()[0]);
  }
  console.log(
    `run start-up on a ${FILES}-file repository: wall ms, ${ROUNDS} rounds (the three taking turns); ratio to the by-hand worktree of the same round, median over rounds`,
  );
  console.log(
    `load average (1 min) during the run: ${Math.min(...load).toFixed(2)}–${Math.max(...load).toFixed(2)} on ${spawnSync("nproc").stdout?.toString().trim() || "?"} cores`,
  );
  for (const [name, { ms, ratio, extra }] of per) {
    const r = median(ratio);
    const goal = name.startsWith("pmagent") ? `   goal ≤ 1.5× ${r <= 1.5 ? "met" : "missed"}` : "";
    // The checkout of the files dominates on a slow disk; the time beyond it is what pmagent adds.
    const beyond = name === BASE ? "" : `   ${median(extra) >= 0 ? "+" : ""}${median(extra).toFixed(0)} ms beyond it`;
    console.log(
      `  ${name.padEnd(46)} ${median(ms).toFixed(0).padStart(7)} ms   ×${r.toFixed(2)} (rounds ${Math.min(...ratio).toFixed(2)}–${Math.max(...ratio).toFixed(2)})${beyond}${goal}`,
    );
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
