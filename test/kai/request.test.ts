import { describe, expect, it } from "vitest";
import { docUpdateLane, parseConfig } from "../../src/config/index.js";
import { answer, answerText, checkRequest, plainRequest } from "../../src/kai/index.js";
import { KaiRequestSchema, KaiResponseSchema } from "../../src/kai/reports/schema.js";
import { TestRepo } from "./repo.js";

const config = parseConfig(JSON.stringify({ project_id: "vpm-mini", lanes: [docUpdateLane()] }), "test");
const NOW = Date.parse("2026-01-10T00:00:00Z");

const valid = {
  version: "kai_request_v1",
  request_id: "req-2026-01-10T00:00:00Z",
  from: { actor_type: "chatgpt", actor_id: "gpt-4o" },
  project_id: "vpm-mini",
  type: "lane_status",
  lane: { layer: "layer_b", name: "doc_update" },
};

const notesOf = async (value: unknown) => {
  const check = await checkRequest(value, config, new Date(NOW));
  if (check.ok) throw new Error("expected the request to be refused");
  return check;
};

describe("kai_request_v1", () => {
  it("fills the spec's defaults: time_window_days 7, max_highlights 5", async () => {
    expect(KaiRequestSchema.parse(valid).params).toEqual({ time_window_days: 7, max_highlights: 5 });
    const check = await checkRequest(
      { ...valid, params: { time_window_days: 30, as_of: "2026-01-01T00:00:00+09:00" } },
      config,
      new Date(NOW),
    );
    expect(check).toEqual({
      ok: true,
      request: { ...valid, params: { time_window_days: 30, max_highlights: 5, as_of: "2026-01-01T00:00:00+09:00" } },
    });
  });

  it.each([
    [
      "a wrong version",
      { ...valid, version: "kai_request_v2" },
      ['$.version: expected "kai_request_v1", got "kai_request_v2"'],
    ],
    [
      "an unknown type",
      { ...valid, type: "forecast" },
      ['$.type: unknown type "forecast": expected "lane_status" or "what_changed"'],
    ],
    ["no type", { ...valid, type: undefined }, ["$.type: required field is missing"]],
    [
      "an unknown project",
      { ...valid, project_id: "hakone-e2" },
      [
        '$.project_id: unknown project "hakone-e2"; this project is "vpm-mini" (another project needs its STATE/<project_id>/current_state.md committed)',
      ],
    ],
    [
      "an unknown lane",
      { ...valid, lane: { layer: "layer_a", name: "doc_update" } },
      ["$.lane: unknown lane layer_a/doc_update; configured lanes: layer_b/doc_update"],
    ],
    [
      "time_window_days 0",
      { ...valid, params: { time_window_days: 0 } },
      ["$.params.time_window_days: time_window_days must be a whole number from 1 to 365, got 0"],
    ],
    [
      "time_window_days 366",
      { ...valid, params: { time_window_days: 366 } },
      ["$.params.time_window_days: time_window_days must be a whole number from 1 to 365, got 366"],
    ],
    [
      "time_window_days 1.5",
      { ...valid, params: { time_window_days: 1.5 } },
      ["$.params.time_window_days: time_window_days must be a whole number from 1 to 365, got 1.5"],
    ],
    [
      "time_window_days as text",
      { ...valid, params: { time_window_days: "7" } },
      ['$.params.time_window_days: time_window_days must be a whole number from 1 to 365, got "7"'],
    ],
    [
      "max_highlights 0",
      { ...valid, params: { max_highlights: 0 } },
      ["$.params.max_highlights: max_highlights must be a whole number from 1 to 50, got 0"],
    ],
    [
      "max_highlights 51",
      { ...valid, params: { max_highlights: 51 } },
      ["$.params.max_highlights: max_highlights must be a whole number from 1 to 50, got 51"],
    ],
    [
      "an as_of without a zone",
      { ...valid, params: { as_of: "2026-01-01T00:00:00" } },
      [
        '$.params.as_of: expected an ISO 8601 date-time with a zone (e.g. 2026-01-15T10:30:00Z), got "2026-01-01T00:00:00"',
      ],
    ],
    [
      "an as_of in the future",
      { ...valid, params: { as_of: "2026-02-01T00:00:00Z" } },
      [
        "$.params.as_of: 2026-02-01T00:00:00Z is in the future (now is 2026-01-10T00:00:00.000Z); ask about the past or leave as_of out",
      ],
    ],
    [
      "an unknown actor type",
      { ...valid, from: { actor_type: "robot" } },
      ['$.from.actor_type: expected "chatgpt", "human" or "workflow", got "robot"'],
    ],
    [
      "a misspelt param",
      { ...valid, params: { max_highlight: 3 } },
      ['$.params: unknown field "max_highlight" (kai_request_v1 does not define it)'],
    ],
    ["a missing lane", { ...valid, lane: undefined }, ["$.lane: required field is missing"]],
  ])("refuses %s and says exactly what is wrong", async (_what, request, notes) => {
    expect(await notesOf(request)).toEqual({ ok: false, request_id: valid.request_id, notes });
  });

  it("lists every problem at once, and has no request_id to echo when there is none", async () => {
    const { request_id, ...noId } = valid;
    expect(request_id).toBeDefined();
    expect(await notesOf({ ...noId, version: "v0", type: "x" })).toEqual({
      ok: false,
      request_id: null,
      notes: [
        '$.version: expected "kai_request_v1", got "v0"',
        "$.request_id: required field is missing",
        '$.type: unknown type "x": expected "lane_status" or "what_changed"',
      ],
    });
    expect(await notesOf([1, 2])).toEqual({
      ok: false,
      request_id: null,
      notes: ["$: expected a kai_request_v1 JSON object, got an array"],
    });
  });

  it("reads the repository's projects (a git process) only for a request about another project", async () => {
    const asked: string[] = [];
    const projects = async () => {
      asked.push("projects");
      return ["vpm-mini", "hakone-e2"];
    };
    expect(await checkRequest(valid, config, new Date(NOW), projects)).toMatchObject({ ok: true });
    expect(asked).toEqual([]);
    expect(await checkRequest({ ...valid, project_id: "hakone-e2" }, config, new Date(NOW), projects)).toMatchObject({
      ok: true,
      request: { project_id: "hakone-e2" },
    });
    expect(await checkRequest({ ...valid, project_id: "nope" }, config, new Date(NOW), projects)).toEqual({
      ok: false,
      request_id: valid.request_id,
      notes: ['$.project_id: unknown project "nope"; projects in this repository: "vpm-mini", "hakone-e2"'],
    });
    expect(asked).toEqual(["projects", "projects"]);
  });
});

describe("the request check without the schema (plainRequest)", () => {
  const p = { time_window_days: 7, max_highlights: 5 };
  const plain = [
    valid,
    { ...valid, params: {} },
    { ...valid, params: { time_window_days: 1, max_highlights: 50, as_of: "2026-01-01T00:00:00+09:00" } },
    { ...valid, params: { time_window_days: 365, max_highlights: 1 } },
    { ...valid, type: "what_changed", from: { actor_type: "human" } },
    { ...valid, from: { actor_type: "workflow", actor_id: "" } },
  ];
  const others: unknown[] = [
    null,
    [valid],
    "kai_request_v1",
    { ...valid, version: "kai_request_v2" },
    { ...valid, request_id: "" },
    { ...valid, request_id: 7 },
    { ...valid, project_id: "" },
    { ...valid, type: "forecast" },
    { ...valid, extra: 1 },
    { ...valid, from: undefined },
    { ...valid, from: { actor_type: "robot" } },
    { ...valid, from: { actor_type: "human", actor_id: 3 } },
    { ...valid, from: { actor_type: "human", name: "x" } },
    { ...valid, lane: undefined },
    { ...valid, lane: { layer: "layer_b" } },
    { ...valid, lane: { layer: "layer_b", name: "" } },
    { ...valid, lane: { layer: "layer_b", name: "doc_update", extra: true } },
    { ...valid, params: null },
    { ...valid, params: [] },
    { ...valid, params: { max_highlight: 3 } },
    ...[0, 366, 3.5, "7", null, Number.NaN].map((n) => ({ ...valid, params: { time_window_days: n } })),
    ...[0, 51, 2.5, "5"].map((n) => ({ ...valid, params: { max_highlights: n } })),
    ...["2026-01-01", "2026-01-01T00:00:00", "yesterday", 20260101].map((as_of) => ({ ...valid, params: { as_of } })),
    { ...valid, params: { as_of: undefined } },
  ];

  it("takes a plainly valid request as the schema gives it, defaults filled in", () => {
    for (const request of plain) {
      const fast = plainRequest(request);
      expect(fast).not.toBeNull();
      expect(fast).toStrictEqual(KaiRequestSchema.parse(request));
    }
    expect(plainRequest(valid)?.params).toEqual(p);
  });

  it("takes nothing the schema refuses, and leaves the rest to the schema", () => {
    for (const request of others) {
      const fast = plainRequest(request);
      const schema = KaiRequestSchema.safeParse(request);
      if (fast !== null) expect(schema.success && fast).toStrictEqual(schema.data);
      if (!schema.success) expect(fast).toBeNull();
    }
    // Every one of these is refused, by the schema too.
    expect(others.filter((r) => KaiRequestSchema.safeParse(r).success)).toEqual([
      { ...valid, params: { as_of: undefined } },
    ]);
  });
});

describe("error responses", () => {
  const repo = new TestRepo();
  const options = { config, sources: { repo: repo.dir }, clock: () => NOW };

  it("answers invalid JSON with status error, no request_id and the parser's reason", async () => {
    const res = KaiResponseSchema.parse(await answerText('{"version": "kai_request_v1",', options));
    expect(res).toMatchObject({
      version: "kai_response_v1",
      request_id: null,
      status: "error",
      payload: null,
      meta: { generated_at: "2026-01-10T00:00:00.000Z", kai_version: "0.1.0" },
    });
    expect(res.notes).toHaveLength(1);
    expect(res.notes[0]).toMatch(/^the request is not valid JSON: /);
    expect(res.summary_md.split("\n")).toHaveLength(3);
  });

  it("echoes request_id and puts the notes in the summary", async () => {
    const res = await answer({ ...valid, project_id: "other" }, options);
    expect(res).toEqual({
      version: "kai_response_v1",
      request_id: valid.request_id,
      status: "error",
      meta: { generated_at: "2026-01-10T00:00:00.000Z", kai_version: "0.1.0" },
      payload: null,
      summary_md:
        '## Kai could not answer this request\n- $.project_id: unknown project "other"; this project is "vpm-mini" (another project needs its STATE/<project_id>/current_state.md committed)\n- Fix the request and send it again (1 problem listed in notes)',
      notes: [
        '$.project_id: unknown project "other"; this project is "vpm-mini" (another project needs its STATE/<project_id>/current_state.md committed)',
      ],
    });
    repo.cleanup();
  });
});
