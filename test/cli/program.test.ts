import { describe, expect, it } from "vitest";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { Command } from "../../src/cli/commander.js";
import { groups } from "../../src/cli/program.js";
import { CLI, CLI_UNBUNDLED, REPO_ROOT, runProcess } from "../helpers/proc.js";

const TRACE = pathToFileURL(join(REPO_ROOT, "test/cli/fixtures/trace-imports.mjs")).href;
/** The files of the command groups in dist/cli (bb-sync.js is loaded by bb.js). */
const GROUP_FILES = [
  "init",
  "demo",
  "bb",
  "bb-sync",
  "prompt",
  "agent",
  "oa",
  "kai",
  "emit",
  "checkpoint",
  "resume-info",
  "run",
  "runs",
  "resume",
  "worker",
  "env",
  "prs",
  "lane",
  "serve",
  "mcp",
  "completion",
];

/** Run a built CLI and return the module URLs it loaded. */
async function traced(cli: string, args: string[], cwd?: string) {
  const trace = join(mkdtempSync(join(tmpdir(), "pmagent-trace-")), "imports.txt");
  const r = await runProcess(process.execPath, ["--import", TRACE, cli, ...args], {
    cwd,
    env: { ...process.env, PMAGENT_TRACE_IMPORTS: trace },
  });
  return { ...r, urls: readFileSync(trace, "utf8").split("\n") };
}

/** Run tsc's output of the CLI (file by file) and return which group files it loaded. */
async function loadedGroups(
  args: string[],
  cwd?: string,
): Promise<{ code: number | null; stdout: string; stderr: string; groups: string[]; dist: string[]; urls: string[] }> {
  const r = await traced(CLI_UNBUNDLED, args, cwd);
  const urls = r.urls;
  expect(
    urls.some((u) => u.endsWith("/dist/cli/program.js")),
    "the trace saw the CLI load",
  ).toBe(true);
  const loaded = GROUP_FILES.filter((g) => urls.some((u) => u.endsWith(`/dist/cli/${g}.js`)));
  const dist = urls
    .filter((u) => u.includes("/dist/"))
    .map((u) => u.slice(u.lastIndexOf("/dist/") + 6))
    .sort();
  return { code: r.code, stdout: r.stdout, stderr: r.stderr, groups: loaded, dist, urls };
}

describe("the CLI loads only the command group it runs", () => {
  it("--version and the top-level --help load no group (nor core); the help lists every command with its summary", async () => {
    const version = await loadedGroups(["--version"]);
    expect(version).toMatchObject({ code: 0, groups: [], dist: ["cli/commander.js", "cli/main.js", "cli/program.js"] });
    expect(version.stdout.trim()).toBe(JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")).version);

    const help = await loadedGroups(["--help"]);
    expect(help).toMatchObject({ code: 0, groups: [], dist: ["cli/commander.js", "cli/main.js", "cli/program.js"] });
    const flat = help.stdout.replace(/\s+/g, " ");
    for (const [name, group] of Object.entries(groups)) expect(flat).toContain(` ${name} ${group.summary}`);
    expect(help.stdout).toContain("Exit codes:\n  0  success");
  });

  it("an unknown command loads no group and is a usage error", async () => {
    expect(await loadedGroups(["frobnicate"])).toMatchObject({ code: 2, groups: [] });
  });

  it("GROUP --help and `help GROUP` load that group only", async () => {
    expect((await loadedGroups(["bb", "--help"])).groups).toEqual(["bb", "bb-sync"]);
    expect((await loadedGroups(["help", "kai"])).groups).toEqual(["kai"]);
    const emit = await loadedGroups(["--config", "pmagent.config.json", "emit", "--help"]);
    expect(emit).toMatchObject({ code: 0, groups: ["emit"] });
    expect(emit.stdout).toContain("Usage: pmagent emit");
  });

  it("bb list, runs list and kai status load neither the GitHub client, the server, the supervisor, the model client nor zod", async () => {
    const dir = mkdtempSync(join(tmpdir(), "pmagent-lean-"));
    expect((await runProcess("git", ["init", "-q", "-b", "main"], { cwd: dir })).code).toBe(0);
    expect((await runProcess(process.execPath, [CLI_UNBUNDLED, "init"], { cwd: dir })).code).toBe(0);
    for (const args of [
      ["bb", "list"],
      ["runs", "list"],
      ["kai", "status"],
    ]) {
      const r = await loadedGroups(args, dir);
      expect(r.code, `${args.join(" ")}: ${r.stderr}`).toBe(0);
      // app/project opens the project and builds each object on first use; the supervisor's composition (with OA's gate) is not loaded.
      const heavy = r.urls.filter((u) =>
        /\/node_modules\/(@octokit|openai|fastify|pg|pino)\/|\/dist\/(server|prompt|oa)\/|\/dist\/app\/(supervisor|oa-gate)\.js/.test(
          u,
        ),
      );
      expect(heavy, args.join(" ")).toEqual([]);
      // Runs, actions, proposals and the local forge come from their lattice sub-modules, not the facade.
      expect(
        r.dist.filter(
          (f) => f === "lattice/index.js" || /^lattice\/(supervisor|agents|checkpoint|migrations)\//.test(f),
        ),
        args.join(" "),
      ).toEqual([]);
      // The CLI's own plainly valid request needs no schema: zod is not loaded (its config is remembered valid).
      expect(
        r.urls.filter((u) => u.includes("/node_modules/zod/")),
        args.join(" "),
      ).toEqual([]);
      // commander and better-sqlite3 are required, not wrapped as ES modules.
      expect(
        r.urls.filter((u) => /\/node_modules\/(commander|better-sqlite3)\//.test(u)),
        args.join(" "),
      ).toEqual([]);
      if (args[0] === "runs")
        // The runs' fencing embeds the board's SQL condition without loading the board.
        expect(
          r.dist.filter((f) => f.startsWith("blackboard/") && f !== "blackboard/sql/index.js"),
          args.join(" "),
        ).toEqual([]);
      if (args[0] === "kai")
        // A lane without runs: no action, proposal or forge store is opened, and what_changed's
        // builder and the model's work are not loaded for a lane_status answer.
        expect(
          r.dist.filter((f) =>
            /^(lattice\/(actions|environment|sandbox)\/|forge\/|kai\/reports\/(what-changed|themes|highlights|polish|model-digest)\.js$)/.test(
              f,
            ),
          ),
          args.join(" "),
        ).toEqual([]);
    }
  });

  it("the bundled bin keeps the lazy boundaries: the packages a command does not use stay unloaded", async () => {
    // Its own project: the config is remembered valid per build (tsc's output is another build).
    const dir = mkdtempSync(join(tmpdir(), "pmagent-lean-bin-"));
    expect((await runProcess("git", ["init", "-q", "-b", "main"], { cwd: dir })).code).toBe(0);
    expect((await runProcess(process.execPath, [CLI, "init"], { cwd: dir })).code).toBe(0);
    const version = await traced(CLI, ["--version"], dir);
    expect(version.code).toBe(0);
    const chunks = (r: { urls: string[] }) => r.urls.filter((u) => u.includes("/dist/bin/"));
    for (const args of [
      ["bb", "list"],
      ["runs", "list"],
      ["kai", "status"],
    ]) {
      const r = await traced(CLI, args, dir);
      expect(r.code, `${args.join(" ")}: ${r.stderr}`).toBe(0);
      // Nothing but the bin's chunks from pmagent itself; no package the command does not use.
      expect(r.urls.filter((u) => u.includes("/dist/") && !u.includes("/dist/bin/"))).toEqual([]);
      expect(
        r.urls.filter((u) =>
          /\/node_modules\/(@octokit|openai|fastify|pg|pino|zod|commander|better-sqlite3)\//.test(u),
        ),
        args.join(" "),
      ).toEqual([]);
      // A command group is a chunk of its own, loaded after the version's.
      expect(chunks(r).length, args.join(" ")).toBeGreaterThan(chunks(version).length);
    }
  });

  it("every command of the table is the one its group registers", async () => {
    for (const [name, group] of Object.entries(groups)) {
      const program = new Command();
      (await group.load())(program);
      expect(
        program.commands.map((c) => c.name()),
        name,
      ).toContain(name);
    }
  });
});
