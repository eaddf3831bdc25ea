import { describe, expect, it } from "vitest";
import { gateAction, gateRun, type ReasoningModel } from "../../src/oa/index.js";
import { makeProject, writeSurface } from "./helpers.js";

const entry = { id: "bb-2026-001", kind: "doc_update_proposal_request", title: "Describe the OA data model" };

describe("gateRun (SafeOPSDecision before a run)", () => {
  it("ALLOWs a run on a NORMAL kernel", async () => {
    const p = makeProject("normal");
    const result = await gateRun({ root: p.root, config: p.config, role: "Aya", entry });
    expect(result).toMatchObject({
      skipped: false,
      status: "OK",
      decision: "ALLOW",
      conditions: [],
      envelope_id: expect.any(String),
    });
  });

  it("DENYs a run on a BLOCKED kernel, saying why and how to lift it; a diagnostic run is ALLOWed", async () => {
    const p = makeProject("blocked-invalid-json");
    const result = await gateRun({ root: p.root, config: p.config, role: "Aya", entry });
    expect(result).toMatchObject({ skipped: false, status: "BLOCKED", decision: "DENY", conditions: [] });
    const reasoning = result.skipped === false ? result.reasoning : "";
    expect(reasoning).toMatch(
      /^Kernel is BLOCKED; feature_work is forbidden in BLOCKED \(allowed: diagnostic\)\. To lift: run `pmagent oa guard` and `pmagent boot oa`/,
    );
    expect(reasoning).toContain('set "oa": {"gate": false} in pmagent.config.json');
    expect(result.skipped === false && result.warnings).toContainEqual(
      expect.stringMatching(/^kernel is BLOCKED: required surface share\/SSOT_SURFACE_V17\.json: not valid JSON/),
    );
    const diagnose = await gateRun({
      root: p.root,
      config: p.config,
      role: "Kai",
      entry: { id: "bb-3", kind: "status_check", title: "Inspect the kernel surfaces" },
    });
    expect(diagnose).toMatchObject({ status: "BLOCKED", decision: "ALLOW" });
  });

  it("on the origin's kernel whose bootstrap health is stale (reality_green false, summary true): NORMAL, feature work allowed", async () => {
    const p = makeProject("origin-reality-conflict");
    const work = await gateRun({ root: p.root, config: p.config, role: "Aya", entry });
    expect(work).toMatchObject({ status: "OK", decision: "ALLOW" });
  });

  it("on a kernel whose bootstrap says DMS Alignment is broken while the summary passes it: DEGRADED, feature work denied", async () => {
    const p = makeProject("degraded-legacy-dms");
    const work = await gateRun({ root: p.root, config: p.config, role: "Aya", entry });
    expect(work).toMatchObject({ status: "DEGRADED", decision: "DENY" });
  });

  it("DENYs feature work on a DEGRADED kernel", async () => {
    const p = makeProject("degraded-failing-check");
    const result = await gateRun({ root: p.root, config: p.config, role: "Aya", entry });
    expect(result).toMatchObject({
      decision: "DENY",
      status: "DEGRADED",
      reasoning: expect.stringMatching(
        /^Kernel is DEGRADED; feature_work is forbidden in DEGRADED \(allowed: remediation, diagnostic\)\. To lift: /,
      ),
    });
  });

  it("DENYs a run whose entry breaks an OA constraint", async () => {
    const p = makeProject("normal");
    const result = await gateRun({
      root: p.root,
      config: p.config,
      role: "Tsugu",
      entry: { id: "bb-7", kind: "release_request", title: "git push the release branch" },
    });
    expect(result).toMatchObject({
      decision: "DENY",
      reasoning: expect.stringMatching(/^Action breaks the OA constraint no_git_push\. To lift: /),
    });
  });

  it("is CONDITIONAL for work that is neither allowed nor forbidden while DEGRADED", async () => {
    const p = makeProject("degraded-reality-red");
    const result = await gateRun({
      root: p.root,
      config: p.config,
      role: "Hana",
      entry: { id: "bb-9", kind: "lane_handoff_note" },
    });
    expect(result).toMatchObject({ decision: "CONDITIONAL", status: "DEGRADED" });
    expect(result.skipped === false && result.conditions).toHaveLength(2);
  });

  it("reads the entry kind first: a repair runs while DEGRADED, a doc update does not", async () => {
    const p = makeProject("degraded-reality-red");
    const result = await gateRun({
      root: p.root,
      config: p.config,
      role: "Aya",
      entry: { id: "bb-10", kind: "doc_update_proposal_request", title: "Fix the stale AGENTS.md" },
    });
    expect(
      gateAction("Aya", { id: "bb-10", kind: "doc_update_proposal_request", title: "Fix the stale AGENTS.md" }),
    ).toBe("Aya runs doc_update_proposal_request (entry bb-10): Fix the stale AGENTS.md");
    expect(result).toMatchObject({ decision: "DENY" });
    const fix = await gateRun({
      root: p.root,
      config: p.config,
      role: "Aya",
      entry: { id: "bb-11", kind: "repair_request" },
    });
    expect(fix).toMatchObject({ decision: "ALLOW", status: "DEGRADED" });
  });

  it("is skipped when the project has no OA surfaces, or the gate is off", async () => {
    const bare = makeProject(null);
    expect(await gateRun({ root: bare.root, config: bare.config, role: "Aya", entry })).toEqual({
      skipped: true,
      reason: "no OA kernel surfaces in share/",
    });
    const off = makeProject("blocked-invalid-json", { gate: false });
    expect(await gateRun({ root: off.root, config: off.config, role: "Aya", entry })).toEqual({
      skipped: true,
      reason: "the OA gate is off (oa.gate is false)",
    });
  });

  it("DENYs when the program fails (fail-closed), e.g. a model answering nonsense", async () => {
    const p = makeProject("normal");
    const model: ReasoningModel = { complete: async () => ({ verdict: "sure" }) };
    const result = await gateRun({ root: p.root, config: p.config, role: "Aya", entry, model });
    expect(result).toMatchObject({ decision: "DENY", status: "FAILED" });
    expect(result.skipped === false && result.reasoning).toMatch(
      /^SafeOPSDecision failed: the model's answer to SafeOPSDecision does not match its output schema/,
    );
  });

  it("passes a model's CONDITIONAL answer through with its conditions", async () => {
    const p = makeProject("normal");
    writeSurface(p, "oa/CONTEXT.json", { version: 1, context: { constraints: [] } });
    const model: ReasoningModel = {
      complete: async () => ({
        decision: "CONDITIONAL",
        reasoning: "Only with a review.",
        conditions: ["Sho reviews before apply"],
        warnings: [],
      }),
    };
    const result = await gateRun({ root: p.root, config: p.config, role: "Aya", entry, model });
    expect(result).toMatchObject({
      decision: "CONDITIONAL",
      reasoning: "Only with a review.",
      conditions: ["Sho reviews before apply"],
      status: "OK",
    });
  });
});
