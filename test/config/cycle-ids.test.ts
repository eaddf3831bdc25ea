import { describe, expect, it } from "vitest";
import { cycleRootId, defaultConfig, followUpId, nextStep, parseConfig } from "../../src/config/index.js";

const lane = parseConfig(JSON.stringify(defaultConfig("vpm-mini")), "config").lanes[0]!;

describe("follow-up ids of a lane cycle", () => {
  it("chain as the origin chains them: X → X-review → X-review-apply → …", () => {
    let id = "vpm-mini-docupdate-issue571-1";
    const chain = [];
    for (const suffix of ["-review", "-apply", "-pm_snapshot", "-done"])
      chain.push((id = followUpId(lane, id, suffix)));
    expect(chain).toEqual([
      "vpm-mini-docupdate-issue571-1-review",
      "vpm-mini-docupdate-issue571-1-review-apply",
      "vpm-mini-docupdate-issue571-1-review-apply-pm_snapshot",
      "vpm-mini-docupdate-issue571-1-review-apply-pm_snapshot-done",
    ]);
  });

  it("lead back to the cycle's root from the chained and the earlier form", () => {
    for (const id of [
      "req-1",
      "req-1-review",
      "req-1-review-apply",
      "req-1-apply",
      "req-1-review-apply-pm_snapshot-done-cycle_done",
      "req-1-pm_snapshot",
    ])
      expect(cycleRootId(lane, id)).toBe("req-1");
    // …and from the ids Hana's routes give an owner's task.
    for (const id of [
      "task-1-proposal",
      "task-1-proposal-review-apply",
      "task-1-analysis",
      "task-1-analysis-result-to_human",
    ])
      expect(cycleRootId(lane, id)).toBe(id.startsWith("task-1-analysis-result") ? "task-1-analysis-result" : "task-1");
    // A suffix alone is not stripped to nothing.
    expect(cycleRootId(lane, "-review")).toBe("-review");
  });
});

describe("a router's routes (Hana, roles contract §3.6.4)", () => {
  const hana = lane.roles.find((r) => r.name === "Hana")!;
  const step = (kind: string, payload: Record<string, unknown> = {}) => nextStep(hana, { kind, payload });

  it("send an entry by its kind and payload.target, and nowhere when no route takes the target", () => {
    expect(step("hana_task", { target: "Aya" })).toMatchObject({
      to: "Aya",
      kind: "doc_update_proposal_request",
      id_suffix: "-proposal",
    });
    expect(step("hana_task", { target: "Kai" })).toMatchObject({ to: "Kai", kind: "hana_to_kai_analysis_request" });
    expect(step("hana_task", { target: "Gen" })).toBeUndefined();
    expect(step("hana_task")).toBeUndefined();
    expect(step("pm_snapshot_done")).toMatchObject({
      to: "Human",
      kind: "doc_update_cycle_done",
      id_suffix: "-cycle_done",
    });
    expect(step("hana_analysis_result")).toMatchObject({ to: "Human", kind: "hana_analysis_done" });
  });

  it("leave a role without routes to its next step", () => {
    expect(nextStep(lane.roles[0]!, { kind: "doc_update_proposal_request", payload: {} })).toMatchObject({
      to: "Sho",
      kind: "doc_update_review_request",
    });
  });

  it("are refused on a kind the role does not pick, saying which it picks", () => {
    const config = defaultConfig("vpm-mini");
    const roles = config.lanes[0]!.roles;
    roles[4] = { ...roles[4]!, routes: [{ on: "doc_update_error", to: "Human", kind: "x", id_suffix: "-x" }] };
    expect(() => parseConfig(JSON.stringify(config), "cfg.json")).toThrow(
      'cfg.json is invalid:\n  $.lanes[0].roles[4].routes[0].on: "doc_update_error" is not one of the role\'s allowed_kinds (hana_task, pm_snapshot_done, hana_analysis_result)',
    );
  });
});

describe("a lane's open_pull_request", () => {
  it("defaults to the cycle's first change, and the doc_update lane opens it with Tsugu", () => {
    const config = parseConfig(JSON.stringify(defaultConfig("p")), "cfg.json");
    expect(config.lanes[0]!.open_pull_request).toBe("Tsugu");
    const lane = { ...defaultConfig("p").lanes[0]! } as Record<string, unknown>;
    delete lane.open_pull_request;
    expect(
      parseConfig(JSON.stringify({ ...defaultConfig("p"), lanes: [lane] }), "cfg.json").lanes[0]!.open_pull_request,
    ).toBe("first_change");
  });

  it("is refused when it is neither first_change, never nor a role of the lane", () => {
    const config = defaultConfig("p");
    config.lanes[0] = { ...config.lanes[0]!, open_pull_request: "Tsgu" };
    expect(() => parseConfig(JSON.stringify(config), "cfg.json")).toThrow(
      'cfg.json is invalid:\n  $.lanes[0].open_pull_request: "Tsgu" is neither first_change, never nor a role of the lane (Aya, Sho, Tsugu, Gen, Hana)',
    );
  });
});
