// CLI start-up: wall time of `pmagent --version`, `pmagent --help` and `pmagent emit --help` (one
// group), beside the same process loading every command group first (what each of them cost
// before groups were listed without loading) and a bare `node` start, all in the same run,
// interleaved. Run: `npm run build && node bench/cli/run.mjs` (CLI_BENCH_REPEAT overrides 15).
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { performance } from "node:perf_hooks";

const REPEAT = Number(process.env.CLI_BENCH_REPEAT ?? 15);
const root = join(fileURLToPath(import.meta.url), "..", "..", "..");
const cli = join(root, "dist/cli/main.js");
const program = pathToFileURL(join(root, "dist/cli/program.js")).href;
// Every group loaded, then `--version` parsed: the old start-up path of `pmagent --version`.
const allGroups = `const m = await import(${JSON.stringify(program)}); await Promise.all(Object.values(m.groups).map((g) => g.load())); process.exitCode = await m.main(["--version"]);`;

const cases = {
  "node (bare start)": [process.execPath, "-e", ""],
  "pmagent --version": [process.execPath, cli, "--version"],
  "pmagent --help": [process.execPath, cli, "--help"],
  "pmagent emit --help": [process.execPath, cli, "emit", "--help"],
  "all groups loaded + --version (baseline)": [process.execPath, "--input-type=module", "-e", allGroups],
};
const times = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
for (let i = 0; i < REPEAT; i++) {
  for (const [name, [cmd, ...args]] of Object.entries(cases)) {
    const t0 = performance.now();
    const r = spawnSync(cmd, args, { stdio: ["ignore", "ignore", "pipe"] });
    times[name].push(performance.now() - t0);
    if (r.status !== 0) throw new Error(`${name} exited with ${r.status}: ${r.stderr}`);
  }
}
const median = (v) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)];
const base = median(times["all groups loaded + --version (baseline)"]);
console.log(`CLI start-up, median of ${REPEAT} runs each (interleaved), ratio to the all-groups baseline`);
for (const [name, v] of Object.entries(times)) console.log(`  ${name.padEnd(42)} ${median(v).toFixed(1).padStart(7)} ms   ×${(median(v) / base).toFixed(2)}`);
