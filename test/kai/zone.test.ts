import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { docUpdateLane, parseConfig } from "../../src/config/index.js";
import { answer, type WhatChanged } from "../../src/kai/index.js";
import { KaiResponseSchema } from "../../src/kai/reports/schema.js";
import { TestRepo } from "./repo.js";

const configWith = (more: Record<string, unknown> = {}) =>
  parseConfig(JSON.stringify({ project_id: "vpm-mini", lanes: [docUpdateLane()], ...more }), "test");
const NOW = Date.parse("2026-04-01T00:00:00Z");

const request = (params: Record<string, unknown>) => ({
  version: "kai_request_v1",
  request_id: "req-zone",
  from: { actor_type: "human" },
  project_id: "vpm-mini",
  type: "what_changed",
  lane: { layer: "layer_b", name: "doc_update" },
  params,
});

describe("what_changed time windows are calendar days of the answer's zone", () => {
  const repo = new TestRepo();
  beforeAll(() => {
    repo.commit("2026-01-01T00:00:00Z", "initial", { "STATE/current_state.md": "# Current state\n" });
    // 2026-03-02 23:30 in New York (EST, -05:00): outside a 7-day window ending 2026-03-10 00:00 EDT.
    repo.commit("2026-03-03T04:30:00Z", "just before the window (#10)", { "docs/a.md": "a" });
    // 2026-03-03 00:30 in New York: inside it. With 7×24 h counted back, this one would be out and the one above in.
    repo.commit("2026-03-03T05:30:00Z", "just inside the window (#11)", { "docs/b.md": "b" });
    repo.commit("2026-03-09T14:00:00Z", "Tokyo, 23:00 on the 9th (#12)", { "docs/c.md": "c" });
  });
  afterAll(() => repo.cleanup());

  async function ask(
    config: ReturnType<typeof configWith>,
    params: Record<string, unknown>,
  ): Promise<{ data: WhatChanged; notes: string[] }> {
    const res = KaiResponseSchema.parse(
      await answer(request(params), { config, sources: { repo: repo.dir }, clock: () => NOW }),
    );
    if (res.status !== "ok" || res.payload.kind !== "what_changed_v1") throw new Error(JSON.stringify(res.notes));
    return { data: res.payload.data, notes: res.notes };
  }
  const prs = (data: WhatChanged) => data.by_category.prs.map((p) => p.number).sort((a, b) => a - b);

  it("as_of at midnight in +09:00: the dates are Tokyo's, not UTC's", async () => {
    const { data, notes } = await ask(configWith(), { as_of: "2026-03-10T00:00:00+09:00", time_window_days: 1 });
    // In UTC that instant is 2026-03-09T15:00Z: a UTC reader would see the window as 03-08 – 03-09.
    expect(data.time_window).toEqual({ from: "2026-03-09", to: "2026-03-10" });
    expect(prs(data)).toEqual([12]);
    expect(notes).toContain("Time window: (2026-03-08T15:00:00.000Z, 2026-03-09T15:00:00.000Z], dates in +09:00");
  });

  it("as_of in Z: the dates stay UTC's", async () => {
    const { data } = await ask(configWith(), { as_of: "2026-03-10T00:00:00Z", time_window_days: 1 });
    expect(data.time_window).toEqual({ from: "2026-03-09", to: "2026-03-10" });
  });

  it("a configured zone: a window spanning the DST change keeps its wall-clock bounds", async () => {
    // 2026-03-08 is the US change to daylight time: the window is 7 days but 167 hours long.
    const { data, notes } = await ask(configWith({ timezone: "America/New_York" }), { as_of: "2026-03-10T04:00:00Z" });
    expect(data.time_window).toEqual({ from: "2026-03-03", to: "2026-03-10" });
    expect(notes).toContain(
      "Time window: (2026-03-03T05:00:00.000Z, 2026-03-10T04:00:00.000Z], dates in America/New_York",
    );
    expect(prs(data)).toEqual([11, 12]);
  });

  it("the configured zone wins over the offset as_of was written with", async () => {
    const { data } = await ask(configWith({ timezone: "America/New_York" }), { as_of: "2026-03-10T09:00:00+09:00" });
    expect(data.time_window).toEqual({ from: "2026-03-02", to: "2026-03-09" });
  });

  it("a timezone that is not an IANA name is refused with the fix", () => {
    expect(() => configWith({ timezone: "Tokyo/Japan" })).toThrow(
      '$.timezone: expected an IANA time zone name (e.g. Asia/Tokyo, Europe/Berlin, UTC), got "Tokyo/Japan"',
    );
  });
});
