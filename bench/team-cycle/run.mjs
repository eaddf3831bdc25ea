// Whole lane cycles, as a user runs them (pmagent init, bb post, worker --once; see
// test/helpers/team-lanes.ts), timed per agent configuration: the code lane (Developer writes,
// Reviewer requests changes, Developer fixes, Reviewer approves and the pull request merges) and
// the doc_update lane (Aya, Sho, Tsugu; Gen and Hana built-in), each with the real Codex, Claude
// Code and Gemini CLIs against scripted local servers, beside a baseline measured in the same run
// (the code lane's roles as plain `sh -c` runners, the doc_update lane's built-in sprites): the
// ratio is what the agent CLIs add to pmagent's own cost (sandbox, workspace clone, hand-on, forge).
// Then what each role's commit holds, in the baseline and the mixed configuration (git log --numstat).
// Run: `npm run bench:team-cycle` (`-- --lane code|doc` for one lane, `--rounds R` for medians).
import { rmSync } from "node:fs";
import { dirname } from "node:path";
import { parseArgs } from "node:util";
import { performance } from "node:perf_hooks";
import {
  AGENTS,
  CODE_BRANCH,
  DOC_BRANCH,
  codeLaneCycle,
  docLaneCycle,
  git,
  runsOf,
  startAgentServers,
} from "../../test/helpers/team-lanes.ts";

const { values } = parseArgs({ options: { lane: { type: "string" }, rounds: { type: "string", default: "1" } } });
const rounds = Number(values.rounds);
if (!Number.isInteger(rounds) || rounds < 1)
  throw new Error(`--rounds ${values.rounds}: expected a whole number of rounds, at least 1`);
if (values.lane !== undefined && !["code", "doc"].includes(values.lane))
  throw new Error(`--lane ${values.lane}: expected code or doc`);

const same = (a) => ({ developer: a, reviewer: a, fixer: a, approver: a });
const lanes = {
  code: {
    title: "code lane: Developer → Reviewer (changes_requested) → Developer fixes → Reviewer approves, merged",
    branch: CODE_BRANCH,
    configs: [
      ["sh -c runners (baseline)", same("sh"), true],
      ...AGENTS.map((a) => [`${a} in every role`, same(a)]),
      [
        "codex, claude, gemini fixes, claude",
        { developer: "codex", reviewer: "claude", fixer: "gemini", approver: "claude" },
        true,
      ],
    ],
    cycle: codeLaneCycle,
  },
  doc: {
    title: "doc_update lane: Aya → Sho → Tsugu → Gen → Hana (Gen and Hana built-in)",
    branch: DOC_BRANCH,
    configs: [
      ["built-in sprites (baseline)", null, true],
      ...AGENTS.map((a) => [`${a} as Aya, Sho, Tsugu`, { aya: a, sho: a, tsugu: a }]),
      ["codex Aya, claude Sho, gemini Tsugu", { aya: "codex", sho: "claude", tsugu: "gemini" }, true],
    ],
    cycle: docLaneCycle,
  },
};

/** One line per commit of the range, oldest first: its author, subject and each file with lines added and removed (git log --numstat). */
function commitStats(repo, range) {
  return git(repo.bare, "log", "--reverse", "--numstat", "--format=%x01%h %s [%an]", range)
    .split("\x01")
    .filter((c) => c.trim() !== "")
    .map((c) => {
      const [title, ...files] = c
        .trim()
        .split("\n")
        .filter((l) => l !== "");
      return `${title} — ${files
        .map((f) => f.split("\t"))
        .map(([add, del, path]) => `${path} (+${add} -${del})`)
        .join(", ")}`;
    });
}

const median = (v) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)];
const seconds = (ms) => (ms / 1000).toFixed(1);
const servers = await startAgentServers();
try {
  for (const [name, lane] of Object.entries(lanes)) {
    if (values.lane && values.lane !== name) continue;
    console.log(
      `${lane.title}; wall time of the whole cycle${rounds > 1 ? ` (median of ${rounds} rounds)` : ""}, ratio to the baseline, and each run's time`,
    );
    let base;
    const stats = [];
    // `show`: list what each role's commit holds for this configuration.
    for (const [label, doers, show] of lane.configs) {
      const times = [];
      let runs;
      let kept;
      for (let round = 0; round < rounds; round++) {
        const t0 = performance.now();
        const { repo, start } = await lane.cycle(servers, doers, "pmagent-bench-team-");
        times.push(performance.now() - t0);
        runs = await runsOf(repo);
        const bad = runs.filter((r) => r.state !== "succeeded");
        if (bad.length > 0)
          throw new Error(
            `${label}: ${bad.map((r) => `${r.role} ${r.state}: ${r.reason}`).join("; ")} (repository ${repo.dir})`,
          );
        if (round === 0 && show) kept = { label, commits: commitStats(repo, `${start}..${lane.branch}`) };
        rmSync(dirname(repo.dir), { recursive: true, force: true });
      }
      const ms = median(times);
      base ??= ms;
      const each = runs
        .map((r) => `${r.role} ${seconds(Date.parse(r.finished_at) - Date.parse(r.created_at))}`)
        .join(", ");
      console.log(`  ${label.padEnd(38)} ${seconds(ms).padStart(6)} s  ×${(ms / base).toFixed(2)}   ${each}`);
      if (kept) stats.push(kept);
    }
    for (const { label, commits } of stats)
      console.log(
        `\n  what each role's commit holds (${label}), oldest first:\n${commits.map((c) => `    ${c}`).join("\n")}`,
      );
    console.log();
  }
} finally {
  await servers.close();
}
