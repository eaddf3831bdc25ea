import { describe, expect, it } from "vitest";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { CLI_UNBUNDLED, REPO_ROOT, runProcess } from "../helpers/proc.js";

const TRACE = pathToFileURL(join(REPO_ROOT, "test/cli/fixtures/trace-imports.mjs")).href;
// What a command that only reads should not load: zod, the config's and the board's schemas, GitHub.
const HEAVY =
  /\/node_modules\/zod\/|\/dist\/config\/schema\.js|\/dist\/blackboard\/(schema|post|change|import)\.js|\/dist\/blackboard\/github\//;

/**
 * tsc's output of the CLI, file by file, so the trace names the modules (the bundled bin is held
 * to the same in program.test.ts); one build throughout, as a remembered config is per build.
 */
const runCli = (args: string[], options: Parameters<typeof runProcess>[2] = {}) =>
  runProcess(process.execPath, [CLI_UNBUNDLED, ...args], options);

/** A project made by `pmagent init` (SQLite store), with one entry posted. */
async function project(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), "pmagent-read-start-"));
  expect((await runProcess("git", ["init", "-q", "-b", "main"], { cwd: dir })).code).toBe(0);
  expect((await runCli(["init"], { cwd: dir })).code).toBe(0);
  const post = await runCli(["bb", "post", "-"], {
    cwd: dir,
    input: JSON.stringify({ id: "e-1", to: "Aya", kind: "doc_update_proposal_request", payload: { summary: "first" } }),
  });
  expect(post.stderr).toBe("");
  expect(post.code).toBe(0);
  return dir;
}

/** `pmagent ARGS` in `dir`, with the modules it loaded. */
async function traced(dir: string, args: string[]) {
  const trace = join(dir, `imports-${Math.random().toString(36).slice(2)}.txt`);
  const r = await runProcess(process.execPath, ["--import", TRACE, CLI_UNBUNDLED, ...args], {
    cwd: dir,
    env: { ...process.env, PMAGENT_TRACE_IMPORTS: trace },
  });
  return {
    ...r,
    heavy: readFileSync(trace, "utf8")
      .split("\n")
      .filter((u) => HEAVY.test(u)),
  };
}

describe("commands that only read load neither zod nor the schemas", () => {
  it("bb list and runs list, once the config has been validated; the same output as before", async () => {
    const dir = await project();
    // `bb post` validated the config and remembered it; reading commands take it from there.
    const list = await traced(dir, ["bb", "list"]);
    expect(list.stderr).toBe("");
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/^e-1\s+open\s+Human → Aya\s+doc_update_proposal_request\s+first$/m);
    expect(list.heavy).toEqual([]);

    const json = await traced(dir, ["bb", "list", "--format", "json"]);
    expect(JSON.parse(json.stdout)).toMatchObject({
      items: [{ id: "e-1", status: "open", payload: { summary: "first" } }],
      next: null,
    });
    expect(json.heavy).toEqual([]);

    const runs = await traced(dir, ["runs", "list"]);
    expect(runs.code).toBe(0);
    expect(runs.stdout).toBe("no runs\n");
    expect(runs.heavy).toEqual([]);
  });

  it("validates a changed config again: an invalid one is refused with the path and what to fix", async () => {
    const dir = await project();
    const configPath = join(dir, "pmagent.config.json");
    const config = JSON.parse(readFileSync(configPath, "utf8")) as Record<string, unknown>;
    writeFileSync(configPath, JSON.stringify({ ...config, humans: [] }));
    const r = await traced(dir, ["bb", "list"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${configPath} is invalid:`);
    expect(r.stderr).toContain("$.humans");
    expect(r.stderr).toContain("[config_invalid]");

    writeFileSync(configPath, JSON.stringify({ ...config, project_id: "renamed" }));
    const renamed = await traced(dir, ["bb", "list", "--format", "json"]);
    expect(renamed.code).toBe(0);
    // Another project id: that project's board, empty (the entry belongs to the first).
    expect(JSON.parse(renamed.stdout)).toEqual({ items: [], next: null });
    expect(renamed.heavy.some((u) => u.includes("/dist/config/schema.js"))).toBe(true);
  });

  it("bb post still validates its entry (the schema loads when a writer needs it)", async () => {
    const dir = await project();
    const bad = await runCli(["bb", "post", "-"], {
      cwd: dir,
      input: JSON.stringify({ to: "Aya", kind: "x", created_at: "2025-11-30T02:30:00" }),
    });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("has no time zone: add one (Z or ±hh:mm)");
  });
});
