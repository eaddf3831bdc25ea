// Kai benchmark: what_changed (7 days) and lane_status on a repository of 50,000 commits and a
// blackboard of 20,000 entries, beside `git log --since=7.days --name-status` on the same
// repository in the same run. Run: `npm run build && node bench/kai/run.mjs` (KAI_BENCH_COMMITS,
// KAI_BENCH_ENTRIES, KAI_BENCH_REPEAT override the sizes).
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { performance } from "node:perf_hooks";
import { Blackboard, SqliteStore, answer, docUpdateLane, migrate, migrations, parseConfig, collectLaneBoard } from "../../dist/index.js";

const COMMITS = Number(process.env.KAI_BENCH_COMMITS ?? 50_000);
const ENTRIES = Number(process.env.KAI_BENCH_ENTRIES ?? 20_000);
const REPEAT = Number(process.env.KAI_BENCH_REPEAT ?? 5);
const DAYS = 365;
// Outside the worktree: the generated repository's files must not be seen by tsc or eslint.
const OUT = process.env.KAI_BENCH_DIR ?? join(tmpdir(), "pmagent-bench-kai");
const REPO = join(OUT, `repo-${COMMITS}`);
const DB = join(OUT, `board-${ENTRIES}.db`);
const NOW = Date.now();
const DAY = 86_400_000;

/** A linear history with a merged pull request every 25 commits, written with git fast-import. */
function buildRepo() {
  if (existsSync(join(REPO, ".git"))) return;
  rmSync(REPO, { recursive: true, force: true });
  mkdirSync(REPO, { recursive: true });
  spawnSync("git", ["init", "-q", "-b", "main", REPO]);
  const dirs = ["src/core", "src/lane", "docs/pm", "docs/guide", "STATE", "reports/doc_update_proposals", ".github/workflows"];
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
    const path = dir === "STATE" ? "STATE/current_state.md" : `${dir}/f${i % 700}.${dir.startsWith("src") ? "ts" : dir.startsWith(".github") ? "yml" : "md"}`;
    const body = dir === "STATE" ? `# State\n\n## Layer B / doc_update v1\n\nrevision ${i}\n\n### Gaps\n\n- gap ${i % 7}\n` : `content ${i}\n`;
    if (i > 0 && i % 25 === 0) {
      // a side commit, then its merge: "Merge pull request #N"
      const side = ++mark;
      chunks.push(`commit refs/heads/side\nmark :${side}\ncommitter Dev <dev@example.invalid> ${t - 60} +0000\n${data(`work for #${pr}`)}from :${last}\nM 100644 inline ${path}\n${data(body)}\n`);
      const merge = ++mark;
      chunks.push(`commit refs/heads/main\nmark :${merge}\ncommitter Dev <dev@example.invalid> ${t} +0000\n${data(`Merge pull request #${pr} from team/b${pr}\n\nPR ${pr}`)}from :${last}\nmerge :${side}\n\n`);
      pr++;
      last = merge;
      continue;
    }
    const m = ++mark;
    const subject = i % 10 === 3 ? `change ${i} (#${100_000 + i})` : `change ${i}`;
    chunks.push(`commit refs/heads/main\nmark :${m}\ncommitter Dev <dev@example.invalid> ${t} +0000\n${data(subject)}${last ? `from :${last}\n` : ""}M 100644 inline ${path}\n${data(body)}\n`);
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
  if ((await store.get("SELECT COUNT(*) AS n FROM bb_entries"))?.n >= ENTRIES) return board;
  const chain = [
    ["Human", "Aya", "doc_update_proposal_request", ""],
    ["Aya", "Sho", "doc_update_review_request", "-review"],
    ["Sho", "Tsugu", "doc_update_apply_request", "-apply"],
    ["Tsugu", "Gen", "pm_snapshot_request", "-pm_snapshot"],
    ["Gen", "Hana", "pm_snapshot_done", "-done"],
  ];
  const cycles = Math.ceil(ENTRIES / chain.length);
  for (let c = 0; c < cycles; c++) {
    const t0 = NOW - DAYS * DAY + (c * DAYS * DAY) / cycles;
    let id = `req-${c}`;
    for (let k = 0; k < chain.length; k++) {
      const [from, to, kind, suffix] = chain[k];
      id = k === 0 ? id : `${id}${suffix}`;
      const at = new Date(t0 + k * 3_600_000).toISOString();
      const last = c === cycles - 1 && k === chain.length - 1;
      await board.put("bench", {
        id, from, to, project_id: "bench", kind, status: last ? "open" : "done",
        payload: { summary: `${kind} of cycle ${c}`, details: {}, refs: { artifact_path: `reports/doc_update_proposals/${id}.json` } },
        target_docs: ["STATE/current_state.md"], created_at: at, updated_at: new Date(t0 + (k + 1) * 3_600_000).toISOString(), source_issue: 841,
      });
    }
  }
  return board;
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

async function measure(fn) {
  await fn(); // warm-up: page cache, prepared statements
  const xs = [];
  for (let i = 0; i < REPEAT; i++) {
    const t = performance.now();
    await fn();
    xs.push(performance.now() - t);
  }
  return median(xs);
}

mkdirSync(OUT, { recursive: true });
let t = performance.now();
buildRepo();
console.log(`repository: ${COMMITS} commits (${((performance.now() - t) / 1000).toFixed(1)} s to build or reuse) at ${REPO}`);
const store = new SqliteStore(DB);
await migrate(store, migrations);
t = performance.now();
const board = await buildBoard(store);
console.log(`blackboard: ${(await store.get("SELECT COUNT(*) AS n FROM bb_entries")).n} entries (${((performance.now() - t) / 1000).toFixed(1)} s to build or reuse)`);
console.log("events: not measured — the run/event store (supervisor) is not in this branch yet");

const config = parseConfig(JSON.stringify({ project_id: "bench", lanes: [docUpdateLane()] }), "bench");
const options = { config, sources: { repo: REPO, board: (w, lane) => collectLaneBoard(board, lane, ["Human"], w) } };
const request = (type, params = {}) => ({ version: "kai_request_v1", request_id: `bench-${type}`, from: { actor_type: "workflow" }, project_id: "bench", type, lane: { layer: "layer_b", name: "doc_update" }, params });

const check = await answer(request("what_changed"), options);
if (check.status !== "ok") throw new Error(JSON.stringify(check.notes));
writeFileSync(join(OUT, "what_changed.json"), JSON.stringify(check, null, 2));
console.log(`what_changed saw ${check.notes[0]}`);

const baseline = await measure(() => time("git", ["-C", REPO, "log", "--since=7.days", "--name-status"]));
const changes = await measure(() => answer(request("what_changed", { time_window_days: 7 }), options));
const status = await measure(() => answer(request("lane_status"), options));
const past = await measure(() => answer(request("lane_status", { as_of: new Date(NOW - 30 * DAY).toISOString() }), options));
await store.close();

const row = (name, ms) => `${name.padEnd(44)} ${ms.toFixed(1).padStart(8)} ms   ${(ms / baseline).toFixed(2).padStart(5)}× git   ${ms < 1000 ? "< 1 s" : "OVER 1 s"}${ms / baseline <= 3 ? "" : "   OVER 3× git"}`;
console.log(`\nmedian of ${REPEAT} runs each, same repository, same process:`);
console.log(`${"git log --since=7.days --name-status".padEnd(44)} ${baseline.toFixed(1).padStart(8)} ms   (baseline)`);
console.log(row("kai what_changed (7 days)", changes));
console.log(row("kai lane_status", status));
console.log(row("kai lane_status as_of 30 days ago", past));
