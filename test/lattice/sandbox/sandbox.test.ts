/**
 * The sprite sandbox: the git wrapper's reading of a command line (aliases, global options, dashed
 * programs, remote edits through `git config`), bubblewrap's view of the host (hidden paths,
 * writable workspace, own PID namespace), and what each `sandbox` mode does when bwrap is missing.
 */
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { createServer, type AddressInfo } from "node:net";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import pino from "pino";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { parseConfig } from "../../../src/config/index.js";
import {
  artifactPaths,
  findSandboxTool,
  prepareRunDir,
  readViolations,
  runSandbox,
  sandboxArgv,
  SANDBOX_WORKSPACE,
  spriteEnv,
} from "../../../src/lattice/sandbox/index.js";
import { CLI, REPO_ROOT, runCli } from "../../helpers/proc.js";
import { availableStoreKinds, type TestStore } from "../../helpers/stores.js";
import { testProject, type TestProject } from "../helpers.js";

const bwrapHere = existsSync("/usr/bin/bwrap");
const scratch = mkdtempSync(join(tmpdir(), "pmagent-sandbox-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
/** A PATH with the tools the runs here use, but no bwrap. */
const NO_BWRAP = mkdtempSync(join(scratch, "path-"));
for (const tool of ["sh", "env", "git"]) symlinkSync(`/usr/bin/${tool}`, join(NO_BWRAP, tool));

describe("the git wrapper", () => {
  let dir: string;
  let wrapper: string;
  let violations: string;
  beforeEach(() => {
    dir = mkdtempSync(join(scratch, "git-"));
    const dirs = prepareRunDir(join(dir, "run"), [process.execPath], process.env.PATH ?? "");
    wrapper = join(dirs.shimDir, "git");
    violations = dirs.violations;
    execFileSync("git", ["init", "-q", "-b", "main", join(dir, "ws")]);
    execFileSync("git", ["-C", join(dir, "ws"), "remote", "add", "origin", join(dir, "nowhere.git")]);
  });
  const git = (args: string[], as = wrapper) =>
    spawnSync(as, args, { cwd: join(dir, "ws"), encoding: "utf8", env: { PATH: process.env.PATH } });

  const refused: Array<[string, string[], string, string]> = [
    ["push", ["push", "origin", "main"], "git_push", "push origin main"],
    ["push after -C and -c", ["-C", ".", "-c", "user.name=x", "push"], "git_push", "push"],
    ["push through -c alias.p=push", ["-c", "alias.p=push", "p", "origin"], "git_push", "push origin"],
    ["an alias of an alias", ["-c", "alias.a=b", "-c", "alias.b=push --force", "a"], "git_push", "push --force"],
    ["send-pack", ["send-pack", "x"], "git_push", "send-pack x"],
    ["remote -v add", ["remote", "-v", "add", "evil", "/x"], "git_remote_edit", "remote -v add evil /x"],
    ["remote set-url", ["remote", "set-url", "origin", "/x"], "git_remote_edit", "remote set-url origin /x"],
    [
      "an alias to remote add",
      ["-c", "alias.r=remote add", "r", "evil", "/x"],
      "git_remote_edit",
      "remote add evil /x",
    ],
    [
      "config remote.origin.pushurl",
      ["config", "remote.origin.pushurl", "/x"],
      "git_remote_edit",
      "config remote.origin.pushurl /x",
    ],
    [
      "config with the key in capitals",
      ["config", "Remote.Origin.PushURL", "/x"],
      "git_remote_edit",
      "config Remote.Origin.PushURL /x",
    ],
    [
      "config --unset remote.origin.url",
      ["config", "--unset", "remote.origin.url"],
      "git_remote_edit",
      "config --unset remote.origin.url",
    ],
    [
      "config url.*.insteadOf",
      ["config", "url./x.insteadOf", "origin"],
      "git_remote_edit",
      "config url./x.insteadOf origin",
    ],
  ];
  it.each(refused)("refuses %s and records it", (_name, args, rule, detail) => {
    const r = git(args);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`is refused inside a sprite (hard rule: ${rule})`);
    expect(readViolations(violations)).toEqual([{ line_no: 1, rule, detail }]);
  });

  it("finds an alias in the repository's own config", () => {
    expect(git(["config", "alias.ship", "push"]).status).toBe(0);
    expect(git(["ship", "origin"]).status).toBe(1);
    expect(readViolations(violations).map((v) => v.rule)).toEqual(["git_push"]);
  });

  it("reads the dashed form from its own name (git-push)", () => {
    const dashed = join(dir, "git-push");
    symlinkSync(wrapper, dashed);
    const r = git(["origin", "main"], dashed);
    expect(r.status).toBe(1);
    expect(readViolations(violations)).toEqual([{ line_no: 1, rule: "git_push", detail: "push origin main" }]);
  });

  it("passes everything else to git, reads of a remote's URL included", () => {
    for (const args of [
      ["status", "--short"],
      ["config", "remote.origin.url"],
      ["config", "--get", "remote.origin.url"],
      ["remote", "-v"],
      ["config", "user.name", "x"],
      ["-c", "alias.s=status", "s"],
    ]) {
      const r = git(args);
      expect(r.status, `git ${args.join(" ")}: ${r.stderr}`).toBe(0);
    }
    expect(git(["config", "remote.origin.url"]).stdout.trim()).toBe(join(dir, "nowhere.git"));
    expect(readViolations(violations)).toEqual([]);
  });
});

describe("sandbox modes without bwrap", () => {
  it("required: a typed error that says how to install it", () => {
    expect(() => findSandboxTool("required", NO_BWRAP)).toThrow(
      'sandbox is "required" in pmagent.config.json but bubblewrap (bwrap) is not installed (not found on PATH): install it with `apt-get install bubblewrap` (unprivileged user namespaces must be allowed), or set "sandbox": "auto"',
    );
    try {
      findSandboxTool("required", NO_BWRAP);
    } catch (err) {
      expect(err).toMatchObject({ code: "sandbox_unavailable", kind: "unavailable" });
    }
  });

  it("auto: no sandbox and a warning; off: no sandbox, no warning", () => {
    const auto = findSandboxTool("auto", NO_BWRAP);
    expect(auto.bwrap).toBeNull();
    expect(auto.warning).toMatch(
      /^SPRITES RUN WITHOUT A SANDBOX: bubblewrap \(bwrap\) is not installed .* Install it: apt-get install bubblewrap/,
    );
    expect(findSandboxTool("off", process.env.PATH ?? "")).toEqual({ bwrap: null });
  });

  it.runIf(bwrapHere)("required and auto find a working bwrap on PATH", () => {
    expect(findSandboxTool("required", "/usr/bin")).toEqual({ bwrap: "/usr/bin/bwrap" });
    expect(findSandboxTool("auto", "/usr/bin")).toEqual({ bwrap: "/usr/bin/bwrap" });
  });

  it("the config takes required, auto and off (default auto) and refuses anything else", () => {
    const base = { project_id: "p", lanes: [{ layer: "l", name: "n", roles: [{ name: "R", allowed_kinds: ["k"] }] }] };
    expect(parseConfig(JSON.stringify(base), "c.json").sandbox).toBe("auto");
    expect(parseConfig(JSON.stringify({ ...base, sandbox: "off" }), "c.json").sandbox).toBe("off");
    expect(() => parseConfig(JSON.stringify({ ...base, sandbox: "yes" }), "c.json")).toThrow(
      /c\.json is invalid:\n {2}\$\.sandbox: .*"required".*"auto".*"off"/,
    );
    expect(parseConfig(JSON.stringify(base), "c.json").sandbox_network).toBe("host");
    expect(() => parseConfig(JSON.stringify({ ...base, sandbox_network: "lan" }), "c.json")).toThrow(
      /c\.json is invalid:\n {2}\$\.sandbox_network: .*"host".*"none"/,
    );
  });
});

describe.runIf(bwrapHere)("sandboxArgv", () => {
  it("hides paths, keeps the workspace writable (also at /workspace), re-shows a path under a hidden one, own PID namespace", () => {
    const root = mkdtempSync(join(scratch, "root-"));
    const hidden = join(root, "hidden");
    const ws = join(hidden, "ws");
    const shown = join(hidden, "shown");
    for (const d of [ws, shown]) mkdirSync(d, { recursive: true });
    writeFileSync(join(hidden, "secret.txt"), "secret");
    writeFileSync(join(root, "secret.json"), "secret");
    writeFileSync(join(shown, "tool.txt"), "tool\n");
    const script = [
      "ls -a " + hidden,
      "cat " + join(root, "secret.json") + " 2>&1",
      "cat " + join(shown, "tool.txt"),
      "echo w > " + join(ws, "a.txt"),
      `echo w > ${SANDBOX_WORKSPACE}/b.txt`,
      "echo w > " + join(shown, "x.txt") + " 2>&1",
      "echo w > " + join(root, "x.txt") + " 2>&1",
      "cat /proc/1/cmdline | tr '\\0' ' '; echo",
      "pwd",
    ].join("; ");
    const argv = sandboxArgv(["sh", "-c", script], {
      bwrap: "/usr/bin/bwrap",
      workspace: ws,
      writable: [],
      readable: [root, shown],
      hidden: [hidden, join(root, "secret.json"), join(root, "missing")],
      overlays: [],
    });
    const r = spawnSync(argv[0]!, argv.slice(1), { encoding: "utf8", env: { PATH: "/usr/bin:/bin" } });
    expect(r.status, r.stderr).toBe(0);
    const lines = r.stdout.split("\n");
    expect(lines.slice(0, 4)).toEqual([".", "..", "shown", "ws"]); // no secret.txt
    expect(r.stdout).not.toContain("secret\n");
    expect(r.stdout).toContain("tool");
    expect(readFileSync(join(ws, "a.txt"), "utf8")).toBe("w\n");
    expect(readFileSync(join(ws, "b.txt"), "utf8")).toBe("w\n");
    expect(existsSync(join(shown, "x.txt"))).toBe(false);
    expect(existsSync(join(root, "x.txt"))).toBe(false);
    expect(r.stderr).toMatch(/Read-only file system[\s\S]*Read-only file system/);
    expect(r.stdout).toMatch(/^\/usr\/bin\/bwrap /m); // PID 1 is the sandbox's own init, not the supervisor
    expect(lines.at(-2)).toBe(ws);
  });
});

describe.runIf(bwrapHere)("the sandbox's network (config sandbox_network)", () => {
  /** Whether a sprite in a sandbox with this network rule reaches a TCP server on this machine's loopback. */
  async function reachesLoopback(network: "host" | "none"): Promise<{ status: number | null; stderr: string }> {
    const server = createServer((socket) => socket.end("hello\n"));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    try {
      const ws = mkdtempSync(join(scratch, "net-"));
      const argv = sandboxArgv(["bash", "-c", `exec 3<>/dev/tcp/127.0.0.1/${port} && head -1 <&3`], {
        bwrap: "/usr/bin/bwrap",
        workspace: ws,
        writable: [],
        readable: [],
        hidden: [],
        overlays: [],
        network,
      });
      const child = spawn(argv[0]!, argv.slice(1), { env: { PATH: "/usr/bin:/bin" } });
      let stderr = "";
      child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
      const status = await new Promise<number | null>((resolve) => child.on("close", resolve));
      return { status, stderr };
    } finally {
      server.close();
    }
  }

  it("host (the default): the sprite reaches this machine's loopback services", async () => {
    expect((await reachesLoopback("host")).status).toBe(0);
  });

  it("none: a network of its own, so no loopback service of this machine (a PostgreSQL store, pmagent serve) is reachable", async () => {
    const r = await reachesLoopback("none");
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(/Connection refused|Network is unreachable|Cannot assign/);
  });
});

describe.runIf(bwrapHere)("runSandbox", () => {
  it("hides the supervisor's HOME but keeps the programs on the sprite's PATH under it runnable", () => {
    const root = mkdtempSync(join(scratch, "project-"));
    const home = mkdtempSync(join(scratch, "home-"));
    mkdirSync(join(home, ".ssh"));
    mkdirSync(join(home, "bin"));
    writeFileSync(join(home, ".ssh", "id_ed25519"), "PRIVATE KEY");
    writeFileSync(join(home, "bin", "tool"), "#!/bin/sh\necho tool ran\n", { mode: 0o755 });
    const config = parseConfig(
      JSON.stringify({
        project_id: "p",
        lanes: [{ layer: "l", name: "n", roles: [{ name: "R", allowed_kinds: ["k"] }] }],
      }),
      "c.json",
    );
    const ws = join(root, ".pmagent", "workspaces", "run_x");
    const dirs = prepareRunDir(join(root, ".pmagent", "runs", "run_x"), [process.execPath], process.env.PATH ?? "", {
      sandboxed: true,
    });
    for (const d of [ws, join(root, ".pmagent", "checkpoints", "run_x")]) mkdirSync(d, { recursive: true });
    const path = `${join(home, "bin")}:/usr/bin:/bin`;
    const spec = runSandbox({
      bwrap: "/usr/bin/bwrap",
      project: { root, configPath: join(root, "c.json"), config },
      storeFile: null,
      workspace: ws,
      checkpointDir: join(root, ".pmagent", "checkpoints", "run_x"),
      dirs,
      pmagentCommand: [process.execPath],
      command: ["sh"],
      home,
      path,
    });
    const argv = sandboxArgv(["sh", "-c", `cat ${join(home, ".ssh", "id_ed25519")}; tool; ls ${home}`], spec);
    const r = spawnSync(argv[0]!, argv.slice(1), { encoding: "utf8", env: { PATH: path } });
    expect(r.stdout).toBe("tool ran\nbin\n");
    expect(r.stderr).toContain("No such file or directory");
  });
});

describe("runSandbox's network and tools (accepted environment changes)", () => {
  it("an accepted enable_network_access overrides the config's none; installed tools under .pmagent stay visible", () => {
    const root = mkdtempSync(join(scratch, "project-"));
    const config = parseConfig(
      JSON.stringify({
        project_id: "p",
        sandbox_network: "none",
        lanes: [{ layer: "l", name: "n", roles: [{ name: "R", allowed_kinds: ["k"] }] }],
      }),
      "c.json",
    );
    const ws = join(root, ".pmagent", "workspaces", "run_x");
    const dirs = prepareRunDir(join(root, ".pmagent", "runs", "run_x"), [process.execPath], process.env.PATH ?? "", {
      sandboxed: true,
    });
    const spec = (network?: "host" | "none") =>
      runSandbox({
        bwrap: "/usr/bin/bwrap",
        project: { root, configPath: join(root, "c.json"), config },
        storeFile: null,
        workspace: ws,
        checkpointDir: join(root, ".pmagent", "checkpoints", "run_x"),
        dirs,
        pmagentCommand: [process.execPath],
        command: ["sh"],
        home: undefined,
        ...(network ? { network } : {}),
      });
    expect(spec().network).toBe("none");
    expect(spec("host").network).toBe("host");
    expect(spec().hidden).toContain(join(root, ".pmagent"));
    expect(spec().readable).toContain(join(root, ".pmagent", "tools"));
  });
});

describe("selfCommand", () => {
  // Run from the build as an installed `pmagent` is (its argv[1] a bin link, not main.js): the
  // sprite's `pmagent` launcher must run the CLI script, wherever the sandbox sub-module lies.
  it("names the built CLI script when this process was not started from it", () => {
    const script = `import { selfCommand } from ${JSON.stringify(pathToFileURL(join(REPO_ROOT, "dist/lattice/index.js")).href)}; console.log(JSON.stringify(selfCommand()));`;
    const out = execFileSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" });
    const command = JSON.parse(out) as string[];
    expect(command).toEqual([process.execPath, CLI]);
    expect(existsSync(command[1]!)).toBe(true);
  });
});

describe("the sprite's environment", () => {
  it("passes the agents' endpoint variables (README: an agent's endpoint falls back to them), not one with a user or password, nor the keys", () => {
    const env = spriteEnv({
      base: {
        PATH: "/usr/bin",
        OPENAI_BASE_URL: "http://127.0.0.1:4000/v1",
        GOOGLE_GEMINI_BASE_URL: "http://127.0.0.1:4001",
        ANTHROPIC_BASE_URL: "https://user:pass@gateway.example/",
        OPENAI_API_KEY: "sk-abcdefghijklmnopqrstuvwx",
        ANTHROPIC_API_KEY: "plain-key",
        SOME_OTHER_URL: "http://127.0.0.1:5000",
      },
      shimDir: "/shims",
      toolDir: "/tools",
      home: "/home/sprite",
      lattice: {},
      extra: {},
    });
    expect(env.OPENAI_BASE_URL).toBe("http://127.0.0.1:4000/v1");
    expect(env.GOOGLE_GEMINI_BASE_URL).toBe("http://127.0.0.1:4001");
    expect(env).not.toHaveProperty("ANTHROPIC_BASE_URL");
    expect(env).not.toHaveProperty("OPENAI_API_KEY");
    expect(env).not.toHaveProperty("ANTHROPIC_API_KEY");
    expect(env).not.toHaveProperty("SOME_OTHER_URL");
  });
});

describe("artifactPaths", () => {
  it("shows an entry's artifact files and a referenced workspace's .git, never anything else it names", () => {
    const root = mkdtempSync(join(scratch, "project-"));
    const ws = join(root, ".pmagent", "workspaces", "run_a");
    mkdirSync(join(ws, ".pmagent", "lane"), { recursive: true });
    mkdirSync(join(ws, ".lattice"));
    mkdirSync(join(ws, ".git"));
    const artifact = join(ws, ".pmagent", "lane", "proposal.json");
    for (const f of [
      artifact,
      join(ws, ".lattice", "resume.json"),
      join(root, "secrets.json"),
      join(root, ".pmagent", "pmagent.db"),
    ])
      writeFileSync(f, "{}");
    symlinkSync(join(root, "secrets.json"), join(ws, "link.json"));
    const refs = [
      { type: "artifact", kind: "proposal", ref: artifact },
      { type: "artifact", kind: "branch", ref: "sprite/x", url: pathToFileURL(ws).href },
      { type: "artifact", kind: "resume", ref: join(ws, ".lattice", "resume.json") },
      { type: "artifact", kind: "secrets", ref: join(root, "secrets.json") },
      { type: "artifact", kind: "via a link", ref: join(ws, "link.json") },
      { type: "artifact", kind: "store", ref: join(root, ".pmagent", "pmagent.db") },
      { type: "artifact", kind: "a project", url: pathToFileURL(root).href },
      { type: "run", ref: artifact.replace("proposal", "other") },
      null,
    ];
    expect(artifactPaths({ refs }, root)).toEqual([artifact, join(ws, ".git")]);
    // The roles contract's object form: the list under `artifacts`.
    expect(artifactPaths({ refs: { source_board_id: "req-1", run_id: "run_1", artifacts: refs } }, root)).toEqual([
      artifact,
      join(ws, ".git"),
    ]);
    // A repository path, read from the workspace of the run that made it; never out of the workspaces.
    const relative = [
      { type: "artifact", kind: "proposal", ref: ".pmagent/lane/proposal.json", run_id: "run_a" },
      { type: "artifact", kind: "resume", ref: ".lattice/resume.json", run_id: "run_a" },
      { type: "artifact", kind: "secrets", ref: "../../../secrets.json", run_id: "run_a" },
      { type: "artifact", kind: "no run", ref: ".pmagent/lane/proposal.json" },
      { type: "artifact", kind: "odd run", ref: "proposal.json", run_id: "../run_a/.pmagent/lane" },
    ];
    expect(artifactPaths({ refs: relative }, root)).toEqual([artifact]);
    expect(artifactPaths({ refs: "nope" }, root)).toEqual([]);
    expect(artifactPaths(null, root)).toEqual([]);
  });
});

const kinds = await availableStoreKinds();

describe.each(kinds)("the supervisor's sandbox setting on $name", (kind) => {
  let ts: TestStore;
  let tp: TestProject;
  beforeEach(async () => {
    ts = await kind.open();
  });
  afterEach(async () => {
    tp.cleanup();
    await ts.cleanup();
  });

  it("required without bwrap: startRun refuses, no run is recorded", async () => {
    tp = testProject(ts, { sandbox: "required" });
    const sup = tp.supervisor(undefined, { env: { ...process.env, PATH: NO_BWRAP } });
    await expect(sup.startRun({ role: "Builder", command: ["sh", "-c", "true"] })).rejects.toMatchObject({
      code: "sandbox_unavailable",
      message: expect.stringContaining("apt-get install bubblewrap"),
    });
    expect(await sup.runs.list()).toEqual([]);
  });

  it("required without bwrap: `pmagent run` says how to install it and exits 1", async () => {
    tp = testProject(ts, {
      sandbox: "required",
      lanes: [
        {
          layer: "t",
          name: "b",
          roles: [{ name: "Builder", allowed_kinds: ["k"], runner: { command: ["sh", "-c", "true"] } }],
        },
      ],
    });
    const r = await runCli(["run", "--role", "Builder"], {
      cwd: tp.root,
      env: { ...process.env, ...ts.env, PATH: NO_BWRAP },
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      'sandbox is "required" in pmagent.config.json but bubblewrap (bwrap) is not installed (not found on PATH): install it with `apt-get install bubblewrap`',
    );
    expect(await tp.supervisor().runs.list()).toEqual([]);
  });

  it("auto without bwrap: the run goes ahead unsandboxed, with a loud warning", async () => {
    tp = testProject(ts);
    const lines: string[] = [];
    const logger = pino({ level: "warn" }, { write: (s: string) => void lines.push(s) });
    const sup = tp.supervisor(undefined, { env: { ...process.env, PATH: NO_BWRAP }, logger });
    const run = await sup.startRun({
      role: "Builder",
      command: tp.sprite("ok", {
        steps: [{ sh: "env > env.txt" }, { emit: "COMPLETED", payload: { status: "success" } }],
      }),
    });
    expect(run.state).toBe("succeeded");
    expect(lines.join("")).toContain("SPRITES RUN WITHOUT A SANDBOX");
    expect(readFileSync(join(run.workspace, "env.txt"), "utf8")).not.toContain("LATTICE_SANDBOX=");
  });

  it.runIf(bwrapHere)(
    "auto with bwrap: the sprite runs sandboxed (LATTICE_SANDBOX=bwrap) and sees its workspace at /workspace",
    async () => {
      tp = testProject(ts);
      const sup = tp.supervisor();
      const run = await sup.startRun({
        role: "Builder",
        command: tp.sprite("ok", {
          steps: [{ sh: "env > /workspace/env.txt" }, { emit: "COMPLETED", payload: { status: "success" } }],
        }),
      });
      expect(run.state, `${run.reason}`).toBe("succeeded");
      const env = readFileSync(join(run.workspace, "env.txt"), "utf8");
      expect(env).toContain("LATTICE_SANDBOX=bwrap");
      expect(env).toContain(`LATTICE_WORKSPACE=${run.workspace}`);
    },
  );
});
