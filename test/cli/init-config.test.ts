import { describe, expect, it } from "vitest";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigSchema } from "../../src/config/index.js";
import { REPO_ROOT, runCli } from "../helpers/proc.js";

function tempDir(name = "repo"): string {
  const d = join(mkdtempSync(join(tmpdir(), "pmagent-cli-")), name);
  mkdirSync(d);
  return d;
}

const env = { ...process.env, PMAGENT_DATABASE_URL: "", PMAGENT_SQLITE_PATH: "" };

describe("pmagent init and configuration", () => {
  it("init writes the default config (doc_update lane) and creates the SQLite store", async () => {
    const dir = tempDir("my-repo");
    const r = await runCli(["init"], { cwd: dir, env });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const config = ConfigSchema.parse(JSON.parse(readFileSync(join(dir, "pmagent.config.json"), "utf8")));
    expect(config.project_id).toBe("my-repo");
    expect(config.humans).toEqual(["Human"]);
    expect(config.storage).toEqual({ driver: "sqlite", path: ".pmagent/pmagent.db" });
    // The origin's lane also applies weekly reports under reports/.
    expect(config.lanes[0]!.allowed_paths).toEqual(["STATE/", "docs/", "reports/"]);
    expect(config.lanes[0]!.roles.map((r) => [r.name, r.allowed_kinds])).toEqual([
      ["Aya", ["doc_update_proposal_request"]],
      ["Sho", ["doc_update_review_request"]],
      ["Tsugu", ["doc_update_apply_request"]],
      ["Gen", ["pm_snapshot_request"]],
      ["Hana", ["hana_task", "pm_snapshot_done", "hana_analysis_result"]],
    ]);
    // Runnable as written: each role by its built-in sprite, and the finished cycle back to Human.
    expect(config.lanes[0]!.roles.map((r) => r.runner?.command)).toEqual(
      ["aya", "sho", "tsugu", "gen", "hana"].map((n) => ["pmagent", "lane-sprite", n]),
    );
    // Hana sends the finished snapshot back to Human by her routes (roles contract §3.6.4).
    expect(config.lanes[0]!.roles.at(-1)!.routes).toContainEqual(
      expect.objectContaining({ on: "pm_snapshot_done", to: "Human", kind: "doc_update_cycle_done" }),
    );
    expect(existsSync(join(dir, ".pmagent/pmagent.db"))).toBe(true);
    const again = await runCli(["init"], { cwd: dir, env });
    expect(again.code).toBe(1);
    expect(again.stderr).toContain(`${join(dir, "pmagent.config.json")} already exists (use --force to overwrite it)`);
    expect((await runCli(["init", "--force", "--project-id", "vpm-mini"], { cwd: dir, env })).code).toBe(0);
    expect(JSON.parse(readFileSync(join(dir, "pmagent.config.json"), "utf8")).project_id).toBe("vpm-mini");
  });

  it("init --lane code writes the code lane (the example's config): Developer → Reviewer, changes_requested back to Developer, the approval merges", async () => {
    const dir = tempDir("code-repo");
    const r = await runCli(["init", "--lane", "code", "--project-id", "demo"], { cwd: dir, env });
    expect(r.stderr).toBe("");
    expect(r.stdout).toContain("lane code/code");
    const written = JSON.parse(readFileSync(join(dir, "pmagent.config.json"), "utf8"));
    expect(written).toEqual(
      JSON.parse(readFileSync(join(REPO_ROOT, "examples/code-lane/pmagent.config.json"), "utf8")),
    );
    const lane = ConfigSchema.parse(written).lanes[0]!;
    expect(lane).toMatchObject({ open_pull_request: "first_change", merge_pull_request: "Reviewer" });
    expect(lane.roles.map((x) => [x.name, x.runner?.agent, x.next?.to, Object.keys(x.on_outcome ?? {})])).toEqual([
      ["Developer", "codex", "Reviewer", []],
      ["Reviewer", "claude", "Human", ["changes_requested"]],
    ]);
  });

  it("init --lane with no such template says which there are (exit 2) and writes nothing", async () => {
    const dir = tempDir();
    const r = await runCli(["init", "--lane", "docs"], { cwd: dir, env });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--lane docs: there is no such lane template (expected doc_update or code)");
    expect(existsSync(join(dir, "pmagent.config.json"))).toBe(false);
  });

  it("init adds .pmagent/ to the project's .gitignore once, and only warns when it cannot", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, ".gitignore"), "node_modules/");
    const r = await runCli(["init", "--format", "json"], { cwd: dir, env });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).gitignore).toEqual({ path: join(dir, ".gitignore"), change: "appended" });
    expect((await runCli(["init", "--force"], { cwd: dir, env })).stdout).toContain(
      `${join(dir, ".gitignore")} already has a line about .pmagent: left as it is`,
    );
    expect(readFileSync(join(dir, ".gitignore"), "utf8")).toBe("node_modules/\n.pmagent/\n");

    const fresh = tempDir();
    expect((await runCli(["init"], { cwd: fresh, env })).stdout).toContain(
      `created ${join(fresh, ".gitignore")} (ignores .pmagent/)`,
    );
    expect(readFileSync(join(fresh, ".gitignore"), "utf8")).toBe(".pmagent/\n");

    const odd = tempDir();
    mkdirSync(join(odd, ".gitignore"));
    const warned = await runCli(["init"], { cwd: odd, env });
    expect(warned.code).toBe(0);
    expect(warned.stderr).toBe(
      `pmagent init: warning: cannot read ${join(odd, ".gitignore")} (EISDIR): add the line .pmagent/ to it yourself\n`,
    );
    expect(existsSync(join(odd, "pmagent.config.json"))).toBe(true);
  });

  it("init writes sandbox: auto and says whether sprites will run in bubblewrap, or how to install it", async () => {
    const dir = tempDir();
    const r = await runCli(["init", "--format", "json"], { cwd: dir, env: { ...env, PATH: "/usr/bin:/bin" } });
    expect(r.code).toBe(0);
    expect(JSON.parse(readFileSync(join(dir, "pmagent.config.json"), "utf8")).sandbox).toBe("auto");
    if (existsSync("/usr/bin/bwrap"))
      expect(JSON.parse(r.stdout).sandbox).toEqual({ mode: "auto", bwrap: "/usr/bin/bwrap" });
    const without = await runCli(["init", "--force"], { cwd: dir, env: { ...env, PATH: dir } });
    expect(without.code).toBe(0);
    expect(without.stdout).toContain(
      'sandbox: auto: bubblewrap (bwrap) is not installed here, so sprites would run WITHOUT a sandbox (they could read your files and the supervisor\'s environment): install it with `apt-get install bubblewrap`, then set "sandbox": "required" to refuse runs without it',
    );
  });

  it("finds the config by walking up from a subdirectory, or takes --config", async () => {
    const dir = tempDir();
    await runCli(["init", "--project-id", "walk"], { cwd: dir, env });
    const sub = join(dir, "docs", "deep");
    mkdirSync(sub, { recursive: true });
    const r = await runCli(["bb", "list", "--format", "json"], { cwd: sub, env });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ items: [], next: null });
    const elsewhere = tempDir();
    const missing = await runCli(["bb", "list"], { cwd: elsewhere, env });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(
      `no pmagent.config.json in ${elsewhere} or any parent directory: run \`pmagent init\``,
    );
    const viaFlag = await runCli(["--config", join(dir, "pmagent.config.json"), "bb", "list"], { cwd: elsewhere, env });
    expect(viaFlag.code).toBe(0);
    const badFlag = await runCli(["--config", join(elsewhere, "nope.json"), "bb", "list"], { cwd: elsewhere, env });
    expect(badFlag.stderr).toContain(`cannot read config file ${join(elsewhere, "nope.json")}: ENOENT`);
  });

  it.each([
    ["not JSON", "{ project_id: 1", /pmagent\.config\.json is not valid JSON: /],
    [
      "a missing field",
      JSON.stringify({ project_id: "p" }),
      /pmagent\.config\.json is invalid:\n {2}\$\.lanes: Invalid input: expected array, received undefined/,
    ],
    [
      "a wrong type deep inside",
      JSON.stringify({
        project_id: "p",
        lanes: [{ layer: "l", name: "n", roles: [{ name: "Aya", allowed_kinds: "x" }] }],
      }),
      /\$\.lanes\[0\]\.roles\[0\]\.allowed_kinds: Invalid input: expected array, received string/,
    ],
    [
      "an unknown key",
      JSON.stringify({
        project_id: "p",
        lanes: [{ layer: "l", name: "n", roles: [{ name: "Aya", allowed_kinds: ["k"] }] }],
        colour: 1,
      }),
      /\$: Unrecognized key: "colour"/,
    ],
    [
      "a bad project id",
      JSON.stringify({
        project_id: "a b",
        lanes: [{ layer: "l", name: "n", roles: [{ name: "Aya", allowed_kinds: ["k"] }] }],
      }),
      /\$\.project_id: expected letters, digits/,
    ],
    [
      "a duplicated role",
      JSON.stringify({
        project_id: "p",
        lanes: [
          {
            layer: "l",
            name: "n",
            roles: [
              { name: "Aya", allowed_kinds: ["k"] },
              { name: "Aya", allowed_kinds: ["j"] },
            ],
          },
        ],
      }),
      /\$\.lanes\[0\]\.roles\[1\]\.name: role Aya is defined twice in lane l\/n/,
    ],
  ])(
    "an invalid config (%s) is a usage error naming the file, the JSON path and what was expected",
    async (_what, text, message) => {
      const dir = tempDir();
      writeFileSync(join(dir, "pmagent.config.json"), text);
      const r = await runCli(["bb", "list"], { cwd: dir, env });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(join(dir, "pmagent.config.json"));
      expect(r.stderr).toMatch(message);
    },
  );

  it("--help documents the exit codes, everywhere", async () => {
    for (const args of [["--help"], ["bb", "--help"], ["bb", "post", "--help"]]) {
      const r = await runCli(args, { env });
      expect(r.code).toBe(0);
      expect(r.stdout).toContain("Exit codes:\n  0  success\n  1  refused or failed");
      expect(r.stdout).toContain("2  usage error");
    }
  });

  it("an unknown command or option is a usage error (exit 2)", async () => {
    const dir = tempDir();
    expect((await runCli(["frobnicate"], { cwd: dir, env })).code).toBe(2);
    const r = await runCli(["bb", "list", "--colour"], { cwd: dir, env });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("unknown option '--colour'");
  });
});
