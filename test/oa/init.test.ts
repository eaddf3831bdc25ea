import { describe, expect, it } from "vitest";
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  OASurfaceError,
  bootEnvelope,
  callOATool,
  initSurfaces,
  runOaGuard,
  writeSnapshot,
  type OAToolError,
} from "../../src/oa/index.js";
import { runCli } from "../helpers/proc.js";
import { FIXTURES, makeProject, type TestProject } from "./helpers.js";

function gitRepo(p: TestProject, branch = "feat/first-run"): void {
  const git = (...args: string[]) =>
    execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", ...args], {
      cwd: p.root,
      stdio: "ignore",
    });
  git("init", "-q", "-b", branch);
  git("add", "-A");
  git("commit", "-q", "-m", "init");
}

const read = (p: TestProject, file: string) => JSON.parse(readFileSync(join(p.share, file), "utf8"));

describe("pmagent oa init", () => {
  it("writes surfaces derived from the repository: branch from git, phase from config, reality from package.json's test script", async () => {
    const p = makeProject(null, { phase: "27" });
    writeFileSync(
      join(p.root, "package.json"),
      JSON.stringify({ name: "x", scripts: { test: "node -e \"console.log('12 passed')\"" } }),
    );
    gitRepo(p);
    const result = await initSurfaces(p.ws);
    expect(result).toEqual({
      written: [
        "share/PM_BOOTSTRAP_STATE.json",
        "share/SSOT_SURFACE_V17.json",
        "share/REALITY_GREEN_SUMMARY.json",
        "share/oa/CONTEXT.json",
      ],
      branch: "feat/first-run",
      phase: "27",
      reality_green: true,
      checks: [{ name: "Tests", passed: true, message: "exit 0: 12 passed" }],
      state: "share/orchestrator_assistant/STATE.json",
    });
    expect(read(p, "PM_BOOTSTRAP_STATE.json")).toMatchObject({
      generated_by: "pmagent oa init",
      branch: "feat/first-run",
      meta: { current_phase: "27" },
      health: { reality_green: true },
    });
    expect(read(p, "REALITY_GREEN_SUMMARY.json").checks[0]).toMatchObject({
      name: "Tests",
      passed: true,
      details: { command: "npm test --silent", exit_code: 0 },
    });
    expect(bootEnvelope(p.ws).oa_boot_envelope.kernel).toEqual({
      phase: "27",
      branch: "feat/first-run",
      mode: "NORMAL",
    });
    expect(runOaGuard(p.ws, "STRICT")).toMatchObject({ ok: true, diagnostics: [] });
  });

  it("a failing configured check makes reality not green (DEGRADED), with its last output line", async () => {
    const p = makeProject(null, {
      checks: {
        "Unit Tests": { command: [process.execPath, "-e", "console.log('3 failed, 9 passed'); process.exit(1)"] },
      },
    });
    const result = await initSurfaces(p.ws, { branch: "main" });
    expect(result.checks).toEqual([{ name: "Unit Tests", passed: false, message: "exit 1: 3 failed, 9 passed" }]);
    expect(result.phase).toBe("1");
    expect(bootEnvelope(p.ws).oa_boot_envelope.kernel.mode).toBe("DEGRADED");
  });

  it("stops a check at its timeout", async () => {
    const p = makeProject(null, {
      checks: { slow: { command: [process.execPath, join(FIXTURES, "guards", "slow.mjs")], timeout_ms: 200 } },
    });
    const result = await initSurfaces(p.ws, { branch: "main" });
    expect(result.checks).toEqual([{ name: "slow", passed: false, message: "did not finish within 200 ms" }]);
  });

  it("without any check, reality is not proven: a failed 'Checks configured' check says what to add", async () => {
    const p = makeProject(null);
    const result = await initSurfaces(p.ws, { branch: "main" });
    expect(result.reality_green).toBe(false);
    expect(result.checks[0]).toEqual({
      name: "Checks configured",
      passed: false,
      message:
        "no checks: add oa.checks to pmagent.config.json (e.g. the test command), then run pmagent oa init again",
    });
  });

  it("never overwrites kernel surfaces it did not write; refreshes its own", async () => {
    const foreign = makeProject("normal");
    const before = readFileSync(join(foreign.share, "PM_BOOTSTRAP_STATE.json"), "utf8");
    const err = await initSurfaces(foreign.ws, { branch: "main" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OASurfaceError);
    expect((err as OASurfaceError).code).toBe("oa_surfaces_exist");
    expect((err as Error).message).toBe(
      "kernel surfaces already exist and were not written by pmagent oa init: share/PM_BOOTSTRAP_STATE.json, share/SSOT_SURFACE_V17.json, share/REALITY_GREEN_SUMMARY.json; OA does not overwrite them (run `pmagent oa snapshot` to use them, or remove them first)",
    );
    expect(readFileSync(join(foreign.share, "PM_BOOTSTRAP_STATE.json"), "utf8")).toBe(before);
    const own = makeProject(null);
    await initSurfaces(own.ws, { branch: "main" });
    const again = await initSurfaces(own.ws, { branch: "dev", phase: "2" });
    expect(again.written).not.toContain("share/oa/CONTEXT.json");
    expect(read(own, "PM_BOOTSTRAP_STATE.json").branch).toBe("dev");
  });

  it("says how to name the branch outside a git repository", async () => {
    const p = makeProject(null);
    await expect(initSurfaces(p.ws)).rejects.toThrow(
      /^cannot determine the branch: .* is not a git repository with a commit \(git init && git commit\), or pass --branch NAME$/,
    );
  });
});

describe("a repository without kernel surfaces: every OA command names what is missing and `pmagent oa init`", () => {
  it("snapshot, guard, boot and the tools", async () => {
    const p = makeProject(null);
    expect(() => writeSnapshot(p.ws)).toThrow(
      /this repository has no kernel surfaces yet: run `pmagent oa init` to write a starting set/,
    );
    const guard = runOaGuard(p.ws, "HINT");
    expect(guard.diagnostics.filter((d) => d.details.required === true).map((d) => d.remediation)).toEqual([
      "pmagent oa init",
      "pmagent oa init",
      "pmagent oa init",
    ]);
    expect(guard.diagnostics.find((d) => d.message.startsWith("OA state"))?.remediation).toBe(
      "fix the kernel surfaces first (see the diagnostics above), then pmagent oa snapshot",
    );
    expect(bootEnvelope(p.ws).oa_boot_envelope.interpretation.recommended_commands[0]).toBe("pmagent oa init");
    const err = (await callOATool(p.ws, "oa.ssot_surface").catch((e: unknown) => e)) as OAToolError;
    expect(err.message).toBe(
      "cannot load share/SSOT_SURFACE_V17.json: file not found (no kernel surfaces yet: run `pmagent oa init`)",
    );
  });

  it("pmagent oa init, then boot oa (CLI)", async () => {
    const p = makeProject(null, { checks: { ok: { command: [process.execPath, "-e", "0"] } } });
    gitRepo(p, "main");
    const init = await runCli(["oa", "init"], { cwd: p.root });
    expect(init.code).toBe(0);
    expect(init.stdout).toBe(
      "wrote share/PM_BOOTSTRAP_STATE.json, share/SSOT_SURFACE_V17.json, share/REALITY_GREEN_SUMMARY.json, share/oa/CONTEXT.json and share/orchestrator_assistant/STATE.json\nbranch main, phase 1, reality green\n  pass ok: exit 0\nnext: pmagent boot oa\n",
    );
    const boot = await runCli(["boot", "oa", "--format", "json"], { cwd: p.root });
    expect(boot.code).toBe(0);
    expect(JSON.parse(boot.stdout).oa_boot_envelope.kernel.mode).toBe("NORMAL");
  });
});
