// bench/serve: GET /v1/entries?limit=50 of `pmagent serve` under load on loopback (autocannon), beside
// (a) a bare Fastify route that runs the same query on the same database and sends the rows (the
// fair baseline) and (b) a bare Fastify route answering a constant body of the same size; at 200,
// 2,000 and 20,000 entries, several alternating rounds, medians.
// Usage: npm run build && node bench/serve/run.mjs
//   (env: BENCH_SECONDS=3 per target per round, BENCH_ROUNDS=3, BENCH_SIZES=200,2000,20000, BENCH_CONNECTIONS=10)
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execFileSync } from "node:child_process";
import autocannon from "autocannon";
import Fastify from "fastify";
import { SqliteStore, buildServer, initProject, migrate, migrations } from "../../dist/index.js";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SIZES = (process.env.BENCH_SIZES ?? "200,2000,20000").split(",").map(Number);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const TOKEN = "bench-token-0123456789abcdef";
const LIMIT = 50;
const GOAL = 0.5;

function load(url) {
  return new Promise((resolve, reject) => {
    autocannon(
      { url, connections: CONNECTIONS, duration: SECONDS, headers: { authorization: `Bearer ${TOKEN}` } },
      (err, r) => {
        if (err) reject(err);
        else if (r.non2xx > 0 || r.errors > 0)
          reject(new Error(`${url}: ${r.non2xx} non-2xx answers, ${r.errors} errors`));
        else resolve(r.requests.average);
      },
    );
  });
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function seed(store, n) {
  const base = Date.UTC(2026, 0, 1);
  await store.transaction(async (tx) => {
    for (let i = 0; i < n; i++) {
      const id = `bench-${String(i).padStart(6, "0")}`;
      const ms = base + i * 1000;
      const at = new Date(ms).toISOString();
      const entry = {
        id,
        from: "Human",
        to: "Aya",
        project_id: "bench",
        kind: "doc_update_proposal_request",
        payload: { summary: `entry ${i}` },
        created_at: at,
      };
      await tx.run(
        `INSERT INTO bb_entries (project_id, id, version, status, from_actor, to_actor, kind, created_ms, updated_ms, entry_json, content_hash, updated_at)
         VALUES ('bench', ?, 1, 'open', 'Human', 'Aya', 'doc_update_proposal_request', ?, ?, ?, ?, ?)`,
        [id, ms, ms, JSON.stringify(entry), `h${i}`, at],
      );
    }
  });
}

const results = [];
for (const size of SIZES) {
  const root = mkdtempSync(join(tmpdir(), "pmagent-bench-serve-"));
  try {
    execFileSync("git", ["init", "-q", "-b", "main"], { cwd: root });
    writeFileSync(join(root, "README.md"), "bench\n");
    execFileSync("git", ["add", "."], { cwd: root });
    execFileSync("git", ["-c", "user.name=b", "-c", "user.email=b@example.com", "commit", "-q", "-m", "init"], {
      cwd: root,
    });
    const project = initProject(root, { projectId: "bench" });
    const store = new SqliteStore(join(root, ".pmagent", "pmagent.db"));
    await migrate(store, migrations);
    await seed(store, size);
    const server = await buildServer({ project, store, port: 0, env: { PMAGENT_TOKENS: `${TOKEN}=Human` } });
    const url = await server.listen();
    const page = await (
      await fetch(`${url}/v1/entries?limit=${LIMIT}`, { headers: { authorization: `Bearer ${TOKEN}` } })
    ).json();
    if (page.items?.length !== Math.min(LIMIT, size))
      throw new Error(`GET /v1/entries gave ${page.items?.length} items, expected ${Math.min(LIMIT, size)}`);
    const constant = JSON.stringify(page);
    // The fair baseline: the list's query (first page, oldest first) on the same database, rows sent as they come.
    const bare = Fastify();
    bare.get("/same-query", async (_req, reply) => {
      const rows = await store.all(
        "SELECT id, version, status, updated_at, entry_json, claimed_by, lease_expires_ms, created_ms FROM bb_entries WHERE project_id = ? ORDER BY created_ms ASC, id ASC LIMIT ?",
        ["bench", LIMIT + 1],
      );
      const items = rows.slice(0, LIMIT).map((r) => ({
        entry: { ...JSON.parse(r.entry_json), status: r.status, updated_at: r.updated_at },
        version: r.version,
        claimed_by: r.claimed_by,
        lease_expires_at: null,
      }));
      return reply.type("application/json").send(JSON.stringify({ items, next: rows.length > LIMIT ? "x" : null }));
    });
    bare.get("/constant", async (_req, reply) => reply.type("application/json").send(constant));
    const bareUrl = await bare.listen({ host: "127.0.0.1", port: 0 });
    const runs = { pmagent: [], same: [], constant: [] };
    for (let round = 0; round < ROUNDS; round++) {
      // Alternate which goes first, so a drift in the machine's load does not favour one.
      const order = round % 2 === 0 ? ["same", "pmagent", "constant"] : ["pmagent", "same", "constant"];
      for (const name of order)
        runs[name].push(
          await load(
            name === "pmagent"
              ? `${url}/v1/entries?limit=${LIMIT}`
              : `${bareUrl}/${name === "same" ? "same-query" : "constant"}`,
          ),
        );
    }
    const m = {
      size,
      pmagent: median(runs.pmagent),
      same: median(runs.same),
      constant: median(runs.constant),
      ratios: runs.pmagent.map((p, i) => p / runs.same[i]),
    };
    results.push(m);
    console.log(
      `${String(size).padStart(6)} entries: GET /v1/entries?limit=${LIMIT} ${m.pmagent.toFixed(0).padStart(6)} req/s | bare Fastify, same query ${m.same.toFixed(0).padStart(6)} req/s | bare Fastify, constant ${m.constant.toFixed(0).padStart(6)} req/s | ` +
        `ratio to same query ${(m.pmagent / m.same).toFixed(2)}× (rounds ${m.ratios.map((r) => r.toFixed(2)).join(", ")}), to constant ${(m.pmagent / m.constant).toFixed(3)}×`,
    );
    await bare.close();
    await server.close();
    await store.close();
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

console.log(
  `\nbench/serve on SQLite, ${CONNECTIONS} connections, ${SECONDS}s per target, median of ${ROUNDS} alternating rounds, loopback`,
);
const ratios = results.map((r) => r.pmagent / r.same);
const flat = results.length > 1 ? results[results.length - 1].pmagent / results[0].pmagent : 1;
console.log(
  `goal (issue 21): GET /v1/entries?limit=50 ≥ ${GOAL}× a bare Fastify route running the same query, flat from 200 to 20,000 entries: ` +
    results.map((r) => `${r.size}: ${(r.pmagent / r.same).toFixed(2)}×`).join(", ") +
    `; req/s at ${results.at(-1)?.size} vs ${results[0]?.size}: ${flat.toFixed(2)}× → ${ratios.every((r) => r >= GOAL) ? "met" : "not met"} on ratio, ${flat >= 0.8 ? "flat" : "not flat"} (within 20%)`,
);
console.log(
  `(before this change the issue measured 0.06–0.13× a constant route at 2,000 entries and 0.018× at 20,000)`,
);
