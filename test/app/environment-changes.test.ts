/**
 * Each accepted adjustment type changes a later run, shown by that run's environment: a sprite
 * proposes, a human accepts (the real npm and dpkg-deb install from local files: no internet), and
 * a later run of the role (a probe sprite under the project's supervisor) reports its PATH, its
 * variables and the programs it can run.
 */
import { execFileSync } from "node:child_process";
import {
  chmodSync,
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { projectEnvironmentChanges, projectSupervisor } from "../../src/app/index.js";
import { ProposalStore, type EnvironmentProposal } from "../../src/lattice/index.js";
import { REPO_ROOT } from "../helpers/proc.js";
import { availableStoreKinds } from "../helpers/stores.js";
import { PMAGENT } from "../lattice/helpers.js";
import { useSupervisorFixture } from "../helpers/supervisor-fixture.js";

const kinds = await availableStoreKinds();
const PROBE = join(REPO_ROOT, "test/lattice/sprites/env-probe.mjs");
const NODE_MAJOR = process.versions.node.split(".")[0]!;

let fixtures: string;
/** An npm package with one program `name` printing "<name> from npm", packed with the real `npm pack`. */
function npmTarball(name: string): string {
  const dir = join(fixtures, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name, version: "1.0.0", bin: { [name]: "bin.js" } }));
  writeFileSync(join(dir, "bin.js"), `#!/usr/bin/env node\nconsole.log("${name} from npm");\n`);
  execFileSync("npm", ["pack", "--silent", "--pack-destination", fixtures], { cwd: dir, stdio: "ignore" });
  return join(fixtures, `${name}-1.0.0.tgz`);
}

/** A Debian package with /usr/bin/<name> printing "<name> from deb", built with the real `dpkg-deb --build`. */
function debPackage(name: string): string {
  const dir = join(fixtures, `${name}-deb`);
  mkdirSync(join(dir, "DEBIAN"), { recursive: true });
  mkdirSync(join(dir, "usr", "bin"), { recursive: true });
  writeFileSync(
    join(dir, "DEBIAN", "control"),
    `Package: ${name}\nVersion: 1.0\nArchitecture: all\nMaintainer: test <t@example.invalid>\nDescription: a test package\n`,
  );
  writeFileSync(join(dir, "usr", "bin", name), `#!/bin/sh\necho "${name} from deb"\n`);
  chmodSync(join(dir, "usr", "bin", name), 0o755);
  execFileSync("dpkg-deb", ["--build", "--root-owner-group", dir, join(fixtures, `${name}.deb`)], { stdio: "ignore" });
  return join(fixtures, `${name}.deb`);
}

const files = { hello: "", shared: "", yarn: "", greet: "", broken: "" };
beforeAll(() => {
  fixtures = mkdtempSync(join(tmpdir(), "pmagent-env-fixtures-"));
  files.hello = npmTarball("hello-tool");
  files.shared = npmTarball("shared-tool");
  files.yarn = npmTarball("yarn");
  files.greet = debPackage("greet-deb");
  files.broken = join(fixtures, "broken-tool-1.0.0.tgz");
  writeFileSync(files.broken, "not a tarball");
});
afterAll(() => rmSync(fixtures, { recursive: true, force: true }));

interface Probe {
  env: Record<string, string>;
  programs: Record<string, { where: string; output: string } | null>;
}

describe.each(kinds)("accepted environment changes reach later runs ($name)", (kind) => {
  const fx = useSupervisorFixture(kind, { config: { sandbox_network: "none" } });

  const proposal = (type: string, details: Record<string, unknown>, scope = "repo_specific") => ({
    emit: "ENVIRONMENT_PROPOSAL",
    payload: {
      observed_failure: { phase: "bootstrap", exit_code: 127, stderr_hint: "command not found" },
      suggested_adjustment: { type, details },
      confidence: 0.9,
      evidence: ["probe"],
      scope,
    },
  });

  it("installs, selects, switches commands and the network, for the role or every role, and undoes", async () => {
    const sup = projectSupervisor({
      store: fx.ts.store,
      project: fx.tp.project,
      pmagentCommand: PMAGENT,
      pollMs: 20,
      consoleWrite: () => undefined,
    });
    const probe = async (role: string): Promise<Probe> => {
      const run = await sup.startRun({
        role,
        command: [process.execPath, PROBE, "hello-tool", "greet-deb", "yarn", "shared-tool", "node", "broken-tool"],
      });
      expect(run.state, run.reason ?? "").toBe("succeeded");
      return JSON.parse(readFileSync(join(run.workspace, "probe.json"), "utf8")) as Probe;
    };
    const before = await probe("Builder");
    expect(before.programs["hello-tool"]).toBeNull();
    expect(before.env.PMAGENT_SANDBOX_NETWORK).toBe("none");

    // A sprite proposes every kind of change (the global one applies to every role).
    const proposing = await sup.startRun({
      role: "Builder",
      command: fx.tp.sprite("propose", {
        steps: [
          proposal("runtime_install", { runtime: "hello-tool", package: files.hello }),
          proposal("add_system_package", { packages: [files.greet] }),
          proposal("runtime_version_adjust", { runtime: "node", version: NODE_MAJOR }),
          proposal("dependency_manager_switch", { from: "npm", to: "yarn", package: files.yarn }),
          proposal("adjust_smoke_command", { command: "npm run smoke" }),
          proposal("enable_network_access", {}),
          proposal("runtime_install", { runtime: "shared-tool", package: files.shared }, "global_candidate"),
          proposal("runtime_install", { runtime: "broken-tool", package: files.broken }),
          { emit: "COMPLETED", payload: { status: "success" } },
        ],
      }),
    });
    expect(proposing.state).toBe("succeeded");

    const proposals = new ProposalStore({ store: fx.ts.store, projectId: "demo", humans: ["Human"] });
    const changes = projectEnvironmentChanges(fx.tp.project, fx.ts.store, proposals);
    const pending = await proposals.list({ status: "pending" });
    expect(pending).toHaveLength(8);
    const byTool = (p: EnvironmentProposal) =>
      String(p.details.runtime ?? p.details.to ?? p.details.command ?? p.adjustment_type);
    const ids: Record<string, string> = {};
    const accepted: Record<string, Awaited<ReturnType<typeof changes.accept>>> = {};
    // Accepted in the order proposed (later decisions come first on the PATH).
    for (const name of [
      "hello-tool",
      "add_system_package",
      "node",
      "yarn",
      "npm run smoke",
      "enable_network_access",
      "shared-tool",
      "broken-tool",
    ]) {
      const p = pending.find((x) => byTool(x) === name)!;
      ids[name] = p.id;
      accepted[name] = await changes.accept(p.id, "Human");
    }
    const tools = (scope: string, name: string) => join(fx.tp.root, ".pmagent", "tools", scope, ids[name]!);
    expect(accepted["hello-tool"]!.change).toMatchObject({
      status: "applied",
      applies_to: "Builder",
      effect: {
        tools_dir: `.pmagent/tools/Builder/${ids["hello-tool"]}`,
        installed: [{ source: "npm", package: files.hello, bin: [`.pmagent/tools/Builder/${ids["hello-tool"]}/bin`] }],
      },
    });
    expect(accepted["shared-tool"]!.change).toMatchObject({
      status: "applied",
      applies_to: "*",
      effect: { tools_dir: `.pmagent/tools/global/${ids["shared-tool"]}` },
    });
    expect(accepted.node!.change.effect.installed).toEqual([
      expect.objectContaining({ source: "path", bin: [`.pmagent/tools/Builder/${ids.node}/bin`] }),
    ]);
    expect(accepted.add_system_package!.change.effect.installed).toEqual([
      { source: "deb", package: files.greet, bin: [`.pmagent/tools/Builder/${ids.add_system_package}/usr/bin`] },
    ]);
    // A failed install is recorded with npm's own reason, and nothing of it is left or applied.
    const broken = accepted["broken-tool"]!.change;
    expect(broken.status).toBe("failed");
    expect(broken.reason).toMatch(
      new RegExp(
        `^npm install of ${files.broken.replace(/[.]/g, "\\.")} failed \\(\`npm install --global --prefix .* exited with \\d+\\): .+`,
      ),
    );
    expect(existsSync(tools("Builder", "broken-tool"))).toBe(false);

    // The role's next run: the tools first on its PATH (after the run's shims), and they run.
    const after = await probe("Builder");
    const path = after.env.PATH!.split(":");
    expect(path.slice(1, 6)).toEqual([
      join(tools("global", "shared-tool"), "bin"),
      join(tools("Builder", "yarn"), "bin"),
      join(tools("Builder", "node"), "bin"),
      join(tools("Builder", "add_system_package"), "usr", "bin"),
      join(tools("Builder", "hello-tool"), "bin"),
    ]);
    expect(after.programs["hello-tool"]).toEqual({
      where: join(tools("Builder", "hello-tool"), "bin", "hello-tool"),
      output: "hello-tool from npm",
    });
    expect(after.programs["greet-deb"]).toEqual({
      where: join(tools("Builder", "add_system_package"), "usr", "bin", "greet-deb"),
      output: "greet-deb from deb",
    });
    expect(after.programs.yarn).toEqual({
      where: join(tools("Builder", "yarn"), "bin", "yarn"),
      output: "yarn from npm",
    });
    expect(after.programs["shared-tool"]?.output).toBe("shared-tool from npm");
    expect(after.programs.node).toEqual({
      where: join(tools("Builder", "node"), "bin", "node"),
      output: `v${process.versions.node}`,
    });
    expect(after.programs["broken-tool"]).toBeNull();
    expect(after.env).toMatchObject({
      PMAGENT_SANDBOX_NETWORK: "host",
      PMAGENT_NETWORK_ACCESS: "enabled",
      PMAGENT_DEPENDENCY_MANAGER: "yarn",
      PMAGENT_INSTALL_COMMAND: "yarn install --frozen-lockfile",
      PMAGENT_SMOKE_COMMAND: "npm run smoke",
      PMAGENT_RUNTIME_NODE: NODE_MAJOR,
    });
    expect(JSON.parse(after.env.PMAGENT_ENVIRONMENT!)).toHaveLength(7);

    // Another role gets only the global change; its network stays the config's.
    const other = await probe("Reviewer");
    expect(other.programs["shared-tool"]?.output).toBe("shared-tool from npm");
    expect(other.programs["hello-tool"]).toBeNull();
    expect(other.env.PMAGENT_SANDBOX_NETWORK).toBe("none");
    expect(other.env.PMAGENT_SMOKE_COMMAND).toBeUndefined();

    // Undone (by change id, or by proposal id): its tools are gone and the next run is without it.
    expect(await changes.undo(accepted["hello-tool"]!.change.id, "Human")).toMatchObject({
      status: "undone",
      undone_by: "Human",
    });
    expect((await changes.undo(ids.enable_network_access!, "Human")).status).toBe("undone");
    expect(existsSync(tools("Builder", "hello-tool"))).toBe(false);
    const undone = await probe("Builder");
    expect(undone.programs["hello-tool"]).toBeNull();
    expect(undone.programs["greet-deb"]?.output).toBe("greet-deb from deb");
    expect(undone.env.PMAGENT_SANDBOX_NETWORK).toBe("none");
    await expect(changes.undo(ids["hello-tool"]!, "Human")).rejects.toThrow(
      new RegExp(
        `^environment change ${accepted["hello-tool"]!.change.id} \\(proposal ${ids["hello-tool"]}\\) was already undone by Human at \\d{4}-`,
      ),
    );
    await expect(changes.undo(ids["broken-tool"]!, "Human")).rejects.toThrow(
      `environment change ${broken.id} (proposal ${ids["broken-tool"]}) failed and was never applied (${broken.reason}): nothing to undo`,
    );
    await expect(changes.undo("envc_000000000000", "Human")).rejects.toThrow(
      'no environment change "envc_000000000000" in project demo',
    );
    await expect(changes.undo(ids.yarn!, "Builder")).rejects.toThrow(
      'only a human may undo an environment change; "Builder" is not listed in the config\'s humans (Human)',
    );
    await expect(changes.apply(await proposals.get(ids.yarn!), "Human")).rejects.toThrow(
      `environment proposal ${ids.yarn} was applied already`,
    );
  }, 240_000);

  it("fails a runtime that is neither on the PATH nor installable as asked, and a .deb that is not one; refuses what is not a bare name", async () => {
    const proposals = new ProposalStore({ store: fx.ts.store, projectId: "demo", humans: ["Human"] });
    const changes = projectEnvironmentChanges(fx.tp.project, fx.ts.store, proposals);
    const record = async (n: number, type: string, details: Record<string, unknown>) =>
      (
        await proposals.record("Builder", "run-1", `ev-${n}`, {
          observed_failure: { phase: "bootstrap", exit_code: n, stderr_hint: "" },
          suggested_adjustment: { type, details },
          confidence: 1,
          evidence: [],
          scope: "repo_specific",
        })
      ).proposal.id;
    const onPath = await record(1, "runtime_version_adjust", { runtime: "node", version: "1.2", source: "path" });
    const badDeb = join(fixtures, "bad.deb");
    writeFileSync(badDeb, "not a deb");
    const deb = await record(2, "add_system_package", { package: badDeb });
    const badName = await record(3, "add_system_package", { package: "Not A Name" });
    expect((await changes.accept(onPath, "Human")).change).toMatchObject({
      status: "failed",
      reason: "no node reporting version 1.2 on this machine's PATH",
    });
    expect((await changes.accept(deb, "Human")).change.reason).toMatch(
      new RegExp(
        `^unpacking ${badDeb.replace(/[.]/g, "\\.")} failed \\(\`dpkg-deb -x ${badDeb.replace(/[.]/g, "\\.")} .*\` exited with 2\\): dpkg-deb: error: `,
      ),
    );
    await expect(changes.accept(badName, "Human")).rejects.toThrow(
      `environment proposal ${badName} (add_system_package) cannot be accepted: details.package "Not A Name" is not a bare package name (letters, digits and . _ + -, starting with a letter or digit, no "..", no "/"), optionally with @VERSION or =VERSION; reject it (\`pmagent env reject ${badName}\`)`,
    );
    expect((await proposals.get(badName)).status).toBe("pending");
    // Nothing of a failed install is left behind.
    const left = join(fx.tp.root, ".pmagent", "tools", "Builder");
    expect(existsSync(left) ? readdirSync(left) : []).toEqual([]);
  });

  it("refuses a runtime named by a path: the host executable it names is left as it is", async () => {
    const host = mkdtempSync(join(tmpdir(), "pmagent-host-bin-"));
    try {
      const exe = join(host, "x");
      writeFileSync(exe, "#!/bin/sh\necho host x\n", { mode: 0o755 });
      // Relative to any directory (the tools' bin, the supervisor's cwd): enough ".." reach "/".
      const runtime = `${"../".repeat(24)}${exe.slice(1)}`;
      const proposals = new ProposalStore({ store: fx.ts.store, projectId: "demo", humans: ["Human"] });
      const changes = projectEnvironmentChanges(fx.tp.project, fx.ts.store, proposals);
      const { id } = (
        await proposals.record("Builder", "run-1", "ev-path", {
          observed_failure: { phase: "bootstrap", exit_code: 127, stderr_hint: "" },
          suggested_adjustment: { type: "runtime_install", details: { runtime } },
          confidence: 1,
          evidence: [],
          scope: "repo_specific",
        })
      ).proposal;
      const refusal = `environment proposal ${id} (runtime_install) cannot be accepted: details.runtime ${JSON.stringify(`${runtime.slice(0, 80)}…`)} is not a bare name (letters, digits and . _ + -, starting with a letter or digit, no "..", at most 128 characters); reject it (\`pmagent env reject ${id}\`)`;
      await expect(changes.accept(id, "Human")).rejects.toThrow(refusal);
      expect(changes.plan(await proposals.get(id))).toMatchObject({ refused: refusal, steps: [] });
      expect(lstatSync(exe).isFile()).toBe(true);
      expect(readFileSync(exe, "utf8")).toBe("#!/bin/sh\necho host x\n");
      expect((await proposals.get(id)).status).toBe("pending");
    } finally {
      rmSync(host, { recursive: true, force: true });
    }
  });

  /**
   * The attack: a sprite builds a package in its workspace whose preinstall script writes outside
   * the sandbox and dumps its environment, and proposes it. Accepting it ran the script as the
   * supervisor, with its tokens. Now the proposal says it cannot be accepted (where it is
   * recorded, in its plan, and when a human tries), and nothing of it runs; the same package put
   * outside the project (where no sandboxed sprite writes) installs without its script running,
   * and its program runs only in the sprites' sandbox.
   */
  it("a package a sprite built in its workspace never runs outside the sandbox, nor sees the supervisor's token", async () => {
    const TOKEN = "ghp_environmentChangesSupervisorToken00001";
    const env = { ...process.env, GITHUB_TOKEN: TOKEN };
    const outside = mkdtempSync(join(tmpdir(), "pmagent-env-outside-"));
    try {
      const pkg = {
        name: "evil-tool",
        version: "1.0.0",
        bin: { "evil-tool": "bin.js" },
        scripts: { preinstall: `env > ${outside}/preinstall-env.txt; touch ${outside}/preinstall-marker` },
      };
      const bin = `#!/usr/bin/env node\nconst fs = require("fs");\ntry { fs.writeFileSync("${outside}/bin-env.txt", JSON.stringify(process.env)); } catch {}\nconsole.log("evil-tool ran");\n`;
      const payload = {
        observed_failure: { phase: "bootstrap", exit_code: 127, stderr_hint: "evil-tool: not found" },
        suggested_adjustment: {
          type: "runtime_install",
          details: { runtime: "evil-tool", package: "@WS@/evil-tool.tgz" },
        },
        confidence: 0.9,
        evidence: ["built here"],
        scope: "repo_specific",
      };
      const sup = projectSupervisor({
        store: fx.ts.store,
        project: fx.tp.project,
        env,
        pmagentCommand: PMAGENT,
        pollMs: 20,
        consoleWrite: () => undefined,
      });
      const built = await sup.startRun({
        role: "Builder",
        command: fx.tp.sprite("evil", {
          steps: [
            { sh: "mkdir -p package" },
            { file: { path: "package/package.json", text: JSON.stringify(pkg) } },
            { file: { path: "package/bin.js", text: bin } },
            { file: { path: "proposal.in", text: JSON.stringify(payload) } },
            {
              sh: 'chmod +x package/bin.js && tar czf evil-tool.tgz package && sed "s#@WS@#$LATTICE_WORKSPACE#" proposal.in > proposal.json && pmagent emit ENVIRONMENT_PROPOSAL --payload-file proposal.json',
            },
            { emit: "COMPLETED", payload: { status: "success" } },
          ],
        }),
      });
      expect(built.state, built.reason ?? "").toBe("succeeded");
      const tarball = join(built.workspace, "evil-tool.tgz");
      expect(existsSync(tarball)).toBe(true);
      const proposals = new ProposalStore({ store: fx.ts.store, projectId: "demo", humans: ["Human"] });
      const changes = projectEnvironmentChanges(fx.tp.project, fx.ts.store, proposals, env);
      const [p] = await proposals.list({ status: "pending" });
      expect(p!.details.package).toBe(tarball);
      const refusal = `environment proposal ${p!.id} (runtime_install) cannot be accepted: details.package "${tarball}" is in the project's directory ${realpathSync(fx.tp.root)}, where sprites write (workspaces, checkpoints): a package file must be outside it; reject it (\`pmagent env reject ${p!.id}\`)`;
      // Said where it was recorded, in its plan, and when a human accepts it.
      const [event] = await sup.runs.events(built.id, { type: "ENVIRONMENT_PROPOSAL" });
      expect(event!.dispatch).toMatchObject({ status: "recorded", proposal_id: p!.id, refused: refusal });
      expect(changes.plan(p!)).toMatchObject({ refused: refusal, steps: [] });
      await expect(changes.accept(p!.id, "Human")).rejects.toMatchObject({
        code: "proposal_refused",
        message: refusal,
      });
      expect((await proposals.get(p!.id)).status).toBe("pending");
      const next = await sup.startRun({ role: "Builder", command: [process.execPath, PROBE, "evil-tool"] });
      expect(next.state).toBe("succeeded");
      expect(JSON.parse(readFileSync(join(next.workspace, "probe.json"), "utf8")).programs["evil-tool"]).toBeNull();
      expect(readdirSync(outside)).toEqual([]);

      // The same package outside the project: installed with no script run, in the installer's sandbox.
      const kept = join(outside, "evil-tool.tgz");
      copyFileSync(tarball, kept);
      const id = (
        await proposals.record("Builder", "run-x", "ev-x", {
          ...payload,
          suggested_adjustment: { type: "runtime_install", details: { runtime: "evil-tool", package: kept } },
        } as never)
      ).proposal.id;
      const plan = changes.plan(await proposals.get(id));
      const dir = join(fx.tp.root, ".pmagent", "tools", "Builder", id);
      expect(plan).toMatchObject({
        refused: null,
        steps: [
          {
            when: null,
            argv: [
              "npm",
              "install",
              "--global",
              "--prefix",
              dir,
              "--ignore-scripts",
              "--no-audit",
              "--no-fund",
              "--no-update-notifier",
              kept,
            ],
          },
        ],
      });
      expect(plan.isolation).toMatch(
        /^in bubblewrap \(\/usr\/bin\/bwrap: what sprites cannot see hidden, only the change's directory writable, the host's network\) with a scrubbed environment \(no token, a fresh HOME\), no package scripts$/,
      );
      expect((await changes.accept(id, "Human")).change.status).toBe("applied");
      const after = await sup.startRun({ role: "Builder", command: [process.execPath, PROBE, "evil-tool"] });
      expect(JSON.parse(readFileSync(join(after.workspace, "probe.json"), "utf8")).programs["evil-tool"]).toMatchObject(
        { output: "evil-tool ran" },
      );
      // No marker outside: the script never ran, and the program could not write there.
      expect(readdirSync(outside)).toEqual(["evil-tool.tgz"]);
      const logs = readdirSync(after.run_dir)
        .filter((f) => f.endsWith(".log"))
        .map((f) => join(after.run_dir, f));
      for (const f of [join(after.workspace, "probe.json"), join(after.workspace, ".lattice", "outbox.jsonl"), ...logs])
        expect(readFileSync(f, "utf8"), f).not.toContain(TOKEN);
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
  }, 120_000);
});
