import { describe, expect, it } from "vitest";
import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import {
  ModelClient,
  buildResponsesRequest,
  loadTemplates,
  modelSettings,
  presetOutputSchema,
  takesReasoning,
  type ModelSectionInput,
  type ResponsesPayload,
} from "../../src/prompt/index.js";
import { useFakeOpenAI } from "../helpers/openai-fixture.js";

const KEY = "sk-test-0123456789abcdefghijklmnop";
const fake = useFakeOpenAI({ expectDrained: true });

const templates = loadTemplates();
const searcher = presetOutputSchema("searcher", "role_default");
const validSearch = {
  answer: "in docs/a.md",
  findings: [{ source: "docs/a.md:1", excerpt: "a", relevance: "direct" }],
  gaps: [],
};

function client(model: ModelSectionInput = {}): ModelClient {
  return ModelClient.fromConfig({ base_url: fake.baseURL, max_retries: 2, ...model }, { OPENAI_API_KEY: KEY });
}

function payload(structured = false): ResponsesPayload {
  return buildResponsesRequest({
    role: "searcher",
    model: "gpt-test",
    templates,
    input: "where is a?",
    responsesStructuredOutput: structured,
  });
}

describe("modelSettings", () => {
  it("needs a key and says in one line how to configure one", () => {
    expect(() => modelSettings(undefined, {})).toThrow(
      /^no model API key: set OPENAI_API_KEY or model.api_key_env in pmagent.config.json$/,
    );
    expect(() => modelSettings({ api_key_env: "TEAM_KEY" }, { OPENAI_API_KEY: KEY })).toThrow(
      /^no model API key: set TEAM_KEY \(named by model.api_key_env in pmagent.config.json\)$/,
    );
    try {
      modelSettings(undefined, { OPENAI_API_KEY: " " });
    } catch (err) {
      expect(err).toMatchObject({ code: "no_model_api_key", kind: "usage" });
    }
  });

  it("reads the key from the configured variable and the base URL from config, else OPENAI_BASE_URL", () => {
    expect(modelSettings({ api_key_env: "TEAM_KEY" }, { TEAM_KEY: "k1" })).toEqual({
      model: "gpt-4.1-mini",
      apiKey: "k1",
      apiKeyEnv: "TEAM_KEY",
      baseURL: undefined,
      timeoutMs: 120000,
      maxRetries: 3,
      request: {
        enabled: true,
        stream: true,
        store: false,
        reasoning: "auto",
        reasoning_effort: "medium",
        reasoning_summary: "auto",
        verbosity: "medium",
        prompt_cache_key: true,
      },
    });
    expect(modelSettings({}, { OPENAI_API_KEY: "k", OPENAI_BASE_URL: "http://127.0.0.1:9/v1" }).baseURL).toBe(
      "http://127.0.0.1:9/v1",
    );
    expect(() => modelSettings({}, { OPENAI_API_KEY: "k", OPENAI_BASE_URL: "localhost:8080" })).toThrow(
      "OPENAI_BASE_URL is not an http(s) URL: set it to the API's base, e.g. https://api.openai.com/v1",
    );
    expect(() => modelSettings({ base_url: "ftp://127.0.0.1/v1" }, { OPENAI_API_KEY: "k" })).toThrow(
      /^model\.base_url is not an http\(s\) URL: /,
    );
    expect(() => modelSettings({ timeout_ms: -1 } as never, { OPENAI_API_KEY: "k" })).toThrow(
      "model settings is invalid:\n  $.timeout_ms: Too small: expected number to be >0",
    );
    expect(
      modelSettings(
        { base_url: "http://127.0.0.1:8/v1" },
        { OPENAI_API_KEY: "k", OPENAI_BASE_URL: "http://127.0.0.1:9/v1" },
      ).baseURL,
    ).toBe("http://127.0.0.1:8/v1");
  });
});

describe.each([false, true])("ModelClient through the openai SDK (stream: %s)", (stream) => {
  it("returns the answer text and its token usage, sending the payload with the key", async () => {
    fake.reply({ text: "It is in docs/a.md.", usage: { input_tokens: 120, output_tokens: 7 } });
    const answer = await client().respond(payload(), { stream });
    expect(answer).toEqual({
      text: "It is in docs/a.md.",
      answer: undefined,
      usage: { input_tokens: 120, output_tokens: 7, total_tokens: 127 },
      attempts: [
        {
          response_id: expect.stringMatching(/^resp_fake\d+$/),
          usage: { input_tokens: 120, output_tokens: 7, total_tokens: 127 },
        },
      ],
    });
    expect(fake.requests).toHaveLength(1);
    const req = fake.requests[0]!;
    expect(req).toMatchObject({ method: "POST", path: "/v1/responses" });
    expect(req.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(req.body).toEqual({ ...payload(), ...(stream ? { stream: true } : { stream: false }) });
  });

  it("validates a structured answer with the output schema", async () => {
    fake.reply({ json: validSearch });
    const answer = await client().respond(payload(true), { output: searcher, stream });
    expect(answer.answer).toEqual(validSearch);
    expect(fake.requests[0]!.body.text).toEqual(payload(true).text);
  });

  it("sends an invalid answer back once with the validation errors, then takes the valid one", async () => {
    fake.reply(
      { text: '{"answer": 42}', usage: { input_tokens: 100, output_tokens: 5 } },
      { json: validSearch, usage: { input_tokens: 150, output_tokens: 20 } },
    );
    const answer = await client().respond(payload(true), { output: searcher, stream });
    expect(answer.answer).toEqual(validSearch);
    expect(answer.usage).toEqual({ input_tokens: 250, output_tokens: 25, total_tokens: 275 });
    expect(answer.attempts).toHaveLength(2);
    const second = fake.requests[1]!.body.input as Array<{ role: string; content: string }>;
    const first = payload(true).input;
    expect(second.slice(0, first.length)).toEqual(first);
    expect(second.slice(first.length)).toEqual([
      { type: "message", role: "assistant", content: '{"answer": 42}' },
      {
        type: "message",
        role: "user",
        content: [
          'Your answer does not match the output schema "pmagent_searcher_output":',
          "- $.answer: Invalid input: expected string, received number",
          "- $.findings: Invalid input: expected array, received undefined",
          "- $.gaps: Invalid input: expected array, received undefined",
          "Answer again with one JSON object that matches the schema exactly.",
        ].join("\n"),
      },
    ]);
  });

  it("fails clearly when the retried answer is still invalid", async () => {
    fake.reply({ text: "not json" }, { json: { answer: "x" } });
    const err = await client()
      .respond(payload(true), { output: searcher, stream })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "model_answer_invalid", kind: "unavailable" });
    expect((err as Error).message).toBe(
      "the model's answer does not match output schema pmagent_searcher_output, also after a retry with the validation errors:\n  $.findings: Invalid input: expected array, received undefined\n  $.gaps: Invalid input: expected array, received undefined",
    );
    expect(fake.requests).toHaveLength(2);
  });

  it("retries a 429 (honouring Retry-After) and succeeds", async () => {
    fake.reply({ status: 429, retryAfter: 0 }, { text: "ok" });
    const answer = await client().respond(payload(), { stream });
    expect(answer.text).toBe("ok");
    expect(fake.requests).toHaveLength(2);
  });

  it("gives up on a server that answers 500 every time, after the configured retries", async () => {
    fake.reply({ status: 500 }, { status: 500 }, { status: 500 });
    const err = await client({ max_retries: 2 })
      .respond(payload(), { stream })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "model_server_error", kind: "unavailable" });
    expect((err as Error).message).toBe(
      `the model API at ${fake.baseURL} failed with 500 after 2 retries: The server had an error while processing your request. Sorry about that!`,
    );
    expect(fake.requests).toHaveLength(3);
  });

  it("reports a refusal", async () => {
    fake.reply({ refusal: "I can't help with that." });
    await expect(client().respond(payload(), { stream })).rejects.toMatchObject({
      code: "model_refused",
      message: "the model refused to answer: I can't help with that.",
    });
  });

  it("reports an answer cut off by the output limit", async () => {
    fake.reply({ text: '{"answer": "par', incomplete: "max_output_tokens" });
    await expect(client().respond(payload(true), { output: searcher, stream })).rejects.toMatchObject({
      code: "model_incomplete",
      message:
        "the model stopped before finishing its answer (max_output_tokens): raise the output token limit or shorten the input",
    });
  });

  it("reports a failed response with the server's reason", async () => {
    fake.reply({ failed: "The model crashed." });
    await expect(client().respond(payload(), { stream })).rejects.toMatchObject({
      code: "model_failed",
      message: "the model failed to answer: The model crashed.",
    });
  });
});

describe("ModelClient streams", () => {
  it("reports an error event mid-stream", async () => {
    fake.reply({ streamError: "Something broke mid-way." });
    await expect(client().respond(payload(), { stream: true })).rejects.toMatchObject({
      code: "model_stream_error",
      message: `the model API at ${fake.baseURL} reported an error mid-stream: Something broke mid-way.`,
    });
  });

  it("reports a stream that ends before response.completed", async () => {
    fake.reply({ text: "half an answer", truncated: true });
    await expect(client().respond(payload(), { stream: true })).rejects.toMatchObject({
      code: "model_stream_truncated",
      message: `the model API at ${fake.baseURL} ended the stream before response.completed`,
    });
  });

  it("times out a stream that goes quiet after its first events", async () => {
    fake.reply({ text: "half an answer", stall: true });
    await expect(client({ timeout_ms: 300 }).respond(payload(), { stream: true })).rejects.toMatchObject({
      code: "model_timeout",
      message: `the model API at ${fake.baseURL} sent nothing for 300 ms mid-stream: raise model.timeout_ms in pmagent.config.json or check the server`,
    });
  });

  it("reports a dropped connection on a plain request", async () => {
    fake.reply({ text: "lost", truncated: true });
    await expect(client({ max_retries: 0 }).respond(payload(), { stream: false })).rejects.toMatchObject({
      code: "model_unreachable",
    });
  });
});

describe("the origin's request settings, through the openai SDK", () => {
  const ledger = { lane: "layer_b/doc_update", role: "Sho", entry_id: "e-1", cycle: 1 };
  const built = (c: ModelClient, role: "reviewer" | "searcher" = "reviewer") =>
    buildResponsesRequest({
      role,
      model: c.model,
      templates,
      input: "review e-1",
      ledger,
      request: c.settings.request,
    });

  it("every request to a reasoning model carries stream, store: false, reasoning, include, text.verbosity and a prompt_cache_key (on by default)", async () => {
    fake.reply({ text: "ok" });
    const c = client({ model: "gpt-5-mini" });
    const answer = await c.respond(built(c));
    expect(answer.text).toBe("ok");
    const body = fake.requests[0]!.body;
    expect(body).toMatchObject({
      stream: true,
      store: false,
      reasoning: { effort: "medium", summary: "auto" },
      include: ["reasoning.encrypted_content"],
      text: { verbosity: "medium" },
      prompt_cache_key: "pmagent:layer_b/doc_update:Sho:reviewer",
    });
    // Stable per lane and role: another request of the same role has the same key, another role another.
    fake.reply({ text: "ok" }, { text: "ok" });
    await c.respond(built(c));
    await c.respond(built(c, "searcher"));
    expect(fake.requests[1]!.body.prompt_cache_key).toBe(body.prompt_cache_key);
    expect(fake.requests[2]!.body.prompt_cache_key).toBe("pmagent:layer_b/doc_update:Sho:searcher");
  });

  it("a model that takes no reasoning (the default gpt-4.1-mini) gets stream, store and the cache key, not reasoning, include or verbosity, unless reasoning is on", async () => {
    fake.reply({ text: "ok" }, { text: "ok" });
    const c = client();
    await c.respond(built(c));
    const body = fake.requests[0]!.body;
    expect(body).toMatchObject({
      model: "gpt-4.1-mini",
      stream: true,
      store: false,
      prompt_cache_key: "pmagent:layer_b/doc_update:Sho:reviewer",
    });
    for (const key of ["reasoning", "include", "text"]) expect(body).not.toHaveProperty(key);
    const forced = client({ request: { reasoning: "on" } });
    await forced.respond(built(forced));
    expect(fake.requests[1]!.body).toMatchObject({
      reasoning: { effort: "medium" },
      include: ["reasoning.encrypted_content"],
      text: { verbosity: "medium" },
    });
    expect(takesReasoning("o4-mini")).toBe(true);
    expect(takesReasoning("gpt-5")).toBe(true);
    expect(takesReasoning("gpt-4o")).toBe(false);
  });

  it("each setting follows model.request; store: true drops include; enabled: false sends none of them", async () => {
    fake.reply({ text: "ok" }, { text: "ok" });
    const tuned = client({
      model: "gpt-5-mini",
      request: {
        stream: false,
        store: true,
        reasoning_effort: "high",
        reasoning_summary: "concise",
        verbosity: "low",
        prompt_cache_key: false,
      },
    });
    await tuned.respond(built(tuned));
    const body = fake.requests[0]!.body;
    expect(body).toMatchObject({
      stream: false,
      store: true,
      reasoning: { effort: "high", summary: "concise" },
      text: { verbosity: "low" },
    });
    expect(body).not.toHaveProperty("include");
    expect(body).not.toHaveProperty("prompt_cache_key");
    const off = client({ request: { enabled: false } });
    await off.respond(built(off));
    const plain = fake.requests[1]!.body;
    for (const key of ["store", "reasoning", "include", "text", "prompt_cache_key"])
      expect(plain).not.toHaveProperty(key);
    // The client's own default for a payload without `stream` is a plain request.
    expect(plain.stream).toBe(false);
  });

  it("refuses a bad model.request setting naming it", () => {
    expect(() => modelSettings({ request: { verbosity: "loud" } } as never, { OPENAI_API_KEY: "k" })).toThrow(
      /^model settings is invalid:\n {2}\$\.request\.verbosity: /,
    );
  });
});

describe("ModelClient errors", () => {
  it("reports a rate limit that outlasts the retries", async () => {
    fake.reply({ status: 429, retryAfter: 0 }, { status: 429, retryAfter: 0 });
    const err = await client({ max_retries: 1 })
      .respond(payload())
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "model_rate_limited" });
    expect((err as Error).message).toBe(
      `the model API at ${fake.baseURL} is still rate limiting after 1 retries (429): Rate limit reached for requests. Please try again later.; wait and try again, or raise model.max_retries`,
    );
  });

  it("reports a refused key without showing it", async () => {
    fake.reply({ status: 401, message: `Incorrect API key provided: ${KEY}.` });
    const err = await client()
      .respond(payload())
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "model_auth_failed", kind: "refused" });
    expect((err as Error).message).toBe(
      `the model API at ${fake.baseURL} refused the API key from OPENAI_API_KEY (401): Incorrect API key provided: [REDACTED].`,
    );
    expect(fake.requests).toHaveLength(1);
  });

  it("reports a rejected request with the server's reason", async () => {
    fake.reply({ status: 400, message: "Invalid schema for response_format 'x'." });
    await expect(client().respond(payload())).rejects.toMatchObject({
      code: "model_request_rejected",
      message: `the model API at ${fake.baseURL} rejected the request (400): Invalid schema for response_format 'x'.`,
    });
  });

  it("times out a server that never answers", async () => {
    fake.reply({ hang: true });
    await expect(client({ timeout_ms: 300, max_retries: 0 }).respond(payload())).rejects.toMatchObject({
      code: "model_timeout",
      message: `the model API at ${fake.baseURL} did not answer within 300 ms (0 retries): raise model.timeout_ms in pmagent.config.json or check the server`,
    });
  });

  it("reports a server it cannot reach", async () => {
    const port = await closedPort();
    const c = ModelClient.fromConfig(
      { base_url: `http://127.0.0.1:${port}/v1`, max_retries: 0 },
      { OPENAI_API_KEY: KEY },
    );
    await expect(c.respond(payload())).rejects.toMatchObject({
      code: "model_unreachable",
      message: `cannot reach the model API at http://127.0.0.1:${port}/v1 (0 retries): ECONNREFUSED; check model.base_url or OPENAI_BASE_URL`,
    });
  });
});

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
