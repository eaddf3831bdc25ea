import { describe, expect, it } from "vitest";
import { ModelClient, buildResponsesRequest, loadTemplates, type ToolCall } from "../../src/prompt/index.js";
import { useFakeOpenAI } from "../helpers/openai-fixture.js";

const fake = useFakeOpenAI({ expectDrained: true });

const client = () =>
  ModelClient.fromConfig(
    { base_url: fake.baseURL, model: "gpt-test", max_retries: 0 },
    { OPENAI_API_KEY: "sk-test-tools-0123456789abcdef" },
  );
const payload = () =>
  buildResponsesRequest({ role: "orchestrator", model: "gpt-test", templates: loadTemplates(), input: "plan it" });
const planCall = {
  name: "update_plan",
  arguments: { explanation: null, plan: [{ step: "s", owner: "o", status: "pending" }] },
};

describe.each([false, true])("ModelClient tool calls (stream: %s)", (stream) => {
  it("hands each call to the handler and sends its output back until the model answers", async () => {
    fake.reply(
      { calls: [planCall], usage: { input_tokens: 10, output_tokens: 5 } },
      { text: "done", usage: { input_tokens: 20, output_tokens: 1 } },
    );
    const seen: ToolCall[] = [];
    const answer = await client().respond(payload(), { stream, tools: (call) => (seen.push(call), "ok") });
    expect(answer).toMatchObject({
      text: "done",
      usage: { input_tokens: 30, output_tokens: 6, total_tokens: 36 },
      tool_calls: [{ name: "update_plan", call_id: expect.any(String) as unknown }],
    });
    expect(answer.attempts).toHaveLength(2);
    expect(seen).toEqual([
      { name: "update_plan", call_id: answer.tool_calls![0]!.call_id, arguments: JSON.stringify(planCall.arguments) },
    ]);
    expect((fake.requests[1]!.body.input as Array<{ type: string; output?: string }>).at(-1)).toEqual({
      type: "function_call_output",
      call_id: seen[0]!.call_id,
      output: "ok",
    });
  });

  it("refuses a call when nothing can carry it out", async () => {
    fake.reply({ calls: [planCall] });
    await expect(client().respond(payload(), { stream })).rejects.toMatchObject({
      code: "model_tool_call_unexpected",
      message:
        "the model called update_plan, but no tool can be carried out here: offer tools only with a handler for them",
    });
  });

  it("stops a model that keeps calling tools without answering", async () => {
    fake.reply({ calls: [planCall] }, { calls: [planCall] }, { calls: [planCall] });
    await expect(client().respond(payload(), { stream, tools: () => "ok", maxToolRounds: 2 })).rejects.toMatchObject({
      code: "model_tool_rounds_exceeded",
      message:
        "the model kept calling tools (update_plan) for 2 rounds without answering: stopped (its calls are in the run's events); narrow the work item or the instructions",
    });
    expect(fake.requests).toHaveLength(3);
  });
});

describe("ModelClient tool calls from a compatible server", () => {
  it("takes the calls from the streamed items when response.completed leaves output empty", async () => {
    fake.reply({ calls: [planCall], bareCompleted: true }, { text: "done" });
    const names: string[] = [];
    const answer = await client().respond(payload(), { stream: true, tools: (call) => (names.push(call.name), "ok") });
    expect(answer.text).toBe("done");
    expect(names).toEqual(["update_plan"]);
    expect((fake.requests[1]!.body.input as Array<{ type: string }>).slice(-2).map((i) => i.type)).toEqual([
      "function_call",
      "function_call_output",
    ]);
  });
});
