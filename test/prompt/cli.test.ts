import { afterEach, describe, expect, it } from "vitest";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCli } from "../helpers/proc.js";
import {
  buildResponsesRequest,
  loadTemplates,
  outputSchemaFromJson,
  roleTools,
  presetFormatName,
  type PresetName,
  type ResponsesPayload,
} from "../../src/prompt/index.js";

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "pmagent-prompt-cli-"));
  dirs.push(dir);
  return dir;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** Run in an empty directory, so no pmagent.config.json of the checkout is found. */
async function cli(args: string[], cwd = tempDir(), input?: string) {
  return runCli(["prompt", "build", ...args], { cwd, input });
}

const strictSchema = {
  title: "verdict",
  type: "object",
  properties: { ok: { type: "boolean" } },
  required: ["ok"],
  additionalProperties: false,
};

describe("pmagent prompt build", () => {
  it("prints the Responses payload as JSON, equal to the library's", async () => {
    const r = await cli([
      "--role",
      "executor",
      "--input",
      "fix the build",
      "--entry-id",
      "e-1",
      "--lane",
      "layer_b/doc_update",
      "--cycle",
      "3",
      "--ref",
      "e-0",
      "--ref",
      "runs/7",
    ]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const expected = buildResponsesRequest({
      role: "executor",
      model: "gpt-4.1-mini",
      templates: loadTemplates(),
      input: "fix the build",
      ledger: { entry_id: "e-1", lane: "layer_b/doc_update", role: "executor", cycle: 3, refs: ["e-0", "runs/7"] },
    });
    expect(JSON.parse(r.stdout)).toEqual(expected);
  });

  it("sends the ledger block without ledger flags, and with some of them, stating what is unknown as (none)", async () => {
    const developer = async (args: string[]) =>
      (JSON.parse((await cli(["--role", "reviewer", ...args])).stdout) as { input: Array<{ content: string }> })
        .input[0]!.content;
    expect(await developer([])).toContain(
      "[context_ledger]\nentry_id: (none)\nlane: (none)\nrole: reviewer\ncycle: (none)\nrefs: none",
    );
    expect(await developer(["--entry-id", "e"])).toContain(
      "[context_ledger]\nentry_id: e\nlane: (none)\nrole: reviewer\ncycle: (none)\nrefs: none",
    );
    expect(await developer(["--lane", "layer_b/doc_update", "--ref", "runs/7"])).toContain(
      "[context_ledger]\nentry_id: (none)\nlane: layer_b/doc_update\nrole: reviewer\ncycle: (none)\nrefs:\n- runs/7",
    );
  });

  it("--structured uses the role default, --preset beats it, --preset none turns it off, --schema beats all", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "verdict.json"), JSON.stringify(strictSchema));
    const format = async (args: string[]) =>
      (JSON.parse((await cli(["--role", "reviewer", ...args], dir)).stdout) as { text?: { format: { name: string } } })
        .text?.format;
    expect(await format([])).toBeUndefined();
    expect(await format(["--structured"])).toMatchObject({
      type: "json_schema",
      strict: true,
      name: presetFormatName("reviewer"),
    });
    expect(await format(["--structured", "--preset", "searcher"])).toMatchObject({ name: "pmagent_searcher_output" });
    expect(await format(["--structured", "--preset", "none"])).toBeUndefined();
    expect(await format(["--structured", "--schema", "verdict.json"])).toEqual({
      type: "json_schema",
      strict: true,
      name: "verdict",
      schema: {
        title: "verdict",
        type: "object",
        properties: { ok: { type: "boolean" } },
        required: ["ok"],
        additionalProperties: false,
      },
    });
  });

  it("--schema with --preset: the explicit schema wins, as in the library, and a note on stderr says so", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "verdict.json"), JSON.stringify(strictSchema));
    for (const preset of ["searcher", "none"]) {
      const r = await cli(["--role", "reviewer", "--schema", "verdict.json", "--preset", preset, "--structured"], dir);
      expect(r.code).toBe(0);
      expect(r.stderr).toBe(
        `pmagent: note: --schema verdict.json takes precedence over --preset ${preset} (explicit schema > preset > role default)\n`,
      );
      const payload = JSON.parse(r.stdout) as ResponsesPayload;
      expect(payload.text?.format).toMatchObject({ type: "json_schema", strict: true, name: "verdict" });
      const library = buildResponsesRequest({
        role: "reviewer",
        model: "gpt-4.1-mini",
        templates: loadTemplates(),
        responsesOutputSchema: outputSchemaFromJson("verdict", strictSchema, "verdict.json"),
        responsesOutputSchemaPreset: preset as PresetName,
        responsesStructuredOutput: true,
      });
      expect(payload).toEqual(library);
    }
  });

  it("--review-level sets the level the reviewer's instructions state", async () => {
    const r = await cli(["--role", "reviewer", "--review-level", "feedback"]);
    expect(r.code).toBe(0);
    expect((JSON.parse(r.stdout) as { input: Array<{ content: string }> }).input[0]!.content).toContain(
      "Review level: `feedback`.",
    );
  });

  it("uses the project's template overrides and model", async () => {
    const dir = tempDir();
    writeFileSync(
      join(dir, "pmagent.config.json"),
      JSON.stringify({
        project_id: "p",
        lanes: [{ layer: "a", name: "b", roles: [{ name: "R", allowed_kinds: ["k"] }] }],
        model: { model: "gpt-project" },
      }),
    );
    mkdirSync(join(dir, ".pmagent/prompts/dev"), { recursive: true });
    writeFileSync(join(dir, ".pmagent/prompts/dev/searcher.md"), "Search our wiki first.\n");
    mkdirSync(join(dir, "sub"));
    const r = await cli(["--role", "searcher", "--format", "text"], join(dir, "sub"));
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("model: gpt-project");
    expect(r.stdout).toContain(
      "== developer\n<developer_instructions>\nSearch our wiki first.\n\n[context_ledger]\nentry_id: (none)\nlane: (none)\nrole: searcher\ncycle: (none)\nrefs: none\n</developer_instructions>",
    );
    expect(r.stdout).toContain("== tools: none\n\n== output schema: none");
  });

  it("shows the orchestrator's edit tools in the payload", async () => {
    const json = await cli(["--role", "orchestrator"]);
    expect(json.code).toBe(0);
    expect((JSON.parse(json.stdout) as ResponsesPayload).tools).toEqual(roleTools("orchestrator"));
    const text = await cli(["--role", "orchestrator", "--format", "text"]);
    expect(text.stdout).toContain("== tools: apply_patch, update_plan\n");
  });

  it("sends an environment context again when the one in --history is older", async () => {
    const history = [{ role: "user", content: "<environment_context>\ncwd: /old\n</environment_context>" }];
    const r = await cli(
      ["--role", "searcher", "--history", "-", "--environment-context", "cwd: /new", "--input", "q"],
      undefined,
      JSON.stringify(history),
    );
    expect(r.code).toBe(0);
    const input = (JSON.parse(r.stdout) as { input: Array<{ content: string }> }).input;
    expect(input.map((m) => m.content.split("\n").slice(0, 2).join(" "))).toEqual([
      "<environment_context> cwd: /old",
      "<developer_instructions> # Role: searcher",
      "<environment_context> cwd: /new",
      "q",
    ]);
  });

  it("pmagent prompt templates lists the templates in effect", async () => {
    const dir = tempDir();
    writeFileSync(
      join(dir, "pmagent.config.json"),
      JSON.stringify({
        project_id: "p",
        lanes: [{ layer: "a", name: "b", roles: [{ name: "R", allowed_kinds: ["k"] }] }],
      }),
    );
    mkdirSync(join(dir, ".pmagent/prompts/dev"), { recursive: true });
    writeFileSync(join(dir, ".pmagent/prompts/dev/reviewer.md"), "Level {{review_level}}.\n");
    const r = await runCli(["prompt", "templates", "--format", "json"], { cwd: dir });
    expect(r.code).toBe(0);
    const files = JSON.parse(r.stdout) as Array<{ name: string; origin: string; path: string }>;
    expect(files.map((f) => [f.name, f.origin])).toEqual([
      ["base.md", "package"],
      ["dev/orchestrator.md", "package"],
      ["dev/reviewer.md", "project"],
      ["dev/executor.md", "package"],
      ["dev/searcher.md", "package"],
    ]);
    expect(files[2]!.path).toBe(join(dir, ".pmagent/prompts/dev/reviewer.md"));
    const text = await runCli(["prompt", "templates"], { cwd: dir });
    expect(text.stdout).toMatch(/^dev\/reviewer\.md\s+project\s+\S+reviewer\.md$/m);
  });

  it("reads history and does not inject a block it already holds", async () => {
    const history = [
      { role: "user", content: "<user_instructions>\nold\n</user_instructions>" },
      { role: "system", content: "note" },
    ];
    const r = await cli(
      ["--role", "searcher", "--history", "-", "--user-instructions", "new", "--input", "q"],
      undefined,
      JSON.stringify(history),
    );
    expect(r.code).toBe(0);
    const input = (JSON.parse(r.stdout) as { input: Array<{ role: string; content: string }> }).input;
    expect(input.map((m) => m.role)).toEqual(["user", "user", "developer", "user"]);
    expect(input.filter((m) => m.content.includes("<user_instructions>"))).toHaveLength(1);
  });

  it("has --help for every flag", async () => {
    const r = await runCli(["prompt", "build", "--help"]);
    expect(r.code).toBe(0);
    for (const flag of [
      "--role",
      "--input",
      "--preset",
      "--schema",
      "--structured",
      "--review-level",
      "--entry-id",
      "--lane",
      "--cycle",
      "--ref",
      "--turn-context",
      "--user-instructions",
      "--environment-context",
      "--history",
      "--model",
      "--format",
    ]) {
      expect(r.stdout).toContain(flag);
    }
  });

  it.each([
    [["--input", "x"], "error: required option '--role <role>' not specified"],
    [
      ["--role", "planner"],
      'pmagent: unknown role "planner": expected one of orchestrator, reviewer, executor, searcher [unknown_role]',
    ],
    [
      ["--role", "executor", "--preset", "fast"],
      'pmagent: unknown output schema preset "fast": expected one of orchestrator, reviewer, executor, searcher, none [unknown_preset]',
    ],
    [
      ["--role", "executor", "--schema", "missing.json"],
      "pmagent: cannot read missing.json: ENOENT [input_unreadable]",
    ],
    [
      ["--role", "reviewer", "--review-level", "strict"],
      'pmagent: unknown review level "strict": expected one of feedback, soft_gate, hard_gate [unknown_review_level]',
    ],
    [
      ["--role", "executor", "--review-level", "soft_gate"],
      "pmagent: --review-level applies to the reviewer role only, not to executor [conflicting_options]",
    ],
    [["--role", "executor", "--cycle", "0"], "pmagent: --cycle must be between 1 and ∞, got 0 [invalid_option]"],
  ])("refuses %j with a usage error", async (args, message) => {
    const r = await cli(args);
    expect(r.code).toBe(2);
    expect(r.stderr.split("\n")[0]).toBe(message);
    expect(r.stdout).toBe("");
  });

  it("refuses schema files that are not JSON or not schemas; a loose one is sent non-strict with a note", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "broken.json"), "{ nope");
    writeFileSync(
      join(dir, "loose.json"),
      JSON.stringify({ ...strictSchema, properties: { ok: { type: "boolean" }, note: { type: "string" } } }),
    );
    writeFileSync(join(dir, "list.json"), "[]");
    const broken = await cli(["--role", "executor", "--schema", "broken.json"], dir);
    expect(broken.code).toBe(2);
    expect(broken.stderr).toMatch(/^pmagent: broken\.json is not valid JSON: .+ \[invalid_json\]\n$/);
    // Not strict-valid: sent non-strict, with a note on stderr (the contract's origin does not refuse it).
    const loose = await cli(["--role", "executor", "--schema", "loose.json"], dir);
    expect(loose.code).toBe(0);
    expect(loose.stderr).toBe(
      "pmagent: note: loose.json is not a strict output schema, so it is sent with strict: false:\n  $: every property must be required (make it nullable instead of optional): note\n",
    );
    expect(JSON.parse(loose.stdout).text.format).toMatchObject({ strict: false, name: "verdict" });
    const list = await cli(["--role", "executor", "--schema", "list.json"], dir);
    expect(list.stderr).toBe(
      'pmagent: list.json is not a JSON Schema: expected an object with "type": "object" [invalid_output_schema]\n',
    );
  });

  it("refuses a history file that is not a list of messages", async () => {
    const r = await cli(
      ["--role", "executor", "--history", "-"],
      undefined,
      JSON.stringify([{ role: "tool", content: "x" }]),
    );
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      'pmagent: --history (standard input) is invalid:\n  $[0].role: Invalid option: expected one of "user"|"assistant"|"system"|"developer" [invalid_input]\n',
    );
  });
});
