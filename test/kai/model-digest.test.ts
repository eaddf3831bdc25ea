import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { docUpdateLane, parseConfig } from "../../src/config/index.js";
import { ModelClient } from "../../src/prompt/index.js";
import { answer, modelDigest, type Highlight, type KaiResponse } from "../../src/kai/index.js";
import { evidenceKey } from "../../src/kai/reports/model-digest.js";
import { useFakeOpenAI } from "../helpers/openai-fixture.js";
import { HistoryRepo } from "./history.js";

const config = parseConfig(JSON.stringify({ project_id: "vpm-mini", lanes: [docUpdateLane()] }), "test");
const KEY = "sk-test-kai-digest-0000000000000";

/** A week with three stories: a capability over three PRs, a revert, a new workflow. */
function week(): HistoryRepo {
  const at = (d: number) => `2026-03-0${d}T10:00:00Z`;
  return new HistoryRepo(
    {
      at: "2026-02-20T00:00:00Z",
      files: {
        "STATE/current_state.md": "# State\n\n## Layer B / doc_update\n\nCycle-0.\n",
        "src/core/a.ts": "export const a = 1;\n",
      },
    },
    [
      {
        at: at(2),
        title: "export: add the CSV writer",
        body: "Exports the board for the monthly review.",
        files: { "src/export/csv.ts": "export const csv = 1;\n".repeat(30) },
      },
      {
        at: at(3),
        title: "export: stream large boards",
        body: "Part 2.",
        files: { "src/export/stream.ts": "export const s = 1;\n".repeat(20) },
      },
      {
        at: at(4),
        title: "export: document the formats",
        body: "Part 3.",
        files: { "docs/export.md": "# Export\n".repeat(10) },
      },
      {
        at: at(3),
        title: "core: cache configs",
        body: "Faster start.",
        files: { "src/core/a.ts": "export const a = 2;\n" },
      },
      {
        at: at(5),
        title: 'Revert "core: cache configs"',
        body: "The cache served stale configs.",
        files: { "src/core/a.ts": "export const a = 1;\n" },
      },
      {
        at: at(6),
        title: "Add the nightly workflow",
        body: "Runs the slow suites every night.",
        files: { ".github/workflows/nightly.yml": "on: schedule\n" },
      },
    ],
  );
}

describe("--model-digest: the model writes the highlights from Kai's themes, citing their evidence", () => {
  const fake = useFakeOpenAI({ clearRequests: false });
  let client: ModelClient;
  let repo: HistoryRepo;
  let kai: KaiResponse;
  let themes: Highlight[];

  beforeAll(async () => {
    client = new ModelClient({
      model: "gpt-test",
      apiKey: KEY,
      baseURL: fake.baseURL,
      timeoutMs: 10_000,
      maxRetries: 0,
      apiKeyEnv: "OPENAI_API_KEY",
    });
    repo = week();
    const request = {
      version: "kai_request_v1",
      request_id: "r",
      from: { actor_type: "human" },
      project_id: "vpm-mini",
      type: "what_changed",
      lane: { layer: "layer_b", name: "doc_update" },
      params: { as_of: "2026-03-09T00:00:00Z" },
    };
    kai = await answer(request, {
      config,
      sources: { repo: repo.dir },
      clock: () => Date.parse("2026-04-01T00:00:00Z"),
    });
    if (kai.status !== "ok" || kai.payload.kind !== "what_changed_v1") throw new Error(kai.notes.join("; "));
    themes = kai.payload.data.highlights;
  });
  afterAll(async () => {
    repo.cleanup();
  });

  it("Kai's own themes: the revert with what it undid, the capability, the new workflow", () => {
    expect(themes.map((h) => h.title)).toEqual([
      "Reverted: core: cache configs",
      "export: add the CSV writer (3 PRs)",
      "New workflow: .github/workflows/nightly.yml",
    ]);
  });

  it("takes an answer that reorders and rewrites the themes, each citing its own evidence; sends the themes with their ids under a strict schema", async () => {
    const [revert, capability] = themes;
    const cite = (h: Highlight, n: number) => h.evidence.slice(0, n).map(evidenceKey);
    fake.reply({
      json: {
        highlights: [
          {
            theme: capability!.rank,
            title: "Board export arrived",
            summary: "Three PRs added CSV export, streaming and format docs. It serves the monthly review.",
            evidence_ids: cite(capability!, 3),
          },
          {
            theme: revert!.rank,
            title: "A config cache was reverted",
            summary: "The cache served stale configs, so it was undone within the week.",
            evidence_ids: cite(revert!, 2),
          },
        ],
      },
    });
    const out = await modelDigest(client, kai);
    if (out.payload?.kind !== "what_changed_v1") throw new Error("not what_changed");
    expect(out.payload.data.highlights).toEqual([
      {
        rank: 1,
        category: "capability",
        title: "Board export arrived",
        summary: "Three PRs added CSV export, streaming and format docs. It serves the monthly review.",
        evidence: capability!.evidence.slice(0, 3),
      },
      {
        rank: 2,
        category: "revert",
        title: "A config cache was reverted",
        summary: "The cache served stale configs, so it was undone within the week.",
        evidence: revert!.evidence.slice(0, 2),
      },
    ]);
    // The rest of the payload is Kai's; the digest's Top line follows the new highlights.
    expect({ ...out.payload.data, highlights: [] }).toEqual({
      ...(kai.payload as { data: object }).data,
      highlights: [],
    });
    expect(out.summary_md.split("\n").find((l) => l.startsWith("- Top: "))).toBe(
      "- Top: Board export arrived; A config cache was reverted",
    );
    expect(out.notes.at(-1)).toBe("highlights written by model gpt-test from Kai's 3 themes, each citing its evidence");
    const sent = fake.requests.at(-1)!.body;
    expect(sent.text).toMatchObject({ format: { type: "json_schema", strict: true, name: "kai_highlights_v1" } });
    const shown = JSON.parse((sent.input as Array<{ content: string }>)[0]!.content) as {
      themes: Array<{ theme: number; evidence: Array<{ id: string }> }>;
    };
    expect(shown.themes.map((t) => t.theme)).toEqual([1, 2, 3]);
    expect(shown.themes[1]!.evidence.map((e) => e.id)).toEqual(capability!.evidence.map(evidenceKey));
  });

  it.each([
    [
      "cites an id Kai did not give",
      () => [{ theme: 1, title: "x", summary: "y.", evidence_ids: ["pr:9999"] }],
      'highlight 1 cites "pr:9999", not evidence of theme 1',
    ],
    [
      "cites another theme's evidence",
      (t: Highlight[]) => [{ theme: 1, title: "x", summary: "y.", evidence_ids: [evidenceKey(t[2]!.evidence[0]!)] }],
      `highlight 1 cites "file:.github/workflows/nightly.yml", not evidence of theme 1`,
    ],
    [
      "tells a theme twice",
      (t: Highlight[]) =>
        [1, 1].map((theme) => ({ theme, title: "x", summary: "y.", evidence_ids: [evidenceKey(t[0]!.evidence[0]!)] })),
      "theme 1 is told twice",
    ],
    [
      "invents a theme",
      (t: Highlight[]) => [{ theme: 7, title: "x", summary: "y.", evidence_ids: [evidenceKey(t[0]!.evidence[0]!)] }],
      "highlight 1 names theme 7, which was not given (themes 1, 2, 3)",
    ],
    ["has no highlight", () => [], "it has no highlight"],
  ])("refuses an answer that %s and keeps Kai's highlights as they were", async (_what, highlights, problem) => {
    fake.reply({ json: { highlights: highlights(themes) } });
    const out = await modelDigest(client, kai);
    expect(out.payload).toEqual(kai.payload);
    expect(out.summary_md).toBe(kai.summary_md);
    expect(out.notes.at(-1)).toBe(
      `highlights not written by the model: the answer was refused because ${problem}; Kai's own are kept`,
    );
  });

  it("an answer off the schema twice, or a model error, leaves Kai's highlights, with a note and without the key", async () => {
    fake.reply({ json: { highlights: [{ theme: 1 }] } }, { json: { items: [] } });
    const invalid = await modelDigest(client, kai);
    expect(invalid.payload).toEqual(kai.payload);
    expect(invalid.notes.at(-1)).toMatch(
      /^highlights not written by the model: the model's answer does not match output schema kai_highlights_v1, also after a retry/,
    );
    fake.reply({ status: 500, message: "upstream exploded" });
    const failed = await modelDigest(client, kai);
    expect(failed.payload).toEqual(kai.payload);
    expect(failed.notes.at(-1)).toMatch(/^highlights not written by the model: .*; Kai's own are kept$/);
    expect(JSON.stringify(failed)).not.toContain(KEY);
  });

  it("lane_status and error responses are not sent to the model", async () => {
    const before = fake.requests.length;
    const error: KaiResponse = {
      version: "kai_response_v1",
      request_id: null,
      status: "error",
      meta: kai.meta,
      payload: null,
      summary_md: "## x\n- y\n- z",
      notes: ["bad"],
    };
    expect(await modelDigest(client, error)).toBe(error);
    expect(fake.requests.length).toBe(before);
  });
});
