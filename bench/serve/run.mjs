// bench/serve: GET /v1/entries and POST /v1/kai of `pmagent serve` under load on loopback
// (autocannon), beside a bare Fastify route answering a same-sized JSON body in the same run.
// Usage: npm run build && node bench/serve/run.mjs   (env: BENCH_SECONDS=5, BENCH_ENTRIES=200, BENCH_CONNECTIONS=10)
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execFileSync } from "node:child_process";
import autocannon from "autocannon";
import Fastify from "fastify";
import { Blackboard, SqliteStore, buildServer, initProject, migrate, migrations } from "../../dist/index.js";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ENTRIES = Number(process.env.BENCH_ENTRIES ?? 200);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const TOKEN = "bench-token-0123456789abcdef";
const LIMIT = 50;

function load(url, options = {}) {
  return new Promise((resolve, reject) => {
    autocannon({ url, connections: CONNECTIONS, duration: SECONDS, headers: { authorization: `Bearer ${TOKEN}`, ...(options.body ? { "content-type": "application/json" } : {}) }, ...options }, (err, r) => {
      if (err) reject(err);
      else if (r.non2xx > 0 || r.errors > 0) reject(new Error(`${url}: ${r.non2xx} non-2xx answers, ${r.errors} errors`));
      else resolve({ rps: r.requests.average, p99: r.latency.p99 });
    });
  });
}

const root = mkdtempSync(join(tmpdir(), "pmagent-bench-serve-"));
try {
  execFileSync("git", ["init", "-q", "-b", "main"], { cwd: root });
  writeFileSync(join(root, "README.md"), "bench\n");
  execFileSync("git", ["add", "."], { cwd: root });
  execFileSync("git", ["-c", "user.name=b", "-c", "user.email=b@example.com", "commit", "-q", "-m", "init"], { cwd: root });
  const project = initProject(root, { projectId: "bench" });
  const store = new SqliteStore(join(root, ".pmagent", "pmagent.db"));
  await migrate(store, migrations);
  const board = new Blackboard(store, { projectId: "bench", humans: project.config.humans });
  for (let i = 0; i < ENTRIES; i++) await board.post("Human", { id: `bench-${String(i).padStart(5, "0")}`, to: "Aya", kind: "doc_update_proposal_request", payload: { summary: `entry ${i}` } });

  const server = buildServer({ project, store, port: 0, env: { PMAGENT_TOKENS: `${TOKEN}=Human` } });
  const url = await server.listen();
  const sample = JSON.stringify(await board.list({ limit: LIMIT }));
  const bare = Fastify();
  bare.get("/bare", async (_req, reply) => reply.type("application/json").send(sample));
  const bareUrl = await bare.listen({ host: "127.0.0.1", port: 0 });
  const lane = project.config.lanes[0];
  const kaiBody = JSON.stringify({ version: "kai_request_v1", request_id: "bench", from: { actor_type: "workflow" }, project_id: "bench", type: "lane_status", lane: { layer: lane.layer, name: lane.name } });

  console.log(`bench/serve: ${ENTRIES} entries on SQLite, ${CONNECTIONS} connections, ${SECONDS}s per target, loopback`);
  const baseline = await load(`${bareUrl}/bare`);
  const list = await load(`${url}/v1/entries?limit=${LIMIT}`);
  const kai = await load(`${url}/v1/kai`, { method: "POST", body: kaiBody });
  const row = (name, r) => console.log(`${name.padEnd(34)} ${r.rps.toFixed(0).padStart(8)} req/s   p99 ${String(r.p99).padStart(4)} ms   ${(r.rps / baseline.rps).toFixed(3)}× bare req/s`);
  row("bare Fastify route (same body)", baseline);
  row(`GET /v1/entries?limit=${LIMIT}`, list);
  row("POST /v1/kai (lane_status)", kai);
  await bare.close();
  await server.close();
  await store.close();
} finally {
  rmSync(root, { recursive: true, force: true });
}
