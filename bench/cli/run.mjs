// bench/cli: the wall time of whole `pmagent` processes a person or a sprite waits for, beside a
// bare `node -e 0` started in the same run (the baseline of issue 38): `--version`, `--help`,
// `bb list` (5 entries), `runs list` and `kai status` on the embedded store, `kai status` again in a
// repository with history (300 commits, a STATE document the lane's cycles were applied to: the
// git reads a real project's answer makes), and `emit INFO` in a sprite's environment (LATTICE_*
// set, the outbox's directory there). Several rounds; in each the
// commands take turns (A B C … A B C …) and each command's figure is its median over the round;
// the ratio to node is taken per round, and the medians over the rounds are printed.
// Usage: npm run build && node --import tsx bench/cli/run.mjs   (env: CLI_BENCH_ROUNDS=5, CLI_BENCH_REPEAT=9)
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { performance } from "node:perf_hooks";
import { HistoryRepo } from "../../test/kai/history.ts";

const ROUNDS = Number(process.env.CLI_BENCH_ROUNDS ?? 5);
const REPEAT = Number(process.env.CLI_BENCH_REPEAT ?? 9);
const root = join(fileURLToPath(import.meta.url), "..", "..", "..");
const cli = join(root, "dist/bin/main.js");
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const dir = mkdtempSync(join(tmpdir(), "pmagent-bench-cli-"));
const project = join(dir, "project");
const workspace = join(dir, "workspace");
mkdirSync(project);
mkdirSync(join(workspace, ".lattice"), { recursive: true });
// The project's own environment, without a store chosen elsewhere (PMAGENT_SQLITE_PATH, DATABASE_URL).
const env = Object.fromEntries(
  Object.entries(process.env).filter(
    ([k]) => !k.startsWith("PMAGENT_") && !k.startsWith("LATTICE_") && k !== "DATABASE_URL",
  ),
);
const sprite = {
  ...env,
  LATTICE_SPRITE_ID: "bench-sprite",
  LATTICE_WORK_ITEM_ID: "bench-item",
  LATTICE_WORKSPACE: workspace,
};
const pmagent = (args, input, cwd = project) =>
  execFileSync(process.execPath, [cli, ...args], { cwd, env, input, stdio: ["pipe", "pipe", "pipe"] });

/**
 * The repository with history (test/kai/history.ts writes it in one `git fast-import`): 299
 * squash-merged pull requests a day apart after the initial import, each changing a file under
 * docs/, every 25th applying the lane's proposal to the STATE document (its section in Japanese,
 * as the origin writes it) and naming the cycle; an origin on github.com.
 */
function historyRepo() {
  const day = (i) => new Date(Date.UTC(2026, 0, 1) + i * 86_400_000).toISOString();
  const state = (cycles) =>
    `# 現在の状態\n\n## Layer B: doc_update\n\n${Array.from({ length: cycles }, (_, k) => `- cycle-${k + 1} applied\n`).join("")}\n### 既知のギャップ\n\n- gap ${cycles}\n`;
  const prs = Array.from({ length: 299 }, (_, n) => {
    const i = n + 2;
    const cycle = i % 25 === 0 ? i / 25 : null;
    return {
      at: day(i),
      title: cycle ? `Apply doc_update proposal for cycle-${cycle}` : `docs: note ${i}`,
      files: {
        [`docs/note-${i % 40}.md`]: `# Note ${i}\n\nline ${i}\n`,
        ...(cycle ? { "STATE/current_state.md": state(cycle) } : {}),
      },
    };
  });
  const repo = new HistoryRepo({ at: day(1), files: { "STATE/current_state.md": state(0) } }, prs);
  execFileSync("git", ["remote", "add", "origin", "https://github.com/bench/history.git"], { cwd: repo.dir });
  return repo;
}
let history;
try {
  execFileSync("git", ["init", "-q", "-b", "main"], { cwd: project });
  pmagent(["init"]);
  for (let i = 1; i <= 5; i++)
    pmagent(
      ["bb", "post", "-"],
      JSON.stringify({
        id: `bench-${i}`,
        to: "Aya",
        kind: "doc_update_proposal_request",
        payload: { summary: `entry ${i}` },
      }),
    );

  history = historyRepo();
  pmagent(["init"], undefined, history.dir);

  const BASE = "node -e 0";
  const cases = [
    { name: BASE, argv: ["-e", "0"] },
    { name: "pmagent --version", argv: [cli, "--version"] },
    { name: "pmagent --help", argv: [cli, "--help"] },
    { name: "pmagent bb list (5 entries)", argv: [cli, "bb", "list"], goal: 2 },
    { name: "pmagent runs list", argv: [cli, "runs", "list"], goal: 2 },
    { name: "pmagent kai status", argv: [cli, "kai", "status"], goal: 2 },
    { name: "pmagent kai status (history)", argv: [cli, "kai", "status"], cwd: history.dir, goal: 2 },
    {
      name: "pmagent emit INFO --message …",
      argv: [cli, "emit", "INFO", "--message", "bench event", "--kind", "progress"],
      env: sprite,
      goal: 1.5,
    },
  ];
  const perRound = new Map(cases.map((c) => [c.name, { ms: [], ratio: [] }]));
  const load = [loadavg()[0]];
  for (let round = 0; round < ROUNDS; round++) {
    const times = new Map(cases.map((c) => [c.name, []]));
    for (let i = 0; i < REPEAT; i++) {
      for (const c of cases) {
        const t0 = performance.now();
        const r = spawnSync(process.execPath, c.argv, {
          cwd: c.cwd ?? project,
          env: c.env ?? env,
          stdio: ["ignore", "ignore", "pipe"],
        });
        times.get(c.name).push(performance.now() - t0);
        if (r.status !== 0) throw new Error(`${c.name} exited with ${r.status}: ${r.stderr}`);
      }
    }
    const base = median(times.get(BASE));
    for (const c of cases) {
      const ms = median(times.get(c.name));
      perRound.get(c.name).ms.push(ms);
      perRound.get(c.name).ratio.push(ms / base);
    }
    load.push(loadavg()[0]);
  }
  console.log(
    `CLI start-up: wall ms per process, median of ${REPEAT} runs per round, ${ROUNDS} rounds (commands taking turns); ratio to \`${BASE}\` of the same round, median over rounds`,
  );
  console.log(
    `load average (1 min) during the run: ${Math.min(...load).toFixed(2)}–${Math.max(...load).toFixed(2)} on ${spawnSync("nproc").stdout?.toString().trim() || "?"} cores`,
  );
  for (const c of cases) {
    const { ms, ratio } = perRound.get(c.name);
    const r = median(ratio);
    const goal = c.goal === undefined ? "" : `   goal ≤ ${c.goal}× ${r <= c.goal ? "met" : "missed"}`;
    console.log(
      `  ${c.name.padEnd(32)} ${median(ms).toFixed(1).padStart(7)} ms   ×${r.toFixed(2)} (rounds ${Math.min(...ratio).toFixed(2)}–${Math.max(...ratio).toFixed(2)})${goal}`,
    );
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
  history?.cleanup();
}
