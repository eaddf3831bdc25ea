// Kai benchmark: what_changed (7 days) and lane_status on a repository of 50,000 commits, a
// blackboard of 20,000 entries and 200,000 run events (5,000 supervisor runs of the lane's roles,
// with their events, spread over the year), beside `git log --since=7.days --name-status` on the
// same repository in the same run. Run: `npm run build && node bench/kai/run.mjs`
// (KAI_BENCH_COMMITS, KAI_BENCH_ENTRIES, KAI_BENCH_RUNS, KAI_BENCH_EVENTS, KAI_BENCH_REPEAT override
// the sizes; KAI_BENCH_DIR the cache directory). The generated repository and database are cached
// under the temp directory, keyed by their sizes and the day they were made (the answers look at
// the last 7 days, so a cache from another day would show an empty window).
// It also measures lane_status on two boards with no completed cycle, of 200 and 20,000 entries
// (KAI_BENCH_STALLED_SMALL, KAI_BENCH_STALLED_LARGE), and prints the ratio: it should stay within 2×.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { performance } from "node:perf_hooks";
import * as pmagent from "../../dist/index.js";
// Pieces below the library API the bench builds its runs with: from their modules.
import { Redactor } from "../../dist/core/index.js";
import { collectLaneBoard } from "../../dist/kai/index.js";
import { OUTBOX_START, RunIngestor, Sprite, outboxPath } from "../../dist/lattice/index.js";

const { Blackboard, SqliteStore, answer, docUpdateLane, migrate, migrations, parseConfig, RunStore } = pmagent;

const COMMITS = Number(process.env.KAI_BENCH_COMMITS ?? 50_000);
const ENTRIES = Number(process.env.KAI_BENCH_ENTRIES ?? 20_000);
const RUNS = Number(process.env.KAI_BENCH_RUNS ?? 5_000);
const EVENTS = Number(process.env.KAI_BENCH_EVENTS ?? 200_000);
const REPEAT = Number(process.env.KAI_BENCH_REPEAT ?? 5);
const DAYS = 365;
const NOW = Date.now();
const DAY = 86_400_000;
const HOUR = 3_600_000;
const STAMP = new Date(NOW).toISOString().slice(0, 10);
// Outside the worktree: the generated repository's files must not be seen by tsc or eslint.
const OUT = process.env.KAI_BENCH_DIR ?? join(tmpdir(), "pmagent-bench-kai");
const REPO = join(OUT, `repo-${COMMITS}-${STAMP}`);
// "r2": runs are made for the newest cycles first (a cache from before lacks runs in the last weeks).
const DB = join(OUT, `board-${ENTRIES}-runs-${RUNS}-events-${EVENTS}-r2-${STAMP}.db`);
// Sprites write their outbox with an fsync per event: on tmpfs when there is one.
const SCRATCH = existsSync("/dev/shm") ? "/dev/shm" : tmpdir();
const CHAIN = [
  ["Human", "Aya", "doc_update_proposal_request", ""],
  ["Aya", "Sho", "doc_update_review_request", "-review"],
  ["Sho", "Tsugu", "doc_update_apply_request", "-apply"],
  ["Tsugu", "Gen", "pm_snapshot_request", "-pm_snapshot"],
  ["Gen", "Hana", "pm_snapshot_done", "-done"],
];
const CYCLES = Math.ceil(ENTRIES / CHAIN.length);
// Spread over the year up to 6 hours ago, so that the latest cycle's five entries are all in the past.
const cycleStart = (c) => NOW - 6 * HOUR - DAYS * DAY + (c * DAYS * DAY) / CYCLES;
const entryId = (c, k) =>
  `req-${c}${CHAIN.slice(1, k + 1)
    .map((step) => step[3])
    .join("")}`;

/** A linear history with a merged pull request every 25 commits, written with git fast-import. */
function buildRepo() {
  if (existsSync(join(REPO, ".git"))) return;
  rmSync(REPO, { recursive: true, force: true });
  mkdirSync(REPO, { recursive: true });
  spawnSync("git", ["init", "-q", "-b", "main", REPO]);
  const dirs = [
    "src/core",
    "src/lane",
    "docs/pm",
    "docs/guide",
    "STATE",
    "reports/doc_update_proposals",
    ".github/workflows",
  ];
  const chunks = [];
  const data = (text) => `data ${Buffer.byteLength(text)}\n${text}\n`;
  let mark = 0;
  let last = 0;
  const start = Math.floor((NOW - DAYS * DAY) / 1000);
  const step = (DAYS * DAY) / 1000 / COMMITS;
  let pr = 1;
  for (let i = 0; i < COMMITS; i++) {
    const t = Math.floor(start + i * step);
    const dir = dirs[i % dirs.length];
    const path =
      dir === "STATE"
        ? "STATE/current_state.md"
        : `${dir}/f${i % 700}.${dir.startsWith("src") ? "ts" : dir.startsWith(".github") ? "yml" : "md"}`;
    const body =
      dir === "STATE"
        ? `# State\n\n## Layer B / doc_update v1\n\nrevision ${i}\n\n### Gaps\n\n- gap ${i % 7}\n`
        : `content ${i}\n`;
    if (i > 0 && i % 25 === 0) {
      // a side commit, then its merge: "Merge pull request #N"
      const side = ++mark;
      chunks.push(
        `commit refs/heads/side\nmark :${side}\ncommitter Dev <dev@example.invalid> ${t - 60} +0000\n${data(`work for #${pr}`)}from :${last}\nM 100644 inline ${path}\n${data(body)}\n`,
      );
      const merge = ++mark;
      chunks.push(
        `commit refs/heads/main\nmark :${merge}\ncommitter Dev <dev@example.invalid> ${t} +0000\n${data(`Merge pull request #${pr} from team/b${pr}\n\nPR ${pr}`)}from :${last}\nmerge :${side}\n\n`,
      );
      pr++;
      last = merge;
      continue;
    }
    const m = ++mark;
    const subject = i % 10 === 3 ? `change ${i} (#${100_000 + i})` : `change ${i}`;
    chunks.push(
      `commit refs/heads/main\nmark :${m}\ncommitter Dev <dev@example.invalid> ${t} +0000\n${data(subject)}${last ? `from :${last}\n` : ""}M 100644 inline ${path}\n${data(body)}\n`,
    );
    last = m;
  }
  const r = spawnSync("git", ["-C", REPO, "fast-import", "--quiet"], { input: chunks.join(""), maxBuffer: 1 << 30 });
  if (r.status !== 0) throw new Error(`fast-import failed: ${r.stderr}`);
  spawnSync("git", ["-C", REPO, "checkout", "-q", "main"]);
  spawnSync("git", ["-C", REPO, "branch", "-D", "side"]);
}

/** Cycles of five entries (Human → Aya → Sho → Tsugu → Gen → Hana) spread over the year. */
async function buildBoard(store) {
  const board = new Blackboard(store, { projectId: "bench", humans: ["Human"] });
  for (let c = 0; c < CYCLES; c++) {
    const t0 = cycleStart(c);
    for (let k = 0; k < CHAIN.length; k++) {
      const [from, to, kind] = CHAIN[k];
      const id = entryId(c, k);
      const at = new Date(t0 + k * HOUR).toISOString();
      const last = c === CYCLES - 1 && k === CHAIN.length - 1;
      await board.put("bench", {
        id,
        from,
        to,
        project_id: "bench",
        kind,
        status: last ? "open" : "done",
        payload: {
          summary: `${kind} of cycle ${c}`,
          details: {},
          refs: { artifact_path: `reports/doc_update_proposals/${id}.json` },
        },
        target_docs: ["STATE/current_state.md"],
        created_at: at,
        updated_at: new Date(t0 + (k + 1) * HOUR).toISOString(),
        source_issue: 841,
      });
    }
  }
}

/**
 * RUNS supervisor runs with EVENTS events in all, made the way the supervisor makes them: a run row
 * (RunStore), a sprite writing its outbox (Sprite), the outbox stored once per event (RunIngestor),
 * the run finished (RunStore.update). One run per entry its role handled, for cycles spread evenly
 * over the year back from the latest; every 40th run fails first and is retried.
 */
async function buildRuns(store) {
  let clock = 0;
  const runs = new RunStore(store, "bench", () => clock);
  const redactor = new Redactor([]);
  const ws = join(SCRATCH, `pmagent-bench-kai-ws-${process.pid}`);
  rmSync(ws, { recursive: true, force: true });
  mkdirSync(ws, { recursive: true });
  const perRun = Math.max(4, Math.round(EVENTS / RUNS));
  const cyclesWithRuns = Math.min(CYCLES, Math.ceil(RUNS / (CHAIN.length - 0.1)));
  let made = 0;
  let events = 0;
  const one = async (c, k, attempt, fail) => {
    const [, role] = CHAIN[k];
    const entry = entryId(c, k);
    const id = `run-${c}-${k}-${attempt}`;
    clock = cycleStart(c) + k * HOUR + attempt * 10 * 60_000 + 60_000;
    await runs.create({
      id,
      project_id: "bench",
      role,
      entry_id: entry,
      sprite_id: role.toLowerCase(),
      work_item_id: entry,
      command: ["node", `examples/doc-update-lane/${role.toLowerCase()}.mjs`],
      workspace: ws,
      checkpoint_dir: join(ws, "..", "checkpoints"),
      run_dir: join(ws, "..", "run"),
      worker: `worker-${role}`,
      host: "bench",
      supervisor_pid: 1,
      gate: null,
    });
    await runs.update(id, { state: "running", sprite_pid: 2 });
    rmSync(outboxPath(ws), { force: true });
    const sprite = new Sprite({
      spriteId: role.toLowerCase(),
      workItemId: entry,
      workspace: ws,
      env: {},
      write: () => undefined,
      clock: () => clock,
    });
    const tick = () => (clock += 1000);
    sprite.phaseStarted("work");
    for (let i = 0; i < perRun - 4; i++, tick())
      sprite.info(`step ${i} of ${entry}`, { kind: "progress", metadata: { i } });
    sprite.artifact("json", {
      ref: `reports/doc_update_proposals/${entry}.json`,
      metadata: { path: `reports/doc_update_proposals/${entry}.json` },
    });
    sprite.phaseFinished("work", !fail);
    sprite.completed(fail ? "failure" : "success", fail ? "model timed out" : `done ${entry}`);
    const ingest = new RunIngestor({
      store,
      runId: id,
      attempt: 1,
      outboxPath: outboxPath(ws),
      violationsPath: join(ws, "no-violations.log"),
      outbox: OUTBOX_START,
      stdoutOffset: 0,
      stderrOffset: 0,
      logBytes: 0,
      logTruncated: false,
      redactor,
      clock: () => clock,
    });
    await ingest.finish();
    await runs.update(id, {
      state: fail ? "failed" : "succeeded",
      exit_code: fail ? 1 : 0,
      sprite_pid: null,
      finished: true,
      entry_synced: true,
      ...(fail ? { reason: "sprite exited 1" } : {}),
    });
    made++;
    events += perRun;
  };
  // Newest cycles first: retries use up some runs, and the answers look at the latest weeks.
  for (let n = 0; n < cyclesWithRuns && made < RUNS; n++) {
    const c = CYCLES - 1 - Math.floor((n * CYCLES) / cyclesWithRuns);
    // The latest cycle's last entry is still open: no run has picked it yet.
    for (let k = 0; k < CHAIN.length && made < RUNS; k++) {
      if (c === CYCLES - 1 && k === CHAIN.length - 1) continue;
      if (made % 40 === 39) await one(c, k, 1, true);
      if (made < RUNS) await one(c, k, made % 40 === 0 && made > 0 ? 2 : 1, false);
    }
    if (made % 500 < CHAIN.length) process.stdout.write(`\r  runs ${made}/${RUNS}, events ${events}`);
  }
  process.stdout.write("\n");
  rmSync(ws, { recursive: true, force: true });
}

/** The blackboard and runs, built once into a temporary file and renamed into the cache. */
async function buildDatabase() {
  if (existsSync(DB)) return;
  const tmp = `${DB}.tmp-${process.pid}`;
  const store = new SqliteStore(tmp);
  try {
    await migrate(store, migrations);
    await buildBoard(store);
    await buildRuns(store);
  } finally {
    await store.close();
  }
  renameSync(tmp, DB);
}

function time(cmd, args) {
  return new Promise((resolve, reject) => {
    const t = performance.now();
    const child = spawn(cmd, args, { stdio: ["ignore", "pipe", "inherit"] });
    child.stdout.on("data", () => undefined);
    child.on("error", reject);
    child.on("close", () => resolve(performance.now() - t));
  });
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/**
 * Median time of each of `fns`, measured in rounds (one call of each per round, after a warm-up
 * round for the page cache and prepared statements): on a loaded machine a busy spell then slows
 * every series alike instead of one of them, so the ratios stay comparable.
 */
async function measure(fns) {
  for (const fn of fns) await fn();
  const xs = fns.map(() => []);
  for (let i = 0; i < REPEAT; i++) {
    for (const [k, fn] of fns.entries()) {
      const t = performance.now();
      await fn();
      xs[k].push(performance.now() - t);
    }
  }
  return xs.map(median);
}

mkdirSync(OUT, { recursive: true });
let t = performance.now();
buildRepo();
console.log(
  `repository: ${COMMITS} commits (${((performance.now() - t) / 1000).toFixed(1)} s to build or reuse) at ${REPO}`,
);
t = performance.now();
await buildDatabase();
const store = new SqliteStore(DB);
await migrate(store, migrations);
const count = async (sql) => Number((await store.get(sql)).n);
console.log(
  `database: ${await count("SELECT COUNT(*) AS n FROM bb_entries")} entries, ${await count("SELECT COUNT(*) AS n FROM lattice_runs")} runs, ${await count("SELECT COUNT(*) AS n FROM lattice_run_events")} events ` +
    `(${((performance.now() - t) / 1000).toFixed(1)} s to build or reuse) at ${DB}`,
);

const config = parseConfig(JSON.stringify({ project_id: "bench", lanes: [docUpdateLane()] }), "bench");
/**
 * The sources the CLI and server use: the opened project's (blackboard, runs with their events,
 * actions, proposals, local forge); with an older build, `projectKaiSources`; before that the
 * blackboard alone, and the runs are stored but not read.
 */
let sources;
if (typeof pmagent.openProject === "function") {
  const opened = await pmagent.openProject({
    project: { root: REPO, configPath: join(REPO, "pmagent.config.json"), config },
    store,
    env: {},
  });
  sources = await opened.kaiSources({ repo: REPO });
  console.log("sources: openProject().kaiSources() (blackboard, runs)");
} else if (typeof pmagent.projectKaiSources === "function") {
  sources = pmagent.projectKaiSources({ root: REPO, configPath: join(REPO, "pmagent.config.json"), config }, store, {
    repo: REPO,
    env: {},
  });
  console.log("sources: projectKaiSources (blackboard, runs)");
} else {
  const board = new Blackboard(store, { projectId: "bench", humans: config.humans });
  sources = { repo: REPO, board: (w, lane) => collectLaneBoard(board, lane, config.humans, w) };
  console.log(
    "sources: blackboard only — this build's kai module has no runs source (projectKaiSources) yet; runs and events are stored but not read",
  );
}
const options = { config, sources };
const request = (type, params = {}) => ({
  version: "kai_request_v1",
  request_id: `bench-${type}`,
  from: { actor_type: "workflow" },
  project_id: "bench",
  type,
  lane: { layer: "layer_b", name: "doc_update" },
  params,
});

const check = await answer(request("what_changed"), options);
if (check.status !== "ok") throw new Error(JSON.stringify(check.notes));
writeFileSync(join(OUT, "what_changed.json"), JSON.stringify(check, null, 2));
const status = await answer(request("lane_status"), options);
writeFileSync(join(OUT, "lane_status.json"), JSON.stringify(status, null, 2));
console.log(`what_changed saw: ${check.notes.filter((n) => n.startsWith("Evidence")).join(" | ")}`);
console.log(
  `lane_status: ${status.payload.data.cycle.latest_cycle_id} ${status.payload.data.cycle.status}, steps ${Object.values(
    status.payload.data.steps,
  )
    .map((s) => `${s.role}:${s.status}${s.run ? `(run ${s.run.state}, ${s.run.events} events)` : ""}`)
    .join(" ")}`,
);

const [baseline, changes, laneStatus, past] = await measure([
  () => time("git", ["-C", REPO, "log", "--since=7.days", "--name-status"]),
  () => answer(request("what_changed", { time_window_days: 7 }), options),
  () => answer(request("lane_status"), options),
  () => answer(request("lane_status", { as_of: new Date(NOW - 30 * DAY).toISOString() }), options),
]);

/**
 * Boards with no completed cycle (every cycle stopped at Sho, its review in error; the newest one
 * under review), of STALLED_SMALL and STALLED_LARGE entries over the same year, each in its own
 * project of one database: lane_status must cost about the same on both (within 2×).
 */
const STALLED_SMALL = Number(process.env.KAI_BENCH_STALLED_SMALL ?? 200);
const STALLED_LARGE = Number(process.env.KAI_BENCH_STALLED_LARGE ?? 20_000);
const STALLED_DB = join(OUT, `stalled-${STALLED_SMALL}-${STALLED_LARGE}-${STAMP}.db`);
async function buildStalled(store, projectId, entries) {
  const board = new Blackboard(store, { projectId, humans: ["Human"] });
  const cycles = Math.ceil(entries / 2);
  for (let c = 0; c < cycles; c++) {
    const t0 = NOW - 6 * HOUR - DAYS * DAY + (c * DAYS * DAY) / cycles;
    const last = c === cycles - 1;
    const put = (id, from, to, kind, status, k) =>
      board.put("bench", {
        id,
        from,
        to,
        project_id: projectId,
        kind,
        status,
        payload: { summary: `${kind} of cycle ${c}`, details: {}, refs: {} },
        target_docs: ["STATE/current_state.md"],
        created_at: new Date(t0 + k * HOUR).toISOString(),
        updated_at: new Date(t0 + (k + 1) * HOUR).toISOString(),
        source_issue: 841,
      });
    await put(`req-${c}`, "Human", "Aya", "doc_update_proposal_request", "done", 0);
    await put(`req-${c}-review`, "Aya", "Sho", "doc_update_review_request", last ? "in_progress" : "error", 1);
  }
}
if (!existsSync(STALLED_DB)) {
  const tmp = `${STALLED_DB}.tmp-${process.pid}`;
  const s = new SqliteStore(tmp);
  try {
    await migrate(s, migrations);
    await buildStalled(s, "small", STALLED_SMALL);
    await buildStalled(s, "large", STALLED_LARGE);
  } finally {
    await s.close();
  }
  renameSync(tmp, STALLED_DB);
}
const stalledStore = new SqliteStore(STALLED_DB);
await migrate(stalledStore, migrations);
const stalled = (projectId) => {
  const cfg = parseConfig(JSON.stringify({ project_id: projectId, lanes: [docUpdateLane()] }), "bench");
  const board = new Blackboard(stalledStore, { projectId, humans: cfg.humans });
  const src = {
    repo: REPO,
    board: (w, lane, type) => collectLaneBoard(board, lane, cfg.humans, w, { windowed: type === "what_changed" }),
  };
  const req = { ...request("lane_status"), project_id: projectId };
  const lane = cfg.lanes[0];
  const window = { since: new Date(NOW - 7 * DAY), until: new Date(NOW) };
  return {
    status: () => answer(req, { config: cfg, sources: src }),
    board: () => collectLaneBoard(board, lane, cfg.humans, window, { windowed: false }),
  };
};
const small = stalled("small");
const large = stalled("large");
const smallAnswer = await small.status();
const largeAnswer = await large.status();
console.log(
  `\nstalled boards: ${STALLED_SMALL} and ${STALLED_LARGE} entries, no completed cycle; lane_status: ${largeAnswer.payload.data.cycle.latest_cycle_id} ${largeAnswer.payload.data.cycle.status} (large), ${smallAnswer.payload.data.cycle.latest_cycle_id} ${smallAnswer.payload.data.cycle.status} (small)`,
);
const [smallStatus, largeStatus, smallBoard, largeBoard] = await measure([
  small.status,
  large.status,
  small.board,
  large.board,
]);
await stalledStore.close();
await store.close();

const row = (name, ms) =>
  `${name.padEnd(44)} ${ms.toFixed(1).padStart(8)} ms   ${(ms / baseline).toFixed(2).padStart(5)}× git   ${ms < 1000 ? "< 1 s" : "OVER 1 s"}${ms / baseline <= 3 ? "" : "   OVER 3× git"}`;
console.log(`\nmedian of ${REPEAT} rounds (one of each per round), same repository, same process:`);
console.log(`${"git log --since=7.days --name-status".padEnd(44)} ${baseline.toFixed(1).padStart(8)} ms   (baseline)`);
console.log(row("kai what_changed (7 days)", changes));
console.log(row("kai lane_status", laneStatus));
console.log(row("kai lane_status as_of 30 days ago", past));
const ratio = (name, a, b) =>
  `${name.padEnd(44)} ${a.toFixed(1).padStart(8)} ms vs ${b.toFixed(1).padStart(8)} ms   ${(b / a).toFixed(2).padStart(5)}×${b / a <= 2 ? "" : "   OVER 2×"}`;
console.log(`\nno completed cycle, ${STALLED_SMALL} vs ${STALLED_LARGE} entries (median of ${REPEAT} rounds):`);
console.log(ratio("kai lane_status (answer, same repository)", smallStatus, largeStatus));
console.log(ratio("its blackboard read (collectLaneBoard)", smallBoard, largeBoard));
