import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ModelClient, loadTemplates, outputSchemaFromZod, runRoleStep } from "../../src/prompt/index.js";
import { useFakeOpenAI } from "../helpers/openai-fixture.js";

const fake = useFakeOpenAI();

const templates = loadTemplates();
const entry = {
  id: "vpm-issue571-1-review",
  from: "Aya",
  to: "Sho",
  project_id: "vpm-mini",
  kind: "doc_update_review_request",
  status: "open",
  payload: { summary: "update STATE", details: {}, refs: {} },
  target_docs: ["STATE/current_state.md"],
  created_at: "2026-01-01T00:00:00Z",
  updated_at: "2026-01-01T00:00:00Z",
};
const client = () =>
  ModelClient.fromConfig(
    { base_url: fake.baseURL, model: "gpt-test", max_retries: 0 },
    { OPENAI_API_KEY: "sk-test-role-step-key-0123456789" },
  );
const review = (decision: string, level = "hard_gate") => ({
  level,
  decision,
  summary: "the proposal drops two sections",
  claims: [{ claim: "keeps all sections", evidence: "diff removes ## Risks", verdict: "contradicted" }],
  planning_feedback: [],
});

describe("runRoleStep", () => {
  it("builds the role's request for the entry, validates the answer and applies the reviewer level", async () => {
    fake.reply({ json: review("block"), usage: { input_tokens: 900, output_tokens: 60 } });
    const result = await runRoleStep({
      entry,
      role: "reviewer",
      lane: "layer_b/doc_update",
      cycle: 1,
      refs: ["vpm-issue571-1"],
      client: client(),
      templates,
      reviewLevel: "hard_gate",
      stream: true,
    });
    expect(result.answer).toEqual(review("block"));
    expect(result.usage).toEqual({ input_tokens: 900, output_tokens: 60, total_tokens: 960 });
    expect(result.ledger).toEqual({
      entry_id: entry.id,
      lane: "layer_b/doc_update",
      role: "Sho",
      cycle: 1,
      refs: ["vpm-issue571-1"],
    });
    expect(result.review).toMatchObject({ level: "hard_gate", decision: "block", result: "failure" });
    const body = fake.requests[0]!.body as {
      model: string;
      input: Array<{ role: string; content: string }>;
      text: { format: { name: string } };
      stream: boolean;
    };
    expect(body).toMatchObject({
      model: "gpt-test",
      stream: true,
      text: { format: { name: "pmagent_reviewer_output" } },
    });
    expect(body.input[0]!.content).toContain("Review level: `hard_gate`.");
    expect(body.input[0]!.content).toContain("entry_id: vpm-issue571-1-review");
    expect(body.input.at(-1)).toEqual({
      type: "message",
      role: "user",
      content: `Blackboard entry vpm-issue571-1-review (doc_update_review_request):\n\n\`\`\`json\n${JSON.stringify(entry, null, 2)}\n\`\`\``,
    });
  });

  it("a soft_gate reviewer lets the lane go on with a revision requested", async () => {
    fake.reply({ json: review("block", "soft_gate") });
    const result = await runRoleStep({
      entry,
      role: "reviewer",
      lane: "layer_b/doc_update",
      cycle: 2,
      client: client(),
      templates,
      reviewLevel: "soft_gate",
    });
    expect(result.review).toMatchObject({ result: "success", revision_requested: true });
  });

  it("other roles get their preset or an explicit schema, and no review outcome", async () => {
    const search = { answer: "a", findings: [], gaps: ["nothing on b"] };
    fake.reply({ json: search });
    const result = await runRoleStep({ entry, role: "searcher", lane: "l", cycle: 1, client: client() });
    expect(result.answer).toEqual(search);
    expect(result).not.toHaveProperty("review");
    expect(result.ledger.refs).toEqual([]);

    fake.reply({ json: { ok: true } });
    const explicit = outputSchemaFromZod("ok_answer", z.object({ ok: z.boolean() }));
    const custom = await runRoleStep({
      entry: { id: "e-2" },
      role: "executor",
      lane: "l",
      cycle: 1,
      client: client(),
      templates,
      outputSchema: explicit,
    });
    expect(custom.answer).toEqual({ ok: true });
    expect(custom.ledger.role).toBe("executor");
    expect((fake.requests[1]!.body.text as { format: { name: string } }).format.name).toBe("ok_answer");
  });

  it("refuses an entry without an id before calling the model", async () => {
    await expect(
      runRoleStep({ entry: { kind: "x" }, role: "executor", lane: "l", cycle: 1, client: client(), templates }),
    ).rejects.toThrow("blackboard entry is invalid:\n  $.id: Invalid input: expected string, received undefined");
    expect(fake.requests).toHaveLength(0);
  });
});
