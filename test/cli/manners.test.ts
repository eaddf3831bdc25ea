import { describe, expect, it, beforeAll, afterAll } from "vitest";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { spawn, spawnSync } from "node:child_process";
import { createServer, type AddressInfo, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CLI, runCli, runProcess } from "../helpers/proc.js";
import { openSqliteTestStore, type TestStore } from "../helpers/stores.js";
import { DIST, SCENARIO_SPRITE } from "../lattice/helpers.js";

const ESC = "\u001b";
const hasScript = spawnSync("sh", ["-c", "command -v script"]).status === 0;
const shellQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

describe("a CLI with manners: usage errors, JSON errors, worker progress, colour", () => {
  let ts: TestStore;
  let root: string;
  let env: NodeJS.ProcessEnv;
  const cli = (args: string[], extra: NodeJS.ProcessEnv = {}) => runCli(args, { cwd: root, env: { ...env, ...extra } });
  const post = (id: string) =>
    runCli(["bb", "post", "-"], {
      cwd: root,
      env,
      input: JSON.stringify({ id, to: "Builder", kind: "build_request" }),
    });

  beforeAll(async () => {
    ts = await openSqliteTestStore();
    root = mkdtempSync(join(tmpdir(), "pmagent-cli-manners-"));
    env = { ...process.env, ...ts.env };
    delete env.NO_COLOR;
    const file = join(root, "ok.json");
    writeFileSync(file, JSON.stringify({ steps: [{ emit: "COMPLETED", payload: { status: "success" } }] }));
    const builder = {
      name: "Builder",
      allowed_kinds: ["build_request"],
      runner: { command: [process.execPath, SCENARIO_SPRITE, DIST, file] },
    };
    const config = {
      project_id: "manners",
      lanes: [{ layer: "t", name: "l", roles: [builder, { name: "Checker", allowed_kinds: ["check_request"] }] }],
    };
    writeFileSync(join(root, "pmagent.config.json"), JSON.stringify(config));
    expect(spawnSync("git", ["init", "-q"], { cwd: root }).status).toBe(0);
  });
  afterAll(async () => {
    await ts.cleanup();
    rmSync(root, { recursive: true, force: true });
  });

  it("worker without --role is a usage error naming the configured roles (it used to exit 13 silently)", async () => {
    const r = await cli(["worker"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      "pmagent: worker needs at least one --role ROLE (repeatable); the configured roles are Builder, Checker: e.g. pmagent worker --role Builder [missing_role]\n",
    );
    const json = await cli(["worker", "--format", "json"]);
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stderr)).toEqual({
      error: { code: "missing_role", message: expect.stringContaining("the configured roles are Builder, Checker") },
    });
  });

  it("worker --concurrency takes a whole number from 1 to 64, and says so", async () => {
    for (const [given, message] of [
      ["0", "--concurrency must be between 1 and 64, got 0"],
      ["two", '--concurrency expects a whole number, got "two"'],
    ]) {
      const r = await cli(["worker", "--role", "Builder", "--concurrency", given!]);
      expect(r.code).toBe(2);
      expect(r.stderr).toBe(`pmagent: ${message} [invalid_option]\n`);
    }
  });

  it("worker says what it serves, claims, runs and finishes: plain lines on stderr, the run on stdout", async () => {
    expect((await post("job-1")).code).toBe(0);
    const r = await cli(["worker", "--role", "Builder", "--once"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^run_\S+ {2}succeeded {2}Builder, entry job-1 {2}1 event\n$/);
    const runId = r.stdout.split(" ")[0];
    const lines = r.stderr
      .trimEnd()
      .split("\n")
      .map((l) => l.replace(/^\d\d:\d\d:\d\d /, ""));
    expect(lines.slice(1)).toEqual([
      "claimed job-1 (build_request) for Builder",
      `running ${runId}: Builder on job-1`,
      "stopped (nothing open): 1 run (1 succeeded)",
    ]);
    expect(lines[0]).toMatch(
      new RegExp(
        `^worker worker@\\S+ serves Builder \\(store ${ts.env.PMAGENT_SQLITE_PATH!.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\); it stops when nothing is open$`,
      ),
    );
    // Not a terminal: no status line, no colour.
    expect(r.stderr).not.toContain(ESC);
    expect(r.stderr).not.toContain("\r");
  });

  it("worker waits for work, says so once, and stops cleanly on SIGTERM", async () => {
    const child = spawn(process.execPath, [CLI, "worker", "--role", "Checker"], {
      cwd: root,
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    const closed = new Promise<number | null>((resolve) => child.on("close", resolve));
    await new Promise<void>((resolve) =>
      child.stderr.on("data", (d: Buffer) => {
        stderr += d.toString();
        if (stderr.includes("waiting for open entries for Checker\n")) resolve();
      }),
    );
    child.kill("SIGTERM");
    expect(await closed).toBe(0);
    const lines = stderr
      .trimEnd()
      .split("\n")
      .map((l) => l.replace(/^\d\d:\d\d:\d\d /, ""));
    expect(lines[0]).toMatch(/^worker worker@\S+ serves Checker \(store .+\); SIGINT \(Ctrl-C\) or SIGTERM stops it$/);
    expect(lines.slice(1)).toEqual(["waiting for open entries for Checker", "stopped (SIGTERM): no runs"]);
  });

  it("worker --format json prints each finished run as one JSON line", async () => {
    expect((await post("job-2")).code).toBe(0);
    const r = await cli(["worker", "--role", "Builder", "--once", "--format", "json"]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ role: "Builder", entry_id: "job-2", state: "succeeded" });
  });

  /**
   * The environment of a person's terminal: Node reads `CI` (set in CI runs) without a known CI
   * vendor as a terminal of two colours, so it is left out here.
   */
  const terminal = (extra: NodeJS.ProcessEnv): NodeJS.ProcessEnv => {
    const { CI: _ci, ...rest } = env;
    return { ...rest, TERM: "xterm-256color", ...extra };
  };

  it.skipIf(!hasScript)(
    "on a terminal: a live status line and colour; NO_COLOR keeps the status line, drops the colour",
    async () => {
      const onTty = async (extra: NodeJS.ProcessEnv, id: string) => {
        expect((await post(id)).code).toBe(0);
        const command = [process.execPath, CLI, "worker", "--role", "Builder", "--once"].map(shellQuote).join(" ");
        return runProcess("script", ["-qec", command, "/dev/null"], { cwd: root, env: terminal(extra) });
      };
      const colour = await onTty({}, "job-3");
      expect(colour.code).toBe(0);
      expect(colour.stdout).toMatch(new RegExp(`\r${ESC}\\[K${ESC}\\[2m. Builder: claimed job-3 · \\d+s${ESC}\\[22m`));
      expect(colour.stdout).toContain(`${ESC}[36mrunning${ESC}[39m`);
      expect(colour.stdout).toMatch(new RegExp(`${ESC}\\[32msucceeded${ESC}\\[39m {2}Builder, entry job-3`));
      const plain = await onTty({ NO_COLOR: "1" }, "job-4");
      expect(plain.code).toBe(0);
      expect(plain.stdout).toMatch(new RegExp(`\r${ESC}\\[K. Builder: claimed job-4 · \\d+s`));
      expect(plain.stdout).toMatch(/run_\S+ {2}succeeded {2}Builder, entry job-4/);
      expect(plain.stdout).not.toMatch(new RegExp(`${ESC}\\[\\d+m`));
    },
  );

  it.skipIf(!hasScript)("on a terminal an error's prefix is red, unless NO_COLOR is set", async () => {
    const command = [process.execPath, CLI, "bb", "show", "nope"].map(shellQuote).join(" ");
    const tty = (extra: NodeJS.ProcessEnv) =>
      runProcess("script", ["-qec", command, "/dev/null"], { cwd: root, env: terminal(extra) });
    const red = await tty({});
    expect(red.code).toBe(1);
    expect(red.stdout).toContain(
      `${ESC}[31mpmagent:${ESC}[39m entry nope does not exist in project manners [entry_not_found]`,
    );
    const plain = await tty({ NO_COLOR: "1" });
    expect(plain.stdout).toContain("pmagent: entry nope does not exist in project manners [entry_not_found]");
    expect(plain.stdout).not.toContain(ESC);
  });

  it("serve on a busy port: one line naming the port and how to pick another, exit 1 (no stack trace)", async () => {
    const busy: Server = createServer();
    await new Promise<void>((resolve) => busy.listen(0, "127.0.0.1", resolve));
    const port = (busy.address() as AddressInfo).port;
    try {
      const r = await cli(["serve", "--port", String(port)]);
      expect(r.code).toBe(1);
      expect(r.stdout).toBe("");
      expect(r.stderr).toBe(
        `pmagent: port ${port} on 127.0.0.1 is already in use (another pmagent serve?): pick another with --port N (or --port 0 for any free port) [port_in_use]\n`,
      );
      const json = await cli(["serve", "--port", String(port), "--format", "json"]);
      expect(json.code).toBe(1);
      expect(JSON.parse(json.stderr)).toEqual({
        error: { code: "port_in_use", message: expect.stringContaining(`port ${port} on 127.0.0.1 is already in use`) },
      });
    } finally {
      await new Promise((resolve) => busy.close(resolve));
    }
  });

  it("serve --format json prints where it listens as JSON, and stops on SIGTERM", async () => {
    const child = spawn(process.execPath, [CLI, "serve", "--port", "0", "--format", "json"], {
      cwd: root,
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    const closed = new Promise<number | null>((resolve) => child.on("close", resolve));
    await new Promise<void>((resolve) =>
      child.stdout.on("data", (d: Buffer) => {
        stdout += d.toString();
        if (stdout.endsWith("}\n")) resolve();
      }),
    );
    const where = JSON.parse(stdout) as { url: string; console: string; openapi: string; mcp: string };
    expect(where.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(where).toEqual({
      url: where.url,
      console: `${where.url}/`,
      openapi: `${where.url}/openapi.json`,
      mcp: `${where.url}/mcp`,
    });
    child.kill("SIGTERM");
    expect(await closed).toBe(0);
  });

  it("serve on an address this machine does not have, or a host that does not resolve: a usage error naming --host", async () => {
    const tokens = { PMAGENT_TOKENS: "manners-test-token-0123456789=Human" };
    // 192.0.2.1 is TEST-NET-1 (RFC 5737): never an address of a real machine.
    const foreign = await cli(["serve", "--host", "192.0.2.1", "--port", "0"], tokens);
    expect(foreign.code).toBe(2);
    expect(foreign.stderr).toBe(
      "pmagent: --host 192.0.2.1 is not an address of this machine: give one of its addresses, e.g. 127.0.0.1 [invalid_host]\n",
    );
    const unknown = await cli(["serve", "--host", "nowhere.invalid", "--port", "0"], tokens);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toBe(
      "pmagent: --host nowhere.invalid does not resolve to an address: give an IP address or a known host name, e.g. 127.0.0.1 [invalid_host]\n",
    );
  });

  it.each([
    [
      ["bb", "list", "--limit", "x", "--format", "json"],
      2,
      "invalid_option",
      '--limit expects a whole number, got "x"',
    ],
    [["bb", "list", "--format", "json", "--bogus"], 2, "unknown_option", "unknown option '--bogus'"],
    [["bb", "show", "nope", "--format=json"], 1, "entry_not_found", "entry nope does not exist in project manners"],
    [
      ["runs", "list", "--state", "lost", "--format", "json"],
      2,
      "invalid_argument",
      "option '--state <state>' argument 'lost' is invalid. Allowed choices are starting, running, waiting, succeeded, failed, canceled.",
    ],
    [
      ["bb", "claim", "--format", "json"],
      2,
      "missing_mandatory_option_value",
      "required option '--role <role>' not specified",
    ],
    [
      ["kai", "status", "--format", "json", "--lane", "x"],
      2,
      "invalid_option",
      '--lane expects LAYER/NAME (e.g. layer_b/doc_update), got "x"',
    ],
  ])(
    "under --format json, %j fails with {error: {code, message}} on stderr",
    async (args, code, errorCode, message) => {
      const r = await cli(args);
      expect(r.code).toBe(code);
      expect(r.stdout).toBe("");
      expect(r.stderr.endsWith("\n") && r.stderr.split("\n").length).toBe(2);
      expect(JSON.parse(r.stderr)).toEqual({ error: expect.objectContaining({ code: errorCode, message }) });
    },
  );

  it("one format vocabulary: text|json everywhere, md accepted where the text is Markdown; anything else is named", async () => {
    const bad = await cli(["bb", "list", "--format", "yaml"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe('pmagent: --format expects text or json, got "yaml" [invalid_format]\n');
    const kaiBad = await cli(["kai", "status", "--format", "html"]);
    expect(kaiBad.stderr).toBe('pmagent: --format expects text, json or md, got "html" [invalid_format]\n');
    const md = await cli(["kai", "status", "--format", "md"]);
    const text = await cli(["kai", "status", "--format", "text"]);
    expect(md.code).toBe(0);
    expect(md.stdout.split("\n")[0]).toMatch(/^## t \/ l status/);
    expect(text.stdout.split("\n").slice(1)).toEqual(md.stdout.split("\n").slice(1));
    const serve = await cli(["serve", "--format", "xml"]);
    expect(serve.stderr).toBe('pmagent: --format expects text or json, got "xml" [invalid_format]\n');
  });

  it("a command group without its subcommand is a usage error (exit 2, help on stderr)", async () => {
    const r = await cli(["runs"]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("Usage: pmagent runs [options] [command]");
    expect((await cli(["runs", "--help"])).code).toBe(0);
  });

  it("errors are never coloured when stderr is not a terminal", async () => {
    const r = await cli(["bb", "show", "nope"]);
    expect(r.stderr).toBe("pmagent: entry nope does not exist in project manners [entry_not_found]\n");
  });
});
