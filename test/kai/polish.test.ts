import { beforeAll, describe, expect, it } from "vitest";
import { ModelClient } from "../../src/prompt/index.js";
import { polishSummary, type KaiResponse } from "../../src/kai/index.js";
import { rewriteProblem } from "../../src/kai/reports/polish.js";
import { useFakeOpenAI } from "../helpers/openai-fixture.js";

const DIGEST = [
  "## layer_b / doc_update status (as of 2026-01-10T00:00:00.000Z)",
  "- cycle-2 blocked (started 2026-01-08T09:00:00Z); steps: Aya completed, Sho waiting",
  "- State: Cycle-1 applied through PR #849. (1 known gaps)",
  "- Next (high): Provide approve, comment to resume Sho's run run-sho-2",
].join("\n");

const response = {
  version: "kai_response_v1",
  request_id: "r1",
  status: "ok",
  meta: { generated_at: "2026-01-10T00:00:00.000Z", kai_version: "0.1.0" },
  payload: {
    kind: "what_changed_v1",
    data: {
      kind: "what_changed_v1",
      project_id: "p",
      time_window: { from: "2026-01-03", to: "2026-01-10" },
      highlights: [],
      by_category: { workflows: [], prs: [], state_docs: [] },
      risks: [],
      open_questions: [],
    },
  },
  summary_md: DIGEST,
  notes: [],
} as const satisfies KaiResponse;

describe("--polish: the model may reword summary_md, never the payload", () => {
  const fake = useFakeOpenAI({ clearRequests: false });
  let client: ModelClient;
  beforeAll(async () => {
    client = new ModelClient({
      model: "gpt-test",
      apiKey: "sk-test-kai-polish-000000000000",
      baseURL: fake.baseURL,
      timeoutMs: 10_000,
      maxRetries: 0,
      apiKeyEnv: "OPENAI_API_KEY",
    });
  });

  it("takes a rewrite that keeps the form and every fact; the payload is untouched", async () => {
    const rewrite = [
      "## layer_b / doc_update — status as of 2026-01-10T00:00:00.000Z",
      "- cycle-2 is blocked (it started 2026-01-08T09:00:00Z): Aya is done and Sho is waiting",
      "- STATE says Cycle-1 went in through PR #849; 1 known gaps remain",
      "- Next, high priority: give approve and comment so Sho's run run-sho-2 can resume",
    ].join("\n");
    fake.reply({ text: rewrite });
    const out = await polishSummary(client, response);
    expect(out.summary_md).toBe(rewrite);
    expect(out.payload).toEqual(response.payload);
    expect(out.notes).toEqual(["summary_md worded by model gpt-test (payload unchanged)"]);
    const sent = fake.requests.at(-1)!.body;
    expect(sent.model).toBe("gpt-test");
    expect(JSON.stringify(sent.input)).toContain("run-sho-2");
  });

  it("refuses a rewrite that changes a fact or the form and keeps the deterministic digest", async () => {
    fake.reply({ text: DIGEST.replace("#849", "#848") });
    const out = await polishSummary(client, response);
    expect(out.summary_md).toBe(DIGEST);
    expect(out.notes).toEqual([
      'summary_md not polished: the model\'s rewrite was refused because it dropped or changed "#849"',
    ]);
    expect(rewriteProblem(DIGEST, "Layer B is fine.")).toBe("it has 1 lines (3–5 expected)");
    expect(rewriteProblem(DIGEST, DIGEST.replace("## ", "# "))).toBe("its first line is not a '## ' heading");
    expect(rewriteProblem(DIGEST, DIGEST.replace("- State", "* State"))).toBe(
      `line "* State: Cycle-1 applied through PR #849. (1 known gaps)" is not a '- ' bullet`,
    );
  });

  it("a model error leaves the digest as it was, with a note and without the key", async () => {
    fake.reply({ status: 500, message: "upstream exploded" });
    const out = await polishSummary(client, response);
    expect(out.summary_md).toBe(DIGEST);
    expect(out.notes).toHaveLength(1);
    expect(out.notes[0]).toMatch(/^summary_md not polished: /);
    expect(JSON.stringify(out)).not.toContain("sk-test-kai-polish");
  });

  it("error responses are not sent to the model", async () => {
    const before = fake.requests.length;
    const error: KaiResponse = {
      version: "kai_response_v1",
      request_id: null,
      status: "error",
      meta: response.meta,
      payload: null,
      summary_md: "## x\n- y\n- z",
      notes: ["bad"],
    };
    expect(await polishSummary(client, error)).toBe(error);
    expect(fake.requests.length).toBe(before);
  });
});
