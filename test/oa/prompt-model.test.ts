import { describe, expect, it } from "vitest";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadProject } from "../../src/config/index.js";
import { ModelClient } from "../../src/prompt/index.js";
import { PromptReasoningModel, buildEnvelope, gateRun, reasoningEngine, runReasoning } from "../../src/oa/index.js";
import { runCli } from "../helpers/proc.js";
import { useFakeOpenAI } from "../helpers/openai-fixture.js";
import { makeProject, type FixtureName } from "./helpers.js";

const KEY = "sk-test-oa-model-key-0123456789";
const fake = useFakeOpenAI();

/** An OA test project whose config has a model section pointing at the fake server. */
function modelProject(fixture: FixtureName) {
  const p = makeProject(fixture);
  const file = join(p.root, "pmagent.config.json");
  writeFileSync(
    file,
    JSON.stringify({ ...p.config, model: { base_url: fake.baseURL, model: "gpt-oa", max_retries: 0 } }),
  );
  return { ...p, config: loadProject({ configPath: file }).config };
}

const model = () =>
  new PromptReasoningModel(
    ModelClient.fromConfig({ base_url: fake.baseURL, model: "gpt-oa", max_retries: 0 }, { OPENAI_API_KEY: KEY }),
  );
const allow = { decision: "ALLOW", reasoning: "The kernel is NORMAL.", conditions: [], warnings: [] };

describe("PromptReasoningModel (OA programs through the prompt contract)", () => {
  it("a valid answer: the request carries the program's output schema as the explicit strict schema", async () => {
    const p = makeProject("normal");
    fake.reply({
      json: {
        decision: "CONDITIONAL",
        reasoning: "Only with a review.",
        conditions: ["Sho reviews first"],
        warnings: [],
      },
    });
    const r = await runReasoning(buildEnvelope("SafeOPSDecision", "Implement Phase 27.E", { workspace: p.ws }), {
      workspace: p.ws,
      model: model(),
    });
    expect(r).toMatchObject({
      status: "OK",
      engine: "model",
      decision: "CONDITIONAL",
      output: { conditions: ["Sho reviews first"] },
    });
    const body = fake.requests[0]!.body as {
      model: string;
      text: {
        format: {
          type: string;
          strict: boolean;
          name: string;
          schema: { required: string[]; additionalProperties: boolean };
        };
      };
      input: Array<{ role: string; content: string }>;
    };
    expect(body.model).toBe("gpt-oa");
    expect(body.text.format).toMatchObject({
      type: "json_schema",
      strict: true,
      name: "oa_SafeOPSDecision",
      schema: { required: ["decision", "reasoning", "conditions", "warnings"], additionalProperties: false },
    });
    expect(body.input.find((m) => m.content.startsWith("<turn_context>"))!.content).toContain(
      "OA reasoning program SafeOPSDecision",
    );
    const last = body.input.at(-1)!;
    expect(last.role).toBe("user");
    expect(last.content).toContain('"proposed_action": "Implement Phase 27.E"');
    expect(last.content).toContain('"mode": "NORMAL"');
  });

  it("an invalid answer (also after the retry): FAILED with a diagnostic", async () => {
    const p = makeProject("normal");
    fake.reply({ json: { decision: "MAYBE" } }, { json: { verdict: "sure" } });
    const r = await runReasoning(
      buildEnvelope("PhaseTransitionValidator", "transition to phase 28", {
        workspace: p.ws,
        inputs: { target_phase: "28" },
      }),
      { workspace: p.ws, model: model() },
    );
    expect(r).toMatchObject({ status: "FAILED", decision: "FAILED", engine: "model", output: null });
    expect(r.diagnostics).toEqual([
      expect.objectContaining({
        severity: "error",
        code: "oa_model_failed",
        message: expect.stringMatching(
          /^the model failed to answer PhaseTransitionValidator: the model's answer does not match output schema oa_PhaseTransitionValidator, also after a retry/,
        ),
      }),
    ]);
    expect(fake.requests).toHaveLength(2);
  });

  it("the rules still win: a model ALLOW on a DEGRADED kernel for feature work is a DENY", async () => {
    const p = makeProject("degraded-failing-check");
    fake.reply({ json: allow });
    const r = await runReasoning(
      buildEnvelope("SafeOPSDecision", "Implement the new dashboard feature", { workspace: p.ws }),
      { workspace: p.ws, model: model() },
    );
    expect(r).toMatchObject({ status: "DEGRADED", engine: "model", decision: "DENY" });
    expect(r.diagnostics).toContainEqual(
      expect.objectContaining({
        code: "oa_model_overridden",
        message: "model decision ALLOW overridden by the rules: DENY",
      }),
    );
  });
});

describe("reasoningEngine and gateRun", () => {
  it("uses the model only when config.model is set and its key is present", () => {
    expect(reasoningEngine(makeProject("normal").config, "/tmp", { OPENAI_API_KEY: KEY })).toEqual({
      engine: "rules",
      reason: "rules (no model section in pmagent.config.json)",
    });
    const p = modelProject("normal");
    expect(reasoningEngine(p.config, p.root, {})).toEqual({
      engine: "rules",
      reason: "rules (model configured, but OPENAI_API_KEY is not set)",
    });
    expect(reasoningEngine(p.config, p.root, { OPENAI_API_KEY: KEY })).toMatchObject({
      engine: "model",
      reason: "model gpt-oa",
    });
  });

  it("a bad base URL is an error, not a silent fall back to the rules", () => {
    const p = modelProject("normal");
    expect(() =>
      reasoningEngine({ ...p.config, model: { ...p.config.model!, base_url: undefined } }, p.root, {
        OPENAI_API_KEY: KEY,
        OPENAI_BASE_URL: "ftp://x",
      }),
    ).toThrow("OPENAI_BASE_URL is not an http(s) URL");
  });

  it("gateRun asks the configured model when the key is present, and keeps the rules' DENY", async () => {
    const p = modelProject("normal");
    fake.reply({
      json: {
        decision: "CONDITIONAL",
        reasoning: "Only with a review.",
        conditions: ["Sho reviews first"],
        warnings: [],
      },
    });
    const entry = { id: "bb-1", kind: "doc_update_proposal_request", title: "Describe the OA data model" };
    expect(
      await gateRun({ root: p.root, config: p.config, role: "Aya", entry, env: { OPENAI_API_KEY: KEY } }),
    ).toMatchObject({ engine: "model", decision: "CONDITIONAL", conditions: ["Sho reviews first"] });
    expect(await gateRun({ root: p.root, config: p.config, role: "Aya", entry, env: {} })).toMatchObject({
      engine: "rules",
      decision: "ALLOW",
    });
    const degraded = modelProject("degraded-failing-check");
    fake.reply({ json: allow });
    expect(
      await gateRun({ root: degraded.root, config: degraded.config, role: "Aya", entry, env: { OPENAI_API_KEY: KEY } }),
    ).toMatchObject({ engine: "model", decision: "DENY" });
  });
});

describe("pmagent oa with a model", () => {
  it("decision: model-backed with a key (said in the output), rule-based without", async () => {
    const p = modelProject("normal");
    fake.reply({
      json: {
        decision: "CONDITIONAL",
        reasoning: "Only with a review.",
        conditions: ["Sho reviews first"],
        warnings: [],
      },
    });
    const withKey = await runCli(["oa", "decision", "--action", "Implement Phase 27.E"], {
      cwd: p.root,
      env: { PATH: process.env.PATH ?? "", OPENAI_API_KEY: KEY },
    });
    expect(withKey.code).toBe(0);
    expect(withKey.stdout).toBe(
      "SafeOPSDecision: CONDITIONAL (status OK, engine: model gpt-oa)\nOnly with a review.\ncondition: Sho reviews first\n",
    );
    const noKey = await runCli(["oa", "decision", "--action", "Implement Phase 27.E", "--format", "json"], {
      cwd: p.root,
      env: { PATH: process.env.PATH ?? "" },
    });
    expect(JSON.parse(noKey.stdout)).toMatchObject({ engine: "rules", decision: "ALLOW" });
    expect(fake.requests).toHaveLength(1);
  });

  it("generate, interpret and validate-phase go to the model too", async () => {
    const p = modelProject("normal");
    const env = { PATH: process.env.PATH ?? "", OPENAI_API_KEY: KEY };
    fake.reply(
      {
        json: {
          ops_block: "## OPS MODE — write the data model doc",
          commands: ["git status"],
          evidence_required: ["git status output"],
        },
      },
      {
        json: {
          root_cause: "reality check failed",
          remediation_plan: ["re-run the reality check"],
          is_transient: true,
        },
      },
      { json: { transition_status: "NOT_READY", missing_criteria: ["phase 27 is not complete"] } },
    );
    const gen = await runCli(["oa", "generate", "--goal", "Write the OA data model doc"], { cwd: p.root, env });
    expect(gen.stdout).toBe("## OPS MODE — write the data model doc\n");
    expect(gen.stderr).toBe("OPSBlockGenerator engine: model gpt-oa\n");
    const interpret = await runCli(["oa", "interpret", "-", "--format", "json"], {
      cwd: p.root,
      env,
      input: JSON.stringify({ ok: false, mode: "HINT", diagnostics: [] }),
    });
    expect(JSON.parse(interpret.stdout)).toMatchObject({
      engine: "model",
      output: { root_cause: "reality check failed", is_transient: true },
    });
    const phase = await runCli(["oa", "validate-phase", "--to", "28"], { cwd: p.root, env });
    expect(phase.code).toBe(1);
    expect(phase.stdout).toContain(
      "PhaseTransitionValidator: NOT_READY (status OK, engine: model gpt-oa)\nmissing: phase 27 is not complete",
    );
    expect(fake.requests.map((r) => (r.body as { text: { format: { name: string } } }).text.format.name)).toEqual([
      "oa_OPSBlockGenerator",
      "oa_GuardFailureInterpreter",
      "oa_PhaseTransitionValidator",
    ]);
  });

  it("an invalid model answer: FAILED with the diagnostic, exit 1", async () => {
    const p = modelProject("normal");
    fake.reply({ text: "ALLOW" }, { text: "I said ALLOW" });
    const r = await runCli(["oa", "decision", "--action", "Implement Phase 27.E"], {
      cwd: p.root,
      env: { PATH: process.env.PATH ?? "", OPENAI_API_KEY: KEY },
    });
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^SafeOPSDecision: FAILED \(status FAILED, engine: model gpt-oa\)\n/);
    expect(r.stdout).toContain(
      "[error] the model failed to answer SafeOPSDecision: the model's answer does not match output schema oa_SafeOPSDecision",
    );
    expect(r.stdout + r.stderr).not.toContain(KEY);
  });
});
