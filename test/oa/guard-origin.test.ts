/**
 * The origin's guard_oa_state.py verdict, check for check (issue 36): a coherent kernel with one
 * thing changed per row, and what the origin says of it. A kernel the guard passes boots as the
 * kernel's own health says (NORMAL here, unless a check failed), and SafeOPSDecision follows.
 */
import { describe, expect, it } from "vitest";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import {
  buildEnvelope,
  computeKernel,
  loadSurfaces,
  runOaGuard,
  runReasoning,
  writeSnapshot,
  type OADiagnostic,
} from "../../src/oa/index.js";
import { makeProject, writeSurface, type TestProject } from "./helpers.js";

const BOOTSTRAP = "PM_BOOTSTRAP_STATE.json";
const SUMMARY = "REALITY_GREEN_SUMMARY.json";
const STATE = "orchestrator_assistant/STATE.json";

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

function read(p: TestProject, file: string): Json {
  return JSON.parse(readFileSync(join(p.share, file), "utf8")) as Json;
}

function edit(p: TestProject, file: string, change: (v: Json) => void): void {
  const value = read(p, file);
  change(value);
  writeSurface(p, file, value);
}

function check(v: Json, name: string): Json {
  const c = (v.checks ?? v.checks_summary).find((x: Json) => x.name === name);
  if (!c) throw new Error(`no check ${name}`);
  return c;
}

interface Row {
  kernel: string;
  /** Applied after a fresh snapshot of the NORMAL fixture (STATE.json coherent with the kernel). */
  change: (p: TestProject) => void;
  ok: boolean;
  mode: "NORMAL" | "DEGRADED" | "BLOCKED";
  /** The failing lines of `mismatches`, as the origin prints them. */
  mismatches?: string[];
  /** A non-failing note or hint the guard must say: [severity, message pattern]. */
  note?: [OADiagnostic["severity"], RegExp];
}

const TABLE: Row[] = [
  { kernel: "coherent", change: () => {}, ok: true, mode: "NORMAL", mismatches: [] },
  { kernel: "OA STATE.json missing", change: (p) => rmSync(p.ws.statePath), ok: false, mode: "NORMAL", mismatches: [] },
  {
    kernel: "a required surface missing",
    change: (p) => rmSync(join(p.share, "SSOT_SURFACE_V17.json")),
    ok: false,
    mode: "BLOCKED",
    mismatches: [],
  },
  {
    kernel: "branch: STATE vs bootstrap",
    change: (p) => edit(p, STATE, (s) => (s.branch = "main")),
    ok: false,
    mode: "NORMAL",
    mismatches: [
      'branch match mismatch: PM_BOOTSTRAP_STATE.json="feat/phase27e-oa-runtime" vs orchestrator_assistant/STATE.json branch="main"',
    ],
  },
  {
    kernel: "phase: STATE vs SSOT current_phase",
    change: (p) => edit(p, STATE, (s) => (s.current_phase = "26")),
    ok: false,
    mode: "NORMAL",
    mismatches: [
      'phase match mismatch: SSOT_SURFACE_V17.json="27" vs orchestrator_assistant/STATE.json current_phase="26"',
    ],
  },
  {
    kernel: "phase: STATE vs SSOT phases.current (no current_phase)",
    change: (p) =>
      edit(p, "SSOT_SURFACE_V17.json", (s) => {
        delete s.current_phase;
        s.phases = { current: 28 };
      }),
    // The bootstrap's meta.current_phase (27) now differs from the SSOT too: a hint, not a failure.
    ok: false,
    mode: "NORMAL",
    mismatches: [
      'phase match mismatch: SSOT_SURFACE_V17.json="28" vs orchestrator_assistant/STATE.json current_phase="27"',
    ],
  },
  {
    kernel: "reality_green: STATE vs summary",
    change: (p) => edit(p, STATE, (s) => (s.reality_green = false)),
    ok: false,
    mode: "NORMAL",
    mismatches: [
      "reality match mismatch: REALITY_GREEN_SUMMARY.json=true vs orchestrator_assistant/STATE.json reality_green=false",
    ],
  },
  {
    kernel: "key check AGENTS.md Sync: STATE vs summary",
    change: (p) => edit(p, STATE, (s) => (check(s, "AGENTS.md Sync").passed = false)),
    ok: false,
    mode: "NORMAL",
    mismatches: [
      "AGENTS.md Sync mismatch: REALITY_GREEN_SUMMARY.json=true vs orchestrator_assistant/STATE.json checks_summary[AGENTS.md Sync].passed=false",
    ],
  },
  {
    kernel: "key check DMS Alignment: STATE vs summary",
    change: (p) => edit(p, STATE, (s) => (check(s, "DMS Alignment").passed = false)),
    ok: false,
    mode: "NORMAL",
    mismatches: [
      "DMS Alignment mismatch: REALITY_GREEN_SUMMARY.json=true vs orchestrator_assistant/STATE.json checks_summary[DMS Alignment].passed=false",
    ],
  },
  {
    kernel: "key check AGENTS–DMS Contract: STATE vs summary",
    change: (p) => {
      edit(p, SUMMARY, (r) => r.checks.push({ name: "AGENTS–DMS Contract", passed: true }));
      edit(p, STATE, (s) => s.checks_summary.push({ name: "AGENTS–DMS Contract", passed: false }));
    },
    ok: false,
    mode: "NORMAL",
    mismatches: [
      "AGENTS–DMS Contract mismatch: REALITY_GREEN_SUMMARY.json=true vs orchestrator_assistant/STATE.json checks_summary[AGENTS–DMS Contract].passed=false",
    ],
  },
  {
    kernel: "key check in STATE only (the summary lacks it): not compared",
    change: (p) => edit(p, STATE, (s) => s.checks_summary.push({ name: "AGENTS–DMS Contract", passed: false })),
    ok: true,
    mode: "NORMAL",
    mismatches: [],
  },
  {
    kernel: "key check in the summary only (STATE lacks it): not compared",
    change: (p) =>
      edit(p, STATE, (s) => (s.checks_summary = s.checks_summary.filter((c: Json) => c.name !== "DMS Alignment"))),
    ok: true,
    mode: "NORMAL",
    mismatches: [],
  },
  {
    kernel: "bootstrap health.agents_sync_ok vs the summary's AGENTS.md Sync",
    change: (p) => edit(p, BOOTSTRAP, (b) => (b.health.agents_sync_ok = false)),
    ok: false,
    mode: "DEGRADED",
    mismatches: [
      "AGENTS.md Sync mismatch: REALITY_GREEN_SUMMARY.json=true vs PM_BOOTSTRAP_STATE.json health.agents_sync_ok=false",
    ],
  },
  {
    kernel: "bootstrap health.dms_alignment_ok vs the summary's DMS Alignment",
    change: (p) => edit(p, BOOTSTRAP, (b) => (b.health.dms_alignment_ok = false)),
    ok: false,
    mode: "DEGRADED",
    mismatches: [
      "DMS Alignment mismatch: REALITY_GREEN_SUMMARY.json=true vs PM_BOOTSTRAP_STATE.json health.dms_alignment_ok=false",
    ],
  },
  {
    kernel: "stale bootstrap health.reality_green alone (false, the summary true)",
    change: (p) => edit(p, BOOTSTRAP, (b) => (b.health.reality_green = false)),
    ok: true,
    mode: "NORMAL",
    mismatches: [],
    note: [
      "info",
      /^PM_BOOTSTRAP_STATE\.json health\.reality_green says false but REALITY_GREEN_SUMMARY\.json says true: the bootstrap's health is regenerated from the summary/,
    ],
  },
  {
    kernel: 'legacy meta.dms_share_alignment "BROKEN" while DMS Alignment passes',
    change: (p) => edit(p, BOOTSTRAP, (b) => (b.meta.dms_share_alignment = "BROKEN")),
    ok: false,
    mode: "DEGRADED",
    mismatches: [
      'DMS Alignment mismatch: REALITY_GREEN_SUMMARY.json=true vs PM_BOOTSTRAP_STATE.json meta.dms_share_alignment="BROKEN"',
    ],
  },
  {
    kernel: 'legacy meta.dms_share_alignment "BROKEN" while DMS Alignment fails too (coherent, red)',
    change: (p) => {
      edit(p, BOOTSTRAP, (b) => {
        b.meta.dms_share_alignment = "BROKEN";
        b.health.dms_alignment_ok = false;
      });
      edit(p, SUMMARY, (r) => (check(r, "DMS Alignment").passed = false));
      writeSnapshot(p.ws);
    },
    ok: true,
    mode: "DEGRADED",
    mismatches: [],
  },
  {
    kernel: "a surface marked false in STATE's surface_status",
    change: (p) => edit(p, STATE, (s) => (s.surface_status.handoff_kernel = false)),
    ok: true,
    mode: "NORMAL",
    mismatches: [],
    note: [
      "warn",
      /^orchestrator_assistant\/STATE\.json marks surface handoff_kernel as unavailable \(surface_status false\)$/,
    ],
  },
  {
    kernel: "CONTEXT.json without version",
    change: (p) => edit(p, "oa/CONTEXT.json", (c) => delete c.version),
    ok: true,
    mode: "NORMAL",
    mismatches: [],
    note: ["warn", /^share\/oa\/CONTEXT\.json lacks "version"$/],
  },
  {
    kernel: "CONTEXT.json without context",
    change: (p) => writeSurface(p, "oa/CONTEXT.json", { version: 1 }),
    ok: true,
    mode: "NORMAL",
    mismatches: [],
    note: ["warn", /^share\/oa\/CONTEXT\.json is invalid: \$\.context: /],
  },
  {
    kernel: "CONTEXT.json not valid JSON",
    change: (p) => writeSurface(p, "oa/CONTEXT.json", "{ nope"),
    ok: true,
    mode: "NORMAL",
    mismatches: [],
    note: ["warn", /^share\/oa\/CONTEXT\.json is not valid JSON/],
  },
  {
    kernel: "the handoff kernel's branch differs (not an origin check)",
    change: (p) => edit(p, "HANDOFF_KERNEL.json", (h) => (h.branch = "main")),
    ok: true,
    mode: "NORMAL",
    mismatches: [],
    note: [
      "warn",
      /^branch: PM_BOOTSTRAP_STATE\.json says "feat\/phase27e-oa-runtime" but HANDOFF_KERNEL\.json \(branch\) says "main" \(a note/,
    ],
  },
];

describe("the OA guard gives the origin's verdict on each kernel", () => {
  it.each(TABLE)("$kernel: ok=$ok, $mode", async (row) => {
    const p = makeProject("normal");
    writeSnapshot(p.ws);
    row.change(p);
    const out = runOaGuard(p.ws, "STRICT");
    const failing = out.diagnostics.filter((d) => d.severity === "error" || d.severity === "block");
    expect(out.ok, JSON.stringify(failing, null, 2)).toBe(row.ok);
    expect(failing.length > 0).toBe(!row.ok);
    expect(out.kernel_mode).toBe(row.mode);
    if (row.mismatches) expect(out.mismatches).toEqual(row.mismatches);
    if (row.note) {
      const [severity, message] = row.note;
      expect(out.diagnostics).toContainEqual(
        expect.objectContaining({ severity, message: expect.stringMatching(message) }),
      );
    }
    // Boot mode and SafeOPSDecision follow the kernel: feature work runs only on a NORMAL one.
    expect(computeKernel(loadSurfaces(p.ws)).mode).toBe(row.mode);
    const decision = await runReasoning(buildEnvelope("SafeOPSDecision", "Implement Phase 28", { workspace: p.ws }), {
      workspace: p.ws,
    });
    expect(decision.decision).toBe(row.mode === "NORMAL" ? "ALLOW" : "DENY");
  });

  it("a kernel with every note and hint at once still passes STRICT and stays NORMAL", () => {
    const p = makeProject("normal");
    writeSnapshot(p.ws);
    edit(p, BOOTSTRAP, (b) => {
      b.health.reality_green = false;
      b.meta.current_phase = "26";
      b.meta.dms_share_alignment = "OK";
    });
    edit(p, "HANDOFF_KERNEL.json", (h) => (h.branch = "main"));
    edit(p, STATE, (s) => (s.surface_status.handoff_kernel = false));
    edit(p, "oa/CONTEXT.json", (c) => delete c.version);
    const out = runOaGuard(p.ws, "STRICT");
    expect(out).toMatchObject({ ok: true, kernel_mode: "NORMAL", mismatches: [] });
    const said = out.diagnostics.map((d) => `${d.severity} ${d.message}`);
    for (const expected of [
      /^info PM_BOOTSTRAP_STATE\.json health\.reality_green says false/,
      /^warn phase: SSOT_SURFACE_V17\.json says "27" but PM_BOOTSTRAP_STATE\.json/,
      /^warn branch: .*HANDOFF_KERNEL/,
      /^warn .*surface_status false/,
      /^warn .*lacks "version"/,
    ]) {
      expect(said).toContainEqual(expect.stringMatching(expected));
    }
    expect(out.diagnostics.every((d) => d.severity === "info" || d.severity === "warn")).toBe(true);
  });
});
