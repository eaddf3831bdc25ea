import { describe, expect, it } from "vitest";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { runCli } from "../helpers/proc.js";
import { FIXTURES, makeProject } from "./helpers.js";

describe("pmagent oa snapshot", () => {
  it("prints {success, path, state} and the state is the one written", async () => {
    const p = makeProject("normal");
    const r = await runCli(["oa", "snapshot", "--format", "json"], { cwd: p.root });
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out).toMatchObject({
      success: true,
      path: "share/orchestrator_assistant/STATE.json",
      state: { branch: "feat/phase27e-oa-runtime", kernel_mode: "NORMAL" },
    });
    expect(JSON.parse(readFileSync(join(p.root, out.path), "utf8"))).toEqual(out.state);
    const text = await runCli(["oa", "snapshot"], { cwd: p.root });
    expect(text.stdout).toBe(
      "wrote share/orchestrator_assistant/STATE.json: branch feat/phase27e-oa-runtime, phase 27, reality green, mode NORMAL\n",
    );
  });

  it("exits 1 naming the missing surface", async () => {
    const r = await runCli(["oa", "snapshot", "--format", "json"], {
      cwd: makeProject("blocked-missing-surface").root,
    });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    // Under --format json the error is JSON too.
    const { error } = JSON.parse(r.stderr) as { error: { code: string; message: string } };
    expect(error.code).toBe("oa_surface_missing");
    expect(error.message).toMatch(
      /^required kernel surface missing or invalid:\n {2}share\/REALITY_GREEN_SUMMARY\.json: file not found\n/,
    );
    const text = await runCli(["oa", "snapshot"], { cwd: makeProject("blocked-missing-surface").root });
    expect(text.stderr).toMatch(
      /^pmagent: required kernel surface missing or invalid:\n {2}share\/REALITY_GREEN_SUMMARY\.json: file not found\n/,
    );
    expect(text.stderr).toMatch(/\[oa_surface_missing\]\n$/);
  });

  it("exits 1 naming the file with wrong types", async () => {
    const r = await runCli(["oa", "snapshot"], { cwd: makeProject("blocked-wrong-types").root });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      "share/PM_BOOTSTRAP_STATE.json: $.branch: Invalid input: expected string, received number",
    );
  });

  it("exits 1 with a clear message outside a project", async () => {
    const r = await runCli(["oa", "snapshot"], { cwd: "/" });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/no pmagent\.config\.json in \/ or any parent directory/);
  });
});

describe("pmagent boot oa", () => {
  it.each([
    ["normal", 0, "NORMAL"],
    ["degraded-health-mismatch", 0, "DEGRADED"],
    ["hint-branch-mismatch", 0, "NORMAL"],
    ["blocked-invalid-json", 3, "BLOCKED"],
  ] as const)("%s: exit %i, mode %s", async (fixture, code, mode) => {
    const p = makeProject(fixture);
    const r = await runCli(["boot", "oa", "--format", "json"], { cwd: p.root });
    expect(r.code).toBe(code);
    const envelope = JSON.parse(r.stdout).oa_boot_envelope;
    expect(envelope.kernel.mode).toBe(mode);
    expect(envelope.session_metadata).toEqual({
      session_id: expect.stringMatching(/^oa-session-[0-9a-f-]{36}$/),
      workspace: p.root,
    });
  });

  it("documents exit code 3 in its help, and prints a text summary", async () => {
    const help = await runCli(["boot", "oa", "--help"]);
    expect(help.stdout).toContain("3  pmagent boot oa: the kernel is BLOCKED");
    const r = await runCli(["boot", "oa"], { cwd: makeProject("blocked-missing-surface").root });
    expect(r.code).toBe(3);
    expect(r.stdout).toContain(
      "mode BLOCKED\n  because required surface share/REALITY_GREEN_SUMMARY.json: file not found\nallowed: diagnostic\n",
    );
  });
});

describe("pmagent oa guard", () => {
  it("prints pure JSON and exits 1 only in STRICT mode on failure", async () => {
    const p = makeProject("normal");
    const strict = await runCli(["oa", "guard", "--mode", "STRICT", "--format", "json"], { cwd: p.root });
    expect(strict.code).toBe(1);
    const out = JSON.parse(strict.stdout);
    expect(out).toMatchObject({
      ok: false,
      mode: "STRICT",
      missing_surfaces: ["share/orchestrator_assistant/STATE.json"],
    });
    const hint = await runCli(["oa", "guard", "--mode", "HINT", "--format", "json"], { cwd: p.root });
    expect(hint.code).toBe(0);
    expect(JSON.parse(hint.stdout)).toMatchObject({ ok: false, mode: "HINT" });
    await runCli(["oa", "snapshot"], { cwd: p.root });
    const pass = await runCli(["oa", "guard", "--mode", "STRICT"], { cwd: p.root });
    expect(pass.code).toBe(0);
    expect(pass.stdout).toBe("PASS (STRICT) — kernel NORMAL, 0 diagnostics\n");
  });

  it("uses HINT without --mode, and refuses an unknown --mode (exit 2)", async () => {
    const p = makeProject("normal");
    const none = await runCli(["oa", "guard", "--format", "json"], { cwd: p.root });
    expect(none.code).toBe(0);
    expect(JSON.parse(none.stdout)).toMatchObject({ ok: false, mode: "HINT" });
    const bad = await runCli(["oa", "guard", "--mode", "LOOSE"], { cwd: p.root });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain(
      "option '--mode <mode>' argument 'LOOSE' is invalid. Allowed choices are STRICT, HINT.",
    );
  });
});

describe("pmagent oa tool", () => {
  it("prints a tool's JSON", async () => {
    const r = await runCli(["oa", "tool", "oa.reality_check"], { cwd: makeProject("degraded-failing-check").root });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ total_checks: 3, passed_checks: 2, failed_checks: ["Unit Tests"] });
  });

  it("takes --format json|text like every oa command; text is field by field, a guard run its text and verdict", async () => {
    const p = makeProject("degraded-failing-check", {
      guards: { origin: { command: [process.execPath, join(FIXTURES, "guards", "origin-form.mjs")] } },
    });
    const json = await runCli(["oa", "tool", "oa.reality_check", "--format", "json"], { cwd: p.root });
    expect(JSON.parse(json.stdout)).toMatchObject({ failed_checks: ["Unit Tests"] });
    const text = await runCli(["oa", "tool", "oa.reality_check", "--format", "text"], { cwd: p.root });
    expect(text.code).toBe(0);
    expect(text.stdout.split("\n").slice(0, 4)).toEqual([
      "reality_green: true",
      "total_checks: 3",
      "passed_checks: 2",
      'failed_checks: ["Unit Tests"]',
    ]);
    const guard = await runCli(["oa", "tool", "oa.guard.run", "origin", "--format", "text"], { cwd: p.root });
    expect(guard.code).toBe(0);
    expect(guard.stdout).toBe(
      [
        "guard origin: exit 1 (FAIL)",
        "  [guard_oa_state] checking OA state against the kernel surfaces",
        "  FAIL: branch mismatch: OA='feature-x' vs kernel='main'",
        `JSON: {"ok":false,"mode":"STRICT","mismatches":["branch mismatch: OA='feature-x' vs kernel='main'"],"missing_surfaces":[]}`,
        "",
      ].join("\n"),
    );
    const bad = await runCli(["oa", "tool", "oa.reality_check", "--format", "yaml"], { cwd: p.root });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--format.*yaml/);
  });

  it("refuses an unknown tool and an unregistered guard (exit 2)", async () => {
    const p = makeProject("normal");
    const unknown = await runCli(["oa", "tool", "oa.exec", "rm"], { cwd: p.root });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/^pmagent: unknown OA tool "oa\.exec" \(tools: oa\.kernel_status, /);
    const guard = await runCli(["oa", "tool", "oa.guard.run", "deploy"], { cwd: p.root });
    expect(guard.code).toBe(2);
    expect(guard.stderr).toContain('guard "deploy" is not registered (registered guards: oa_state)');
  });
});

describe("pmagent oa decision / generate / interpret / validate-phase", () => {
  it("decision: prints the decision; on a BLOCKED kernel diagnosis is ALLOWed and work DENYed (exit 0)", async () => {
    const ok = await runCli(["oa", "decision", "--action", "Implement Phase 27.E"], {
      cwd: makeProject("normal").root,
    });
    expect(ok.code).toBe(0);
    expect(ok.stdout).toBe(
      "SafeOPSDecision: ALLOW (status OK, engine: rules (no model section in pmagent.config.json))\nKernel is NORMAL and feature_work is allowed; no constraint conflicts.\n",
    );
    const blocked = await runCli(["oa", "decision", "--action", "Implement Phase 27.E", "--format", "json"], {
      cwd: makeProject("blocked-missing-surface").root,
    });
    expect(blocked.code).toBe(0);
    expect(JSON.parse(blocked.stdout)).toMatchObject({
      status: "BLOCKED",
      decision: "DENY",
      output: { decision: "DENY" },
    });
    const diagnose = await runCli(["oa", "decision", "--action", "Inspect the kernel surfaces", "--format", "json"], {
      cwd: makeProject("blocked-missing-surface").root,
    });
    expect(JSON.parse(diagnose.stdout)).toMatchObject({ status: "BLOCKED", decision: "ALLOW" });
  });

  it("decision: refuses an empty action (exit 2)", async () => {
    const r = await runCli(["oa", "decision", "--action", ""], { cwd: makeProject("normal").root });
    expect(r.code).toBe(2);
    expect(r.stderr).toBe("pmagent: SafeOPSDecision needs a non-empty goal [oa_goal_empty]\n");
  });

  it("generate: prints the OPS block in Markdown, and the JSON fields in json format", async () => {
    const p = makeProject("normal");
    const md = await runCli(
      [
        "oa",
        "generate",
        "--goal",
        "Create docs/SSOT/oa/OA_DATA_MODEL.md",
        "--hint",
        "docs.create=Always update AGENTS.md",
      ],
      { cwd: p.root },
    );
    expect(md.code).toBe(0);
    expect(md.stdout).toMatch(/^## 🟦 OPS MODE — Create docs\/SSOT\/oa\/OA_DATA_MODEL\.md\n/);
    for (const section of [
      "## Goal",
      "## Preflight",
      "## Commands",
      "## Evidence to Return",
      "## Next Gate",
      "- (docs.create) Always update AGENTS.md",
    ])
      expect(md.stdout).toContain(section);
    const json = await runCli(
      ["oa", "generate", "--goal", "Update docs/README.md", "--ref", "docs/SSOT/INDEX.md", "--format", "json"],
      { cwd: p.root },
    );
    const out = JSON.parse(json.stdout).output;
    expect(Object.keys(out)).toEqual(["ops_block", "commands", "evidence_required"]);
    expect(out.commands).toContain("git diff -- docs/README.md");
    expect(out.evidence_required).toContain("Confirmation that docs/SSOT/INDEX.md was read and followed");
  });

  it("ops-done: completes a generated block; an unknown id or a missing context exits 1", async () => {
    const p = makeProject("normal");
    const gen = JSON.parse(
      (await runCli(["oa", "generate", "--goal", "Write docs/a.md", "--format", "json"], { cwd: p.root })).stdout,
    );
    const done = await runCli(["oa", "ops-done", gen.envelope_id], { cwd: p.root });
    expect(done.code).toBe(0);
    expect(done.stdout).toBe(`OPS block ${gen.envelope_id} done; 0 still pending\n`);
    const unknown = await runCli(["oa", "ops-done", gen.envelope_id], { cwd: p.root });
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toBe(
      `pmagent: no pending OPS block "${gen.envelope_id}" in share/oa/CONTEXT.json (pending: none) [oa_ops_block_not_found]\n`,
    );
    const bare = makeProject("blocked-missing-surface");
    rmSync(join(bare.share, "oa/CONTEXT.json"));
    const none = await runCli(["oa", "ops-done", "x"], { cwd: bare.root });
    expect(none.code).toBe(1);
    expect(none.stderr).toBe(
      "pmagent: cannot complete OPS block x: share/oa/CONTEXT.json: file not found [oa_context_invalid]\n",
    );
  });

  it("refuses an empty goal or target phase (exit 2), and reports an unregistered guard to re-run as FAILED (exit 1)", async () => {
    const p = makeProject("normal");
    const goal = await runCli(["oa", "generate", "--goal", ""], { cwd: p.root });
    expect(goal.code).toBe(2);
    expect(goal.stderr).toBe("pmagent: OPSBlockGenerator needs a non-empty goal [oa_goal_empty]\n");
    const phase = await runCli(["oa", "validate-phase", "--to", ""], { cwd: p.root });
    expect(phase.code).toBe(2);
    expect(phase.stderr).toBe(
      "pmagent: PhaseTransitionValidator inputs is invalid:\n  $.target_phase: Too small: expected string to have >=1 characters [oa_invalid_inputs]\n",
    );
    const guard = await runCli(["oa", "interpret", "-", "--guard", "nightly"], { cwd: p.root, input: '{"ok": false}' });
    expect(guard.code).toBe(1);
    expect(guard.stdout).toContain(
      '[error] guard "nightly" is not registered (registered guards: oa_state); add it under oa.guards in pmagent.config.json',
    );
  });

  it("generate: refuses a malformed --hint (exit 2)", async () => {
    const r = await runCli(["oa", "generate", "--goal", "x", "--hint", "no-equals-sign"], {
      cwd: makeProject("normal").root,
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      'pmagent: --hint expects FLOW_ID=TEXT (e.g. docs.create="Always update AGENTS.md"), got "no-equals-sign" [invalid_option]\n',
    );
  });

  it("interpret: reads a guard's JSON from standard input", async () => {
    const p = makeProject("degraded-health-mismatch");
    const guard = await runCli(["oa", "guard", "--mode", "HINT", "--format", "json"], { cwd: p.root });
    const r = await runCli(["oa", "interpret", "-", "--format", "json"], { cwd: p.root, input: guard.stdout });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({
      program_id: "GuardFailureInterpreter",
      status: "DEGRADED",
      output: {
        root_cause: expect.stringMatching(
          /^missing_surface: OA state share\/orchestrator_assistant\/STATE\.json does not exist/,
        ),
      },
    });
  });

  it("interpret: refuses input that is not JSON, empty input and an unreadable file (exit 2)", async () => {
    const p = makeProject("normal");
    const bad = await runCli(["oa", "interpret", "-"], { cwd: p.root, input: "FAIL: things" });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^pmagent: standard input is not valid JSON: /);
    const empty = await runCli(["oa", "interpret", "-"], { cwd: p.root, input: "" });
    expect(empty.code).toBe(2);
    expect(empty.stderr).toBe(
      "pmagent: standard input is empty: pass a guard's JSON output (e.g. pmagent oa guard --mode HINT --format json | pmagent oa interpret -) [invalid_json]\n",
    );
    const missing = await runCli(["oa", "interpret", "nope.json"], { cwd: p.root });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toBe("pmagent: cannot read nope.json: ENOENT [input_unreadable]\n");
  });

  it("validate-phase: exit 0 when READY, 1 when NOT_READY with the missing criteria", async () => {
    const ready = await runCli(["oa", "validate-phase", "--to", "28"], { cwd: makeProject("normal").root });
    expect(ready.code).toBe(0);
    expect(ready.stdout).toBe(
      "PhaseTransitionValidator: READY (status OK, engine: rules (no model section in pmagent.config.json))\n",
    );
    const notReady = await runCli(["oa", "validate-phase", "--to", "29"], { cwd: makeProject("normal").root });
    expect(notReady.code).toBe(1);
    expect(notReady.stdout).toBe(
      "PhaseTransitionValidator: NOT_READY (status OK, engine: rules (no model section in pmagent.config.json))\nmissing: phase 29 skips phase 28\n",
    );
  });
});

describe("OA commands on the origin's kernel whose bootstrap health is stale (reality_green false, summary true)", () => {
  it("boots NORMAL; guard STRICT exits 0 with the stale health as a hint; feature work is allowed", async () => {
    const p = makeProject("origin-reality-conflict");
    const boot = await runCli(["boot", "oa", "--format", "json"], { cwd: p.root });
    expect(boot.code).toBe(0);
    const envelope = JSON.parse(boot.stdout).oa_boot_envelope;
    expect(envelope.kernel.mode).toBe("NORMAL");
    expect(envelope.interpretation.reasons).toEqual([]);
    const strict = await runCli(["oa", "guard", "--mode", "STRICT", "--format", "json"], { cwd: p.root });
    expect(strict.code).toBe(0);
    const diagnostics = JSON.parse(strict.stdout).diagnostics as Array<Record<string, unknown>>;
    expect(diagnostics).toEqual([
      expect.objectContaining({
        type: "warn",
        category: "tri_surface_incoherence",
        severity: "info",
        details: expect.objectContaining({ check: "health_coherence", field: "health.reality_green" }),
      }),
    ]);
    const text = await runCli(["oa", "guard", "--mode", "STRICT"], { cwd: p.root });
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(
      /^PASS \(STRICT\) — kernel NORMAL, 1 diagnostic\n\[info\] tri_surface_incoherence: PM_BOOTSTRAP_STATE\.json health\.reality_green says false but REALITY_GREEN_SUMMARY\.json says true: the bootstrap's health is regenerated from the summary/,
    );
    const work = await runCli(["oa", "decision", "--action", "Implement Phase 28", "--format", "json"], {
      cwd: p.root,
    });
    expect(JSON.parse(work.stdout)).toMatchObject({ status: "OK", decision: "ALLOW" });
  });
});
