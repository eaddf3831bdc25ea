import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { outboxPath, readOutbox } from "../../src/lattice/index.js";
import { runCli, type ProcResult } from "../helpers/proc.js";
import { useFakeOpenAI } from "../helpers/openai-fixture.js";

const KEY = "sk-test-agent-key-0123456789abcdef";
const fake = useFakeOpenAI();
let root: string;
let n = 0;

const entry = {
  id: "vpm-issue571-1-review",
  from: "Aya",
  to: "Sho",
  project_id: "vpm-mini",
  kind: "doc_update_review_request",
  status: "in_progress",
  payload: {
    summary: "update STATE",
    details: {},
    refs: [
      { type: "run", run_id: "run_1", entry_id: "vpm-issue571-1" },
      { type: "artifact", kind: "file", ref: ".pmagent-artifacts/orchestrator-vpm-issue571-1.json" },
    ],
  },
  target_docs: ["STATE/current_state.md"],
  created_at: "2026-01-01T00:00:00Z",
  updated_at: "2026-01-01T00:00:00Z",
};

const review = (decision: "approve" | "revise" | "block", level = "hard_gate") => ({
  level,
  decision,
  summary: decision === "approve" ? "keeps every section" : "the proposal drops two sections",
  claims: [
    {
      claim: "keeps all sections",
      evidence: decision === "approve" ? "diff keeps ## Risks" : "diff removes ## Risks",
      verdict: decision === "approve" ? "supported" : "contradicted",
    },
  ],
  planning_feedback:
    decision === "approve" ? [] : [{ issue: "## Risks is gone", suggestion: "restore the Risks section" }],
});

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "role-agent-"));
  const config = {
    project_id: "vpm-mini",
    lanes: [
      { layer: "layer_b", name: "doc_update", roles: [{ name: "Sho", allowed_kinds: ["doc_update_review_request"] }] },
    ],
    model: { base_url: fake.baseURL, model: "gpt-test", max_retries: 1, timeout_ms: 20_000 },
  };
  writeFileSync(join(root, "pmagent.config.json"), JSON.stringify(config));
});
afterAll(async () => {
  rmSync(root, { recursive: true, force: true });
});

interface Agent extends ProcResult {
  ws: string;
  events: Array<{ event_type: string; payload: Record<string, unknown> }>;
  outbox: Array<{ event_type: string; payload: Record<string, unknown> }>;
}

/** Run `pmagent agent` as the supervisor would: a workspace, the entry file, the sprite's variables. */
async function agent(
  args: string[],
  options: { key?: boolean; entry?: unknown; env?: Record<string, string> } = {},
): Promise<Agent> {
  const ws = join(root, `ws-${++n}`);
  mkdirSync(join(ws, ".lattice"), { recursive: true });
  const entryFile = join(ws, ".lattice", "entry.json");
  writeFileSync(entryFile, typeof options.entry === "string" ? options.entry : JSON.stringify(options.entry ?? entry));
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "",
    LATTICE_SPRITE_ID: "sprite-agent",
    LATTICE_WORK_ITEM_ID: entry.id,
    LATTICE_WORKSPACE: ws,
    LATTICE_CHECKPOINT_DIR: join(root, "chk"),
    PMAGENT_ENTRY_FILE: entryFile,
    ...(options.key === false ? {} : { OPENAI_API_KEY: KEY }),
    ...options.env,
  };
  const r = await runCli(["agent", ...args], { cwd: ws, env });
  const events = r.stdout
    .split("\n")
    .filter((l) => l.startsWith("LATTICE_EVENT "))
    .map((l) => JSON.parse(l.slice("LATTICE_EVENT ".length)) as Agent["events"][number]);
  const outbox = existsSync(outboxPath(ws))
    ? readOutbox(outboxPath(ws)).items.map((i) => (i as unknown as { raw: Agent["events"][number] }).raw)
    : [];
  return { ...r, ws, events, outbox };
}

const types = (a: Agent) => a.events.map((e) => e.event_type);
const last = (a: Agent, type: string) => [...a.events].reverse().find((e) => e.event_type === type)?.payload;

describe.each([
  ["plain JSON", ["--no-stream"] as string[]],
  ["server-sent events", ["--stream"]],
])("pmagent agent against a Responses server (%s)", (_mode, streamFlag) => {
  const reviewer = (level = "hard_gate") => ["--role", "reviewer", "--review-level", level, ...streamFlag];

  it("a valid answer: events on stdout and in the outbox, the artifact, usage, exit 0", async () => {
    fake.reply({ json: review("approve"), usage: { input_tokens: 1200, output_tokens: 80 } });
    const a = await agent(reviewer());
    expect(a.stderr).toContain("pmagent agent: success for entry vpm-issue571-1-review");
    expect(a.code).toBe(0);
    expect(types(a)).toEqual([
      "PHASE_STARTED",
      "INFO",
      "PHASE_FINISHED",
      "PHASE_STARTED",
      "INFO",
      "INFO",
      "PHASE_FINISHED",
      "PHASE_STARTED",
      "ARTIFACT",
      "PHASE_FINISHED",
      "COMPLETED",
    ]);
    expect(a.outbox).toEqual(a.events);
    expect(
      a.events.every((e) => e.payload && (e as unknown as { sprite_id: string }).sprite_id === "sprite-agent"),
    ).toBe(true);
    expect(a.events.find((e) => e.payload.kind === "usage")!.payload).toMatchObject({
      kind: "usage",
      metadata: { model: "gpt-test", input_tokens: 1200, output_tokens: 80, total_tokens: 1280 },
    });
    const artifact = last(a, "ARTIFACT")!;
    expect(artifact).toMatchObject({
      kind: "file",
      ref: ".pmagent-artifacts/reviewer-vpm-issue571-1-review.json",
      metadata: {
        schema: "pmagent_reviewer_output",
        role: "reviewer",
        entry_id: entry.id,
        review: { level: "hard_gate", decision: "approve", result: "success" },
      },
    });
    const file = JSON.parse(readFileSync(join(a.ws, artifact.ref as string), "utf8")) as Record<string, unknown>;
    expect(file).toMatchObject({
      entry_id: entry.id,
      role: "reviewer",
      model: "gpt-test",
      answer: review("approve"),
      ledger: { lane: "layer_b/doc_update", role: "Sho", cycle: 1 },
    });
    expect(last(a, "COMPLETED")).toEqual({
      status: "success",
      summary: "review approve at hard_gate: keeps every section",
    });
    // The request: the ledger carries the entry, lane, lane role and the entry's refs; the key never leaves the header.
    const body = fake.requests[0]!.body as { stream?: boolean; input: Array<{ content: string }> };
    expect(body.stream === true).toBe(!streamFlag.includes("--no-stream"));
    expect(body.input[0]!.content).toContain(
      "entry_id: vpm-issue571-1-review\nlane: layer_b/doc_update\nrole: Sho\ncycle: 1\nrefs:\n- run run_1 (entry vpm-issue571-1)\n- .pmagent-artifacts/orchestrator-vpm-issue571-1.json",
    );
    expect(fake.requests[0]!.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(a.stdout + a.stderr + readFileSync(outboxPath(a.ws), "utf8")).not.toContain(KEY);
  });

  it("an invalid answer, then a valid one: the retry is reported and the usage sums both calls", async () => {
    fake.reply(
      { json: { decision: "maybe" }, usage: { input_tokens: 100, output_tokens: 5 } },
      { json: review("approve"), usage: { input_tokens: 150, output_tokens: 40 } },
    );
    const a = await agent(reviewer());
    expect(a.code).toBe(0);
    expect(fake.requests).toHaveLength(2);
    const retry = (fake.requests[1]!.body as { input: Array<{ content: string }> }).input.at(-1)!.content;
    expect(retry).toContain('Your answer does not match the output schema "pmagent_reviewer_output"');
    expect(a.events.find((e) => e.payload.kind === "usage")!.payload.metadata).toMatchObject({
      input_tokens: 250,
      output_tokens: 45,
      total_tokens: 295,
    });
    expect(a.events.some((e) => String(e.payload.message).includes("did not match the output schema"))).toBe(true);
    expect(last(a, "COMPLETED")).toMatchObject({ status: "success" });
  });

  it("two invalid answers: ERROR with the validation issues, exit 1, no artifact", async () => {
    fake.reply({ json: { decision: "maybe" } }, { text: "not json" });
    const a = await agent(reviewer());
    expect(a.code).toBe(1);
    expect(a.stderr).toMatch(
      /^pmagent: the model's answer does not match output schema pmagent_reviewer_output, also after a retry/,
    );
    expect(types(a)).toEqual([
      "PHASE_STARTED",
      "INFO",
      "PHASE_FINISHED",
      "PHASE_STARTED",
      "INFO",
      "PHASE_FINISHED",
      "ERROR",
    ]);
    expect(last(a, "PHASE_FINISHED")).toEqual({ phase: "respond", success: false });
    expect(last(a, "ERROR")).toMatchObject({ details: { code: "model_answer_invalid" } });
    expect(existsSync(join(a.ws, ".pmagent-artifacts"))).toBe(false);
  });

  it("a 429, then success: the SDK retries and the agent completes", async () => {
    fake.reply({ status: 429, retryAfter: 0 }, { json: review("approve") });
    const a = await agent(reviewer());
    expect(a.code).toBe(0);
    expect(fake.requests).toHaveLength(2);
    expect(last(a, "COMPLETED")).toMatchObject({ status: "success" });
  });

  it("a 500 every time: ERROR after the retries, one line on stderr, exit 1", async () => {
    fake.reply({ status: 500 }, { status: 500 });
    const a = await agent(reviewer());
    expect(a.code).toBe(1);
    expect(fake.requests).toHaveLength(2);
    expect(a.stderr.trim().split("\n")).toEqual([
      `pmagent: the model API at ${fake.baseURL} failed with 500 after 1 retries: The server had an error while processing your request. Sorry about that! [model_server_error]`,
    ]);
    expect(last(a, "ERROR")).toEqual({
      message: `the model API at ${fake.baseURL} failed with 500 after 1 retries: The server had an error while processing your request. Sorry about that!`,
      details: { code: "model_server_error" },
    });
    expect(a.outbox).toEqual(a.events);
  });
});

describe("reviewer levels", () => {
  it("hard_gate + block: COMPLETED failure and exit 1 (the lane stops)", async () => {
    fake.reply({ json: review("block") });
    const a = await agent(["--role", "reviewer", "--review-level", "hard_gate"]);
    expect(a.code).toBe(1);
    expect(last(a, "COMPLETED")).toEqual({
      status: "failure",
      summary: "review block at hard_gate: the proposal drops two sections",
    });
    expect(a.stderr).toContain("pmagent agent: failure for entry");
  });

  it("the default level is hard_gate", async () => {
    fake.reply({ json: review("block") });
    const a = await agent(["--role", "reviewer"]);
    expect(a.code).toBe(1);
    expect(last(a, "ARTIFACT")!.metadata).toMatchObject({ review: { level: "hard_gate", result: "failure" } });
  });

  it("soft_gate + block: success, with the revision request and the requested changes on ARTIFACT and COMPLETED", async () => {
    fake.reply({ json: review("block", "soft_gate") });
    const a = await agent(["--role", "reviewer", "--review-level", "soft_gate"]);
    expect(a.code).toBe(0);
    const changes = ["## Risks is gone: restore the Risks section", "contradicted claim: keeps all sections"];
    expect(last(a, "COMPLETED")).toEqual({
      status: "success",
      summary: "review block at soft_gate: the proposal drops two sections",
      revision_requested: true,
      requested_changes: changes,
    });
    expect(last(a, "ARTIFACT")!.metadata).toMatchObject({
      revision_requested: true,
      requested_changes: changes,
      review: { level: "soft_gate", revision_requested: true },
    });
    expect(a.stderr).toContain("revision requested");
  });

  it("feedback + block never blocks and asks for nothing", async () => {
    fake.reply({ json: review("block", "feedback") });
    const a = await agent(["--role", "reviewer", "--review-level", "feedback"]);
    expect(a.code).toBe(0);
    expect(last(a, "COMPLETED")).toEqual({
      status: "success",
      summary: "review block at feedback: the proposal drops two sections",
    });
  });

  it("an executor reporting failure fails its step", async () => {
    fake.reply({
      json: {
        status: "failed",
        summary: "tests do not pass",
        claims: [],
        changed_files: [],
        commands: [{ command: "npm test", exit_code: 1 }],
        remaining: ["fix the tests"],
      },
    });
    const a = await agent(["--role", "executor"]);
    expect(a.code).toBe(1);
    expect(last(a, "COMPLETED")).toEqual({
      status: "failure",
      summary: "the executor reports failure: tests do not pass",
    });
    expect(last(a, "ARTIFACT")).toMatchObject({
      ref: ".pmagent-artifacts/executor-vpm-issue571-1-review.json",
      metadata: { schema: "pmagent_executor_output" },
    });
  });
});

describe("pmagent agent errors", () => {
  it("no key: the client's one-line error on stderr, an ERROR event, exit 2, no model call", async () => {
    const a = await agent(["--role", "reviewer"], { key: false });
    expect(a.code).toBe(2);
    expect(a.stderr).toBe(
      "pmagent: no model API key: set OPENAI_API_KEY or model.api_key_env in pmagent.config.json [no_model_api_key]\n",
    );
    expect(last(a, "ERROR")).toEqual({
      message: "no model API key: set OPENAI_API_KEY or model.api_key_env in pmagent.config.json",
      details: { code: "no_model_api_key" },
    });
    expect(last(a, "PHASE_FINISHED")).toEqual({ phase: "prepare", success: false });
    expect(fake.requests).toHaveLength(0);
  });

  it("a missing entry file says how the agent gets one", async () => {
    const a = await agent(["--role", "reviewer"], { env: { PMAGENT_ENTRY_FILE: join(root, "nowhere.json") } });
    expect(a.code).toBe(2);
    expect(a.stderr).toContain(
      `work item ${join(root, "nowhere.json")} does not exist: run the agent under the supervisor (pmagent run --entry ID …), or set PMAGENT_ENTRY_FILE or --entry-file`,
    );
    expect(last(a, "ERROR")).toMatchObject({ details: { code: "entry_file_missing" } });
  });

  it("an entry that is not JSON, or has no id", async () => {
    const bad = await agent(["--role", "reviewer"], { entry: "{nope" });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/work item .*entry\.json is not valid JSON/);
    const noId = await agent(["--role", "reviewer"], { entry: { to: "Sho" } });
    expect(noId.code).toBe(2);
    expect(noId.stderr).toMatch(/work item .*entry\.json.*id/);
  });

  it("an entry for a role no lane configures, without --lane", async () => {
    const a = await agent(["--role", "reviewer"], { entry: { ...entry, to: "Nobody" } });
    expect(a.code).toBe(2);
    expect(a.stderr).toContain('role "Nobody" is not configured in any lane (configured roles: Sho)');
  });

  it("--lane and --cycle set the ledger", async () => {
    fake.reply({ json: review("approve") });
    const a = await agent(["--role", "reviewer", "--lane", "layer_x/other", "--cycle", "3"]);
    expect(a.code).toBe(0);
    expect((fake.requests[0]!.body as { input: Array<{ content: string }> }).input[0]!.content).toContain(
      "lane: layer_x/other\nrole: Sho\ncycle: 3",
    );
  });

  it.each([
    [["--role", "wizard"], 'unknown role "wizard": expected one of orchestrator, reviewer, executor, searcher'],
    [
      ["--role", "executor", "--review-level", "soft_gate"],
      "--review-level applies to the reviewer role only, not to executor",
    ],
    [
      ["--role", "reviewer", "--review-level", "strict"],
      'unknown review level "strict": expected one of feedback, soft_gate, hard_gate',
    ],
    [
      ["--role", "reviewer", "--lane", "doc_update"],
      '--lane expects LAYER/NAME (e.g. layer_b/doc_update), got "doc_update"',
    ],
    [["--role", "reviewer", "--cycle", "0"], "--cycle must be between 1 and ∞, got 0"],
  ])("bad flags %j are refused with exit 2", async (args, message) => {
    const a = await agent(args);
    expect(a.code).toBe(2);
    expect(a.stderr).toContain(message);
    expect(a.events).toEqual([]);
  });

  it("outside a sprite (no LATTICE_SPRITE_ID) it says what is missing", async () => {
    const a = await agent(["--role", "reviewer"], { env: { LATTICE_SPRITE_ID: "" } });
    expect(a.code).toBe(2);
    expect(a.stderr).toContain("LATTICE_SPRITE_ID is not set");
  });
});
