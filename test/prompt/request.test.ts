import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  AGENT_ROLES,
  DEFAULT_MODEL_REQUEST,
  roleTools,
  buildResponsesRequest,
  loadTemplates,
  outputSchemaFromZod,
  presetFormatName,
  OUTPUT_PRESETS,
  type BuildRequestOptions,
} from "../../src/prompt/index.js";
import { toJsonSchema } from "../../src/core/index.js";

const templates = loadTemplates();
const ledger = { entry_id: "e-1", lane: "layer_b/doc_update", role: "Sho", cycle: 1, refs: ["e-0"] };
const base = { model: "gpt-test", templates } as const;

function build(options: Partial<BuildRequestOptions> = {}) {
  return buildResponsesRequest({ ...base, role: "executor", ...options });
}

describe("buildResponsesRequest", () => {
  it("sends the same base prompt as instructions for every role", () => {
    const instructions = AGENT_ROLES.map((role) => build({ role, ledger }).instructions);
    expect(new Set(instructions).size).toBe(1);
    expect(instructions[0]).toBe(templates.base.text);
  });

  it("puts the role's developer template and the ledger block in a developer message", () => {
    for (const role of AGENT_ROLES) {
      const first = build({ role, ledger }).input[0];
      expect(first).toMatchObject({ type: "message", role: "developer" });
      const content = (first as { content: string }).content;
      expect(content.startsWith("<developer_instructions>\n")).toBe(true);
      expect(content.endsWith("\n</developer_instructions>")).toBe(true);
      expect(content).toContain(`# Role: ${role}`);
      for (const other of AGENT_ROLES.filter((r) => r !== role)) expect(content).not.toContain(`# Role: ${other}`);
      expect(content).toContain(
        "[context_ledger]\nentry_id: e-1\nlane: layer_b/doc_update\nrole: Sho\ncycle: 1\nrefs:\n- e-0\n</developer_instructions>",
      );
    }
  });

  it("sends the ledger block to every role without a ledger, stating each unknown field as (none)", () => {
    for (const role of AGENT_ROLES) {
      const content = (build({ role }).input[0] as { content: string }).content;
      expect(content).toContain(
        `[context_ledger]\nentry_id: (none)\nlane: (none)\nrole: ${role}\ncycle: (none)\nrefs: none\n</developer_instructions>`,
      );
    }
    const partial = (
      build({ role: "searcher", ledger: { lane: "layer_b/doc_update", cycle: 2 } }).input[0] as { content: string }
    ).content;
    expect(partial).toContain(
      "[context_ledger]\nentry_id: (none)\nlane: layer_b/doc_update\nrole: searcher\ncycle: 2\nrefs: none",
    );
  });

  it("partitions context into developer and user blocks in the spec's order, then the current input", () => {
    const payload = build({
      ledger,
      turnContext: "turn 3",
      userInstructions: "be brief",
      environmentContext: "cwd: /repo",
      input: "do it",
    });
    expect(
      payload.input.map((m) => [(m as { role: string }).role, (m as { content: string }).content.split("\n")[0]]),
    ).toEqual([
      ["developer", "<developer_instructions>"],
      ["developer", "<turn_context>"],
      ["user", "<user_instructions>"],
      ["user", "<environment_context>"],
      ["user", "do it"],
    ]);
    expect(payload.input[2]).toEqual({
      type: "message",
      role: "user",
      content: "<user_instructions>\nbe brief\n</user_instructions>",
    });
    expect(payload.input[3]).toEqual({
      type: "message",
      role: "user",
      content: "<environment_context>\ncwd: /repo\n</environment_context>",
    });
  });

  it("leaves out blocks that are empty", () => {
    const payload = build({ userInstructions: "  ", input: "x" });
    expect(payload.input.map((m) => (m as { role: string }).role)).toEqual(["developer", "user"]);
  });

  it("keeps history first, does not inject a block history already holds unchanged, and sends system history as user", () => {
    const history = [
      { role: "developer" as const, content: "<developer_instructions>\nold\n</developer_instructions>" },
      { role: "developer" as const, content: "<turn_context>\nturn 2\n</turn_context>" },
      { role: "user" as const, content: "  <environment_context>\ncwd: /repo\n</environment_context>\n" },
      { role: "system" as const, content: "be careful" },
      { role: "assistant" as const, content: "done before" },
    ];
    const payload = build({
      history,
      turnContext: "turn 2",
      userInstructions: "be brief",
      environmentContext: "cwd: /repo",
      input: "next",
    });
    expect(payload.input).toEqual([
      { type: "message", role: "developer", content: history[0]!.content },
      { type: "message", role: "developer", content: history[1]!.content },
      { type: "message", role: "user", content: history[2]!.content },
      { type: "message", role: "user", content: "be careful" },
      { type: "message", role: "assistant", content: "done before" },
      { type: "message", role: "user", content: "<user_instructions>\nbe brief\n</user_instructions>" },
      { type: "message", role: "user", content: "next" },
    ]);
  });

  it("sends a turn or environment context again when it changed since the latest one in history", () => {
    const history = [
      { role: "developer" as const, content: "<turn_context>\nturn 1\n</turn_context>" },
      { role: "user" as const, content: "<environment_context>\ncwd: /old\n</environment_context>" },
      { role: "assistant" as const, content: "done" },
      { role: "developer" as const, content: "<turn_context>\nturn 2\n</turn_context>" },
    ];
    const payload = build({ history, turnContext: "turn 3", environmentContext: "cwd: /repo", input: "next" });
    expect(payload.input.slice(history.length)).toEqual([
      { type: "message", role: "developer", content: expect.stringMatching(/^<developer_instructions>\n/) as unknown },
      { type: "message", role: "developer", content: "<turn_context>\nturn 3\n</turn_context>" },
      { type: "message", role: "user", content: "<environment_context>\ncwd: /repo\n</environment_context>" },
      { type: "message", role: "user", content: "next" },
    ]);
    // Compared with the latest one: turn 2 is what history says now, so turn 2 is not sent again.
    const same = build({ history, turnContext: "turn 2", environmentContext: "cwd: /old", input: "next" });
    expect(same.input.map((m) => (m as { content: string }).content.split("\n")[0])).toEqual([
      "<turn_context>",
      "<environment_context>",
      "done",
      "<turn_context>",
      "<developer_instructions>",
      "next",
    ]);
    // The instructions blocks are not context of the moment: history's stays.
    const instructions = build({
      history: [{ role: "user", content: "<user_instructions>\nold\n</user_instructions>" }],
      userInstructions: "new",
    });
    expect(
      instructions.input.filter((m) => (m as { content: string }).content.includes("<user_instructions>")),
    ).toHaveLength(1);
  });

  it("offers the orchestrator apply_patch and update_plan as strict function tools, and no other role any", () => {
    const tools = build({ role: "orchestrator", tools: roleTools("orchestrator") }).tools as Array<{
      type: string;
      name: string;
      strict: boolean;
      parameters: Record<string, unknown>;
      description: string;
    }>;
    expect(tools.map((t) => [t.type, t.name, t.strict])).toEqual([
      ["function", "apply_patch", true],
      ["function", "update_plan", true],
    ]);
    expect(tools[0]!.description).toContain("*** Begin Patch");
    expect(tools[1]!.parameters).toMatchObject({
      type: "object",
      required: ["explanation", "plan"],
      additionalProperties: false,
      properties: {
        plan: {
          type: "array",
          items: {
            required: ["step", "owner", "status"],
            additionalProperties: false,
            properties: { status: { enum: ["pending", "in_progress", "completed"] } },
          },
        },
      },
    });
    for (const role of AGENT_ROLES.filter((r) => r !== "orchestrator")) expect(roleTools(role)).toEqual([]);
    // Offered only by a caller that carries the calls out.
    expect(build({ role: "orchestrator" })).not.toHaveProperty("tools");
    expect(roleTools("orchestrator", ["plans/"])[0]!.description).toContain("Only files under plans/ may be changed");
  });

  it("sets no output schema by default", () => {
    const payload = build({ input: "x" });
    // gpt-test takes no reasoning settings; a gpt-5 model gets them, verbosity in text.
    expect(payload).not.toHaveProperty("text");
    expect(Object.keys(payload).sort()).toEqual([
      "input",
      "instructions",
      "model",
      "prompt_cache_key",
      "store",
      "stream",
    ]);
    expect(payload.model).toBe("gpt-test");
    const reasoning = build({ input: "x", model: "gpt-5-mini" });
    expect(reasoning.text).toEqual({ verbosity: "medium" });
    expect(Object.keys(reasoning).sort()).toEqual([
      "include",
      "input",
      "instructions",
      "model",
      "prompt_cache_key",
      "reasoning",
      "store",
      "stream",
      "text",
    ]);
    expect(build({ input: "x", request: { ...DEFAULT_MODEL_REQUEST, enabled: false } })).not.toHaveProperty("text");
  });

  it("uses the role's default schema when structured output is on", () => {
    for (const role of AGENT_ROLES) {
      const payload = build({ role, responsesStructuredOutput: true });
      expect(payload.text?.format).toEqual({
        type: "json_schema",
        strict: true,
        name: presetFormatName(role),
        schema: stripSchemaKey(toJsonSchema(OUTPUT_PRESETS[role])),
      });
    }
    expect(build({ responsesStructuredOutput: false }).text?.format).toBeUndefined();
  });

  it("explicit schema beats preset beats role default; preset none disables", () => {
    const explicit = outputSchemaFromZod("my_answer", z.object({ ok: z.boolean() }));
    expect(
      build({
        responsesOutputSchema: explicit,
        responsesOutputSchemaPreset: "searcher",
        responsesStructuredOutput: true,
      }).text?.format,
    ).toMatchObject({ name: "my_answer" });
    expect(build({ responsesOutputSchema: explicit, responsesOutputSchemaPreset: "none" }).text?.format).toMatchObject({
      name: "my_answer",
    });
    expect(
      build({ responsesOutputSchemaPreset: "searcher", responsesStructuredOutput: true }).text?.format,
    ).toMatchObject({ name: "pmagent_searcher_output" });
    expect(build({ responsesOutputSchemaPreset: "searcher" }).text?.format).toMatchObject({
      name: "pmagent_searcher_output",
    });
    expect(build({ responsesStructuredOutput: true }).text?.format).toMatchObject({ name: "pmagent_executor_output" });
    expect(
      build({ responsesOutputSchemaPreset: "none", responsesStructuredOutput: true }).text?.format,
    ).toBeUndefined();
  });

  it("maps an explicit zod schema to a strict JSON Schema in text.format", () => {
    const explicit = outputSchemaFromZod(
      "verdict",
      z.object({ ok: z.boolean(), note: z.string().nullable(), items: z.array(z.object({ n: z.number().int() })) }),
    );
    expect(build({ responsesOutputSchema: explicit }).text).toEqual({
      format: {
        type: "json_schema",
        strict: true,
        name: "verdict",
        schema: {
          type: "object",
          properties: {
            ok: { type: "boolean" },
            note: { type: ["string", "null"] },
            items: {
              type: "array",
              items: {
                type: "object",
                properties: { n: { type: "integer", minimum: -9007199254740991, maximum: 9007199254740991 } },
                required: ["n"],
                additionalProperties: false,
              },
            },
          },
          required: ["ok", "note", "items"],
          additionalProperties: false,
        },
      },
    });
  });
});

function stripSchemaKey(schema: Record<string, unknown>): Record<string, unknown> {
  const { $schema: _ignored, ...rest } = schema;
  return rest;
}
