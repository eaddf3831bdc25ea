import { describe, expect, it } from "vitest";
import { mkdirSync, readFileSync, readdirSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  OAToolError,
  OA_TOOL_IDS,
  REGISTRY_GUARDS,
  callOATool,
  guardNames,
  parseGuardOutput,
  writeSnapshot,
} from "../../src/oa/index.js";
import { FIXTURES, makeProject } from "./helpers.js";

const guard = (script: string, extra: Record<string, unknown> = {}) => ({
  command: [process.execPath, join(FIXTURES, "guards", script)],
  ...extra,
});

async function toolError(promise: Promise<unknown>): Promise<OAToolError> {
  try {
    await promise;
  } catch (err) {
    expect(err).toBeInstanceOf(OAToolError);
    return err as OAToolError;
  }
  throw new Error("expected an OAToolError");
}

describe("OA Tools API", () => {
  it("has the seven tool ids of the spec", () => {
    expect([...OA_TOOL_IDS].sort()).toEqual([
      "oa.bootstrap_state",
      "oa.guard.run",
      "oa.handoff_kernel",
      "oa.kernel_status",
      "oa.reality_check",
      "oa.reality_summary",
      "oa.ssot_surface",
    ]);
  });

  it("oa.kernel_status reports mode, health and interpretation", async () => {
    const p = makeProject("degraded-failing-check");
    const status = (await callOATool(p.ws, "oa.kernel_status")) as Record<string, unknown>;
    expect(status).toMatchObject({
      mode: "DEGRADED",
      phase: "27",
      branch: "feat/phase27e-oa-runtime",
      reality_green: true,
      failed_checks: ["Unit Tests"],
      health: { overall: "yellow", reality_green: true, agents_sync_ok: true, dms_alignment_ok: true },
      interpretation: { allowed_actions: ["remediation", "diagnostic"] },
    });
  });

  it("oa.kernel_status works while the kernel is BLOCKED (it is how one learns why)", async () => {
    const status = (await callOATool(makeProject("blocked-missing-surface").ws, "oa.kernel_status")) as {
      mode: string;
      reasons: string[];
    };
    expect(status.mode).toBe("BLOCKED");
    expect(status.reasons).toEqual(["required surface share/REALITY_GREEN_SUMMARY.json: file not found"]);
  });

  it("oa.reality_check normalizes checks and lists failed ones", async () => {
    const r = await callOATool(makeProject("degraded-failing-check").ws, "oa.reality_check");
    // The registry's RealityCheckResult: counts, failed check names, every check with its details.
    expect(r).toEqual({
      reality_green: true,
      total_checks: 3,
      passed_checks: 2,
      failed_checks: ["Unit Tests"],
      checks: [
        { name: "AGENTS.md Sync", passed: true, message: "AGENTS.md files match the code", details: {} },
        { name: "DMS Alignment", passed: true, message: "DMS matches the SSOT", details: {} },
        { name: "Unit Tests", passed: false, message: "3 failed, 409 passed", details: {} },
      ],
      timestamp: "2026-11-20T10:00:00Z",
    });
  });

  it.each([
    ["oa.bootstrap_state", { branch: "feat/phase27e-oa-runtime", roles: ["PM", "OA"] }],
    ["oa.ssot_surface", { current_phase: "27", version: 17 }],
    ["oa.reality_summary", { reality_green: true, timestamp: "2026-11-20T10:00:00Z" }],
    ["oa.handoff_kernel", { handoff_to: "PM" }],
  ])("%s returns the surface with its unknown fields", async (id, expected) => {
    expect(await callOATool(makeProject("normal").ws, id)).toMatchObject(expected);
  });

  it("a surface tool on a missing or invalid surface raises OAToolError naming the file", async () => {
    const missing = await toolError(callOATool(makeProject("blocked-missing-surface").ws, "oa.reality_summary"));
    expect(missing.code).toBe("oa_surface_unavailable");
    expect(missing.message).toBe("cannot load share/REALITY_GREEN_SUMMARY.json: file not found");
    const invalid = await toolError(callOATool(makeProject("blocked-invalid-json").ws, "oa.ssot_surface"));
    expect(invalid.message).toMatch(/^cannot load share\/SSOT_SURFACE_V17\.json: not valid JSON/);
  });

  it("tools are read-only: calling every one leaves the surfaces directory unchanged", async () => {
    const p = makeProject("normal");
    writeSnapshot(p.ws);
    const before = filesUnder(p.share);
    for (const id of OA_TOOL_IDS) await callOATool(p.ws, id, id === "oa.guard.run" ? ["oa_state"] : []);
    expect(filesUnder(p.share)).toEqual(before);
  });

  it("an unknown tool id raises OAToolError", async () => {
    const err = await toolError(callOATool(makeProject("normal").ws, "oa.shell"));
    expect(err.code).toBe("oa_unknown_tool");
    expect(err.message).toBe(`unknown OA tool "oa.shell" (tools: ${OA_TOOL_IDS.join(", ")})`);
  });

  it("refuses arguments to tools that take none, and oa.guard.run without a name", async () => {
    const p = makeProject("normal");
    expect((await toolError(callOATool(p.ws, "oa.kernel_status", ["x"]))).message).toBe(
      "oa.kernel_status takes no argument, got 1",
    );
    expect((await toolError(callOATool(p.ws, "oa.guard.run"))).message).toBe(
      "oa.guard.run takes one guard name (registered guards: oa_state)",
    );
  });
});

describe("oa.guard.run", () => {
  it("runs the built-in oa_state guard", async () => {
    const p = makeProject("normal");
    writeSnapshot(p.ws);
    const run = (await callOATool(p.ws, "oa.guard.run", ["oa_state"])) as {
      guard: string;
      exit_code: number;
      output: { ok: boolean; mode: string };
    };
    expect(run).toMatchObject({ guard: "oa_state", exit_code: 0, output: { ok: true, mode: "STRICT" } });
  });

  it("runs a registered guard in the project root and returns its parsed JSON, failing verdicts included", async () => {
    const p = makeProject("normal", { guards: { docs_pass: guard("pass.mjs"), docs_fail: guard("fail.mjs") } });
    const pass = (await callOATool(p.ws, "oa.guard.run", ["docs_pass"])) as {
      exit_code: number;
      output: { ok: boolean; cwd: string };
    };
    expect(pass.exit_code).toBe(0);
    expect(pass.output.ok).toBe(true);
    expect(realpathSync(pass.output.cwd)).toBe(realpathSync(p.root));
    const fail = await callOATool(p.ws, "oa.guard.run", ["docs_fail"]);
    expect(fail).toMatchObject({
      guard: "docs_fail",
      exit_code: 1,
      output: {
        ok: false,
        errors: ["docs/SSOT/INDEX.md is out of date", { message: "AGENTS.md lists a removed module" }],
      },
    });
  });

  it("refuses a guard that is not registered in the config", async () => {
    const p = makeProject("normal", { guards: { docs_pass: guard("pass.mjs") } });
    const err = await toolError(callOATool(p.ws, "oa.guard.run", ["rm_rf"]));
    expect(err.code).toBe("oa_unknown_guard");
    expect(err.message).toBe(
      'guard "rm_rf" is not registered (registered guards: oa_state, docs_pass); add it under oa.guards in pmagent.config.json or ship it as scripts/guards/guard_rm_rf.py',
    );
  });

  it("stops a guard at its timeout", async () => {
    const p = makeProject("normal", { guards: { slow: guard("slow.mjs", { timeout_ms: 300 }) } });
    const err = await toolError(callOATool(p.ws, "oa.guard.run", ["slow"]));
    expect(err.code).toBe("oa_guard_timeout");
    expect(err.message).toBe(
      'guard "slow" did not finish within 300 ms (raise oa.guards.slow.timeout_ms if it needs longer)',
    );
  });

  it("refuses output that is neither JSON nor text then a JSON: line", async () => {
    const p = makeProject("normal", { guards: { chatty: guard("not-json.mjs") } });
    const err = await toolError(callOATool(p.ws, "oa.guard.run", ["chatty"]));
    expect(err.code).toBe("oa_guard_invalid_output");
    expect(err.message).toBe(
      'guard "chatty" did not print JSON on stdout (exit 0): expected a JSON value or a line `JSON: {…}` after its text; it printed: "all good, probably"',
    );
  });

  it("reads the origin's output form: text lines, then one `JSON: {…}` line", async () => {
    const p = makeProject("normal", { guards: { origin: guard("origin-form.mjs") } });
    const run = await callOATool(p.ws, "oa.guard.run", ["origin"]);
    expect(run).toEqual({
      guard: "origin",
      exit_code: 1,
      output: {
        ok: false,
        mode: "STRICT",
        mismatches: ["branch mismatch: OA='feature-x' vs kernel='main'"],
        missing_surfaces: [],
      },
      text: [
        "[guard_oa_state] checking OA state against the kernel surfaces",
        "FAIL: branch mismatch: OA='feature-x' vs kernel='main'",
      ],
    });
  });

  it("parseGuardOutput: a JSON: line whose JSON runs on over several lines; bad input named", () => {
    expect(parseGuardOutput("g", 0, 'ok\nJSON: {\n  "ok": true\n}\n')).toEqual({ output: { ok: true }, text: ["ok"] });
    expect(parseGuardOutput("g", 0, '{"ok": true}\n')).toEqual({ output: { ok: true }, text: [] });
    const empty = (() => {
      try {
        parseGuardOutput("g", 2, "");
      } catch (err) {
        return err as OAToolError;
      }
    })();
    expect(empty?.message).toBe(
      'guard "g" did not print JSON on stdout (exit 2): expected a JSON value or a line `JSON: {…}` after its text; it printed: (nothing)',
    );
  });

  it("refuses a `JSON:` line that is not valid JSON, quoting it", async () => {
    const p = makeProject("normal", { guards: { broken: guard("broken-json-line.mjs") } });
    const err = await toolError(callOATool(p.ws, "oa.guard.run", ["broken"]));
    expect(err.code).toBe("oa_guard_invalid_output");
    expect(err.message).toMatch(
      /^guard "broken" printed a `JSON:` line that is not valid JSON \(exit 0\): .+; it printed: "\{\\"ok\\": true, \\"mode\\":"$/,
    );
  });

  it("the guard list is the registry's guards, not every script the repository ships", async () => {
    const p = makeProject("normal");
    mkdirSync(join(p.root, "scripts/guards"), { recursive: true });
    // The origin ships about a hundred guard scripts; the registry names seven of them as tools.
    for (let i = 0; i < 94; i++) writeFileSync(join(p.root, `scripts/guards/guard_extra_${i}.py`), "print('{}')\n");
    for (const name of REGISTRY_GUARDS)
      writeFileSync(join(p.root, `scripts/guards/guard_${name}.py`), "print('JSON: {\"ok\": true}')\n");
    expect(readdirSync(join(p.root, "scripts/guards"))).toHaveLength(101);
    expect(guardNames(p.ws).sort()).toEqual([...REGISTRY_GUARDS].sort());
    expect(guardNames(p.ws)).toHaveLength(7);
    expect(await callOATool(p.ws, "oa.guard.run", ["share_sync"])).toEqual({
      guard: "share_sync",
      exit_code: 0,
      output: { ok: true },
    });
    const err = await toolError(callOATool(p.ws, "oa.guard.run", ["extra_3"]));
    expect(err.code).toBe("oa_unknown_guard");
    expect(err.message).toMatch(
      /^guard "extra_3" is not registered \(registered guards: oa_state, agents_md_sync, bootstrap_consistency, db_health, dms_alignment, lm_health, share_sync\);/,
    );
  });

  it("reports a guard command that cannot start", async () => {
    const p = makeProject("normal", { guards: { gone: { command: ["/nonexistent/guard-binary"] } } });
    const err = await toolError(callOATool(p.ws, "oa.guard.run", ["gone"]));
    expect(err.code).toBe("oa_guard_failed");
    expect(err.message).toBe('cannot start guard "gone" (/nonexistent/guard-binary): ENOENT');
  });

  it("discovers the guards the repository ships (scripts/guards/guard_*.py) and runs them, returning their JSON", async () => {
    const p = makeProject("normal", { guards: { docs_pass: guard("pass.mjs") } });
    mkdirSync(join(p.root, "scripts/guards"), { recursive: true });
    writeFileSync(
      join(p.root, "scripts/guards/guard_db_health.py"),
      'import json, os, sys\nprint(json.dumps({"ok": False, "cwd": os.getcwd(), "errors": ["db unreachable"]}))\nsys.exit(1)\n',
    );
    writeFileSync(join(p.root, "scripts/guards/helper.py"), "print('not a guard')\n");
    expect(guardNames(p.ws)).toEqual(["oa_state", "docs_pass", "db_health"]);
    const run = await callOATool(p.ws, "oa.guard.run", ["db_health"]);
    expect(run).toEqual({
      guard: "db_health",
      exit_code: 1,
      output: { ok: false, cwd: p.root, errors: ["db unreachable"] },
    });
    // A shipped guard_oa_state.py (the origin's own guard) is run instead of the built-in one.
    writeFileSync(
      join(p.root, "scripts/guards/guard_oa_state.py"),
      'import json\nprint(json.dumps({"ok": True, "mode": "STRICT", "mismatches": [], "missing_surfaces": []}))\n',
    );
    expect(await callOATool(p.ws, "oa.guard.run", ["oa_state"])).toEqual({
      guard: "oa_state",
      exit_code: 0,
      output: { ok: true, mode: "STRICT", mismatches: [], missing_surfaces: [] },
    });
    const err = await toolError(callOATool(p.ws, "oa.guard.run", ["helper"]));
    expect(err.code).toBe("oa_unknown_guard");
  });

  it("gives guards no secrets from the environment and redacts secrets from their output", async () => {
    const secret = "sk-test-abcdefghijklmnopqrstuvwxyz123456";
    process.env.OA_TEST_API_TOKEN = secret;
    process.env.OA_TEST_PLAIN = "visible";
    try {
      const p = makeProject("normal", {
        guards: { env: { command: [process.execPath, join(FIXTURES, "guards", "env.mjs"), secret] } },
      });
      const run = (await callOATool(p.ws, "oa.guard.run", ["env"])) as { output: Record<string, unknown> };
      expect(run.output).toEqual({ ok: true, has_token: false, plain: "visible", leaked: "[REDACTED]" });
    } finally {
      delete process.env.OA_TEST_API_TOKEN;
      delete process.env.OA_TEST_PLAIN;
    }
  });
});

/** path → content of every file under `dir`. */
function filesUnder(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const d of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (d.isFile()) out[join(d.parentPath, d.name)] = readFileSync(join(d.parentPath, d.name), "utf8");
  }
  return out;
}
