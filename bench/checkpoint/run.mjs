// Checkpoint benchmark: a 5,000-file, 100 MB workspace; the first checkpoint, an incremental one
// after changing 10 files, a restore of the first checkpoint, and a cold restore into an empty
// directory. Baselines measured in the same run on the same workspace: `cp -r` and `tar`.
// Goals (the spec's copy-on-write figure): incremental checkpoint < 300 ms, restore < 1 s.
// Also what the supervisor adds on a WAITING: adopting the checkpoint into its own store (every new
// blob read without following links and checked by its hash), and a resume's restore from there.
//
//   npm run build && node bench/checkpoint/run.mjs [--files 5000] [--mb 100] [--rounds 5]
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { CheckpointVault, createCheckpoint, restoreCheckpoint } from "../../dist/lattice/index.js";

const CLI = fileURLToPath(new URL("../../dist/bin/main.js", import.meta.url));

const arg = (name, def) => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? def : Number(process.argv[i + 1]);
};
const FILES = arg("files", 5000);
const MB = arg("mb", 100);
const ROUNDS = arg("rounds", 5);
const CHANGED = 10;
const FILE_SIZE = Math.floor((MB * 1024 * 1024) / FILES);
const PER_DIR = 100;

const root = mkdtempSync(join(tmpdir(), "bench-checkpoint-"));
const ws = join(root, "workspace");
const chk = join(root, "checkpoints");
const paths = [];

/** Wall time, and this process's CPU time (user + system), which shared-machine load does not inflate. */
function time(fn) {
  const cpu = process.cpuUsage();
  const t = performance.now();
  const result = fn();
  const used = process.cpuUsage(cpu);
  return { ms: performance.now() - t, cpuMs: (used.user + used.system) / 1000, result };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const fmt = (ms) => `${ms.toFixed(1)} ms`;
const sh = (cmd, args) => execFileSync(cmd, args, { stdio: ["ignore", "ignore", "inherit"] });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function changeFiles(round) {
  for (let i = 0; i < CHANGED; i++) writeFileSync(paths[(round * 997 + i * 491) % FILES], randomBytes(FILE_SIZE));
}

try {
  for (let i = 0; i < FILES; i++) {
    const dir = join(ws, `pkg${String(Math.floor(i / PER_DIR)).padStart(3, "0")}`, "src");
    if (i % PER_DIR === 0) mkdirSync(dir, { recursive: true });
    const p = join(dir, `file${i}.dat`);
    writeFileSync(p, randomBytes(FILE_SIZE));
    paths.push(p);
  }
  // Let the fresh files age past the stat cache's racy window, as a real workspace's files have.
  await sleep(300);
  sh("sync", []);
  console.log(
    `workspace: ${FILES} files, ${((FILES * FILE_SIZE) / 1024 / 1024).toFixed(0)} MB (${FILE_SIZE} bytes each) in ${ws}`,
  );

  // Baselines: a full copy is what a naive snapshot (and a naive restore) costs every time.
  const cp = [];
  const tar = [];
  for (let r = 0; r < 3; r++) {
    rmSync(join(root, "copy"), { recursive: true, force: true });
    cp.push(time(() => sh("cp", ["-r", ws, join(root, "copy")])).ms);
    tar.push(time(() => sh("tar", ["-cf", join(root, "ws.tar"), "-C", ws, "."])).ms);
    rmSync(join(root, "ws.tar"), { force: true });
  }
  rmSync(join(root, "copy"), { recursive: true, force: true });
  const cpMs = median(cp);
  const tarMs = median(tar);

  const first = time(() => createCheckpoint(ws, chk));
  const vault = new CheckpointVault(join(root, "vault"));
  const adoptFirst = time(() => vault.adopt("run_bench", chk, first.result.id));
  const adoptIncremental = [];
  const vaultRestores = [];
  const incremental = [];
  const restores = [];
  const incrementalCpu = [];
  const restoresCpu = [];
  let last;
  for (let r = 0; r < ROUNDS; r++) {
    changeFiles(r);
    await sleep(150); // past the racy window, as when a sprite checkpoints after its edits
    const inc = time(() => createCheckpoint(ws, chk));
    incremental.push(inc.ms);
    incrementalCpu.push(inc.cpuMs);
    last = inc.result;
    const res = time(() => restoreCheckpoint(ws, chk, first.result.id));
    restores.push(res.ms);
    restoresCpu.push(res.cpuMs);
    if (res.result.written !== CHANGED)
      throw new Error(`restore wrote ${res.result.written} files, expected ${CHANGED}`);
    adoptIncremental.push(time(() => vault.adopt("run_bench", chk, inc.result.id)).ms);
    // The workspace as the incremental checkpoint had it again, then a resume's restore of the first.
    restoreCheckpoint(ws, chk, inc.result.id);
    const vres = time(() => vault.restore("run_bench", first.result.id, ws));
    if (vres.result.written !== CHANGED)
      throw new Error(`vault restore wrote ${vres.result.written} files, expected ${CHANGED}`);
    vaultRestores.push(vres.ms);
  }
  // As a shell sprite does it: `pmagent checkpoint create` (node start-up included).
  changeFiles(ROUNDS);
  await sleep(150);
  const cliMs = time(() =>
    execFileSync(process.execPath, [CLI, "checkpoint", "create", "--workspace", ws, "--dir", chk], {
      stdio: ["ignore", "pipe", "inherit"],
    }),
  ).ms;
  const nodeMs = time(() => execFileSync(process.execPath, ["-e", ""])).ms;
  const cold = time(() => restoreCheckpoint(join(root, "cold"), chk, first.result.id));
  if (cold.result.written !== FILES)
    throw new Error(`cold restore wrote ${cold.result.written} files, expected ${FILES}`);
  rmSync(join(root, "restore-copy"), { recursive: true, force: true });
  const cpRestore = time(() => sh("cp", ["-r", ws, join(root, "restore-copy")])).ms;

  const incMs = median(incremental);
  const resMs = median(restores);
  const rows = [
    ["first checkpoint (all files hashed and stored)", first.ms, first.cpuMs, cpMs, "cp -r"],
    [
      `incremental checkpoint (${CHANGED} files changed), median of ${ROUNDS}`,
      incMs,
      median(incrementalCpu),
      cpMs,
      "cp -r",
    ],
    [
      `restore of the first checkpoint (${CHANGED} files differ), median of ${ROUNDS}`,
      resMs,
      median(restoresCpu),
      cpMs,
      "cp -r",
    ],
    ["cold restore into an empty directory (all files)", cold.ms, cold.cpuMs, cpRestore, "cp -r"],
    [
      "supervisor adopts the first checkpoint (every blob copied, hashed)",
      adoptFirst.ms,
      adoptFirst.cpuMs,
      cpMs,
      "cp -r",
    ],
    [
      `supervisor adopts an incremental one (${CHANGED} new blobs), median of ${ROUNDS}`,
      median(adoptIncremental),
      NaN,
      cpMs,
      "cp -r",
    ],
    [
      `resume's restore from the supervisor's store (${CHANGED} files differ), median`,
      median(vaultRestores),
      NaN,
      cpMs,
      "cp -r",
    ],
  ];
  console.log(`\nbaselines (median of 3): cp -r ${fmt(cpMs)}, tar -cf ${fmt(tarMs)}\n`);
  console.log(`${"".padEnd(78)} ${"wall".padStart(10)} ${"(cpu)".padStart(12)}`);
  for (const [name, ms, cpu, base, baseName] of rows) {
    console.log(
      `${name.padEnd(78)} ${fmt(ms).padStart(10)} ${(Number.isNaN(cpu) ? "" : `(${fmt(cpu)})`).padStart(12)}   ${baseName} ${fmt(base).padStart(10)}   ratio ${(ms / base).toFixed(3)} (${(base / ms).toFixed(1)}x faster)`,
    );
  }
  console.log(
    `\`pmagent checkpoint create\` after ${CHANGED} changes, whole process: ${fmt(cliMs)} (bare \`node -e ""\`: ${fmt(nodeMs)})`,
  );
  console.log(
    `incremental checkpoint: hashed ${last.hashed_files} files, ${last.new_blobs} new blobs, ${(last.new_bytes / 1024).toFixed(0)} KiB written`,
  );
  console.log(
    `goal incremental < 300 ms: ${incMs < 300 ? "met" : "NOT met"} (${fmt(incMs)}); goal restore < 1 s: ${resMs < 1000 ? "met" : "NOT met"} (${fmt(resMs)}); cold restore ${fmt(cold.ms)}`,
  );
  const out = fileURLToPath(new URL("./out/", import.meta.url));
  mkdirSync(out, { recursive: true });
  writeFileSync(
    join(out, "results.json"),
    `${JSON.stringify({ files: FILES, bytes: FILES * FILE_SIZE, changed: CHANGED, first_ms: first.ms, incremental_ms: incremental, incremental_cpu_ms: incrementalCpu, restore_ms: restores, restore_cpu_ms: restoresCpu, cold_restore_ms: cold.ms, cp_r_ms: cp, tar_ms: tar, cp_restore_ms: cpRestore, cli_create_ms: cliMs, node_start_ms: nodeMs, adopt_first_ms: adoptFirst.ms, adopt_incremental_ms: adoptIncremental, vault_restore_ms: vaultRestores }, null, 2)}\n`,
  );
} finally {
  rmSync(root, { recursive: true, force: true });
}
