import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { outboxPath, readOutbox } from "../../src/lattice/index.js";
import { runCli, type ProcResult } from "../helpers/proc.js";
import { useFakeOpenAI } from "../helpers/openai-fixture.js";

/** The orchestrator's edit tools end to end: `pmagent agent --role orchestrator` against the Responses stand-in. */

const KEY = "sk-test-tools-key-0123456789abcdef";
const fake = useFakeOpenAI({ expectDrained: true });
let root: string;
let n = 0;

const entry = {
  id: "plan-7",
  from: "human",
  to: "Aya",
  project_id: "p",
  kind: "plan_request",
  status: "in_progress",
  payload: { summary: "plan the release notes", details: {}, cycle: 2 },
  created_at: "2026-01-01T00:00:00Z",
  updated_at: "2026-01-01T00:00:00Z",
};

const GUIDE = "# Guide\n\n## Release\n\nNothing yet.\n";
const APP = "export const app = 1;\n";
const guidePatch = [
  "*** Begin Patch",
  "*** Update File: docs/guide.md",
  "@@ ## Release",
  " ",
  "-Nothing yet.",
  "+Notes are drafted in docs/notes.md.",
  "*** Add File: docs/notes.md",
  "+# Notes",
  "*** End Patch",
].join("\n");
const outsidePatch = [
  "*** Begin Patch",
  "*** Update File: src/app.ts",
  "-export const app = 1;",
  "+export const app = 2;",
  "*** End Patch",
].join("\n");
const plan = {
  explanation: "drafting first",
  plan: [
    { step: "draft the notes", owner: "Aya", status: "completed" },
    { step: "review the notes", owner: "Sho", status: "pending" },
  ],
};
const answer = { summary: "notes drafted, review next", plan: plan.plan, doc_edits: [], open_questions: [] };

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "role-agent-tools-"));
  const config = {
    project_id: "p",
    lanes: [
      {
        layer: "layer_b",
        name: "doc_update",
        allowed_paths: ["STATE/", "docs/"],
        roles: [{ name: "Aya", allowed_kinds: ["plan_request"] }],
      },
    ],
    model: { base_url: fake.baseURL, model: "gpt-test", max_retries: 0, timeout_ms: 20_000 },
  };
  writeFileSync(join(root, "pmagent.config.json"), JSON.stringify(config));
});
afterAll(async () => {
  rmSync(root, { recursive: true, force: true });
});

type Event = { event_type: string; payload: Record<string, unknown> };
interface Agent extends ProcResult {
  ws: string;
  events: Event[];
}

async function agent(args: string[]): Promise<Agent> {
  const ws = join(root, `ws-${++n}`);
  mkdirSync(join(ws, ".lattice"), { recursive: true });
  mkdirSync(join(ws, "docs"));
  mkdirSync(join(ws, "src"));
  writeFileSync(join(ws, "docs/guide.md"), GUIDE);
  writeFileSync(join(ws, "src/app.ts"), APP);
  writeFileSync(join(ws, ".lattice/entry.json"), JSON.stringify(entry));
  const env = {
    PATH: process.env.PATH ?? "",
    LATTICE_SPRITE_ID: "sprite-aya",
    LATTICE_WORK_ITEM_ID: entry.id,
    LATTICE_WORKSPACE: ws,
    LATTICE_CHECKPOINT_DIR: join(root, "chk"),
    PMAGENT_ENTRY_FILE: join(ws, ".lattice/entry.json"),
    OPENAI_API_KEY: KEY,
  };
  const r = await runCli(["agent", "--role", "orchestrator", ...args], { cwd: ws, env });
  const events = r.stdout
    .split("\n")
    .filter((l) => l.startsWith("LATTICE_EVENT "))
    .map((l) => JSON.parse(l.slice("LATTICE_EVENT ".length)) as Event);
  return { ...r, ws, events };
}

type Item = {
  type?: string;
  role?: string;
  content?: string;
  call_id?: string;
  name?: string;
  arguments?: string;
  output?: string;
};

describe.each([
  ["plain JSON", ["--no-stream"] as string[]],
  ["server-sent events", ["--stream"]],
])("the orchestrator's apply_patch and update_plan (%s)", (_mode, streamFlag) => {
  it("carries out the calls within the allowed paths, records ARTIFACT events, feeds the outputs back until the answer", async () => {
    fake.reply(
      {
        calls: [
          { name: "apply_patch", arguments: { input: guidePatch }, call_id: "call_guide" },
          { name: "apply_patch", arguments: { input: outsidePatch }, call_id: "call_src" },
        ],
      },
      { calls: [{ name: "update_plan", arguments: plan, call_id: "call_plan" }] },
      { json: answer },
    );
    const a = await agent(streamFlag);
    expect(a.stderr).toBe(
      "pmagent agent: success for entry plan-7; answer in .pmagent-artifacts/orchestrator-plan-7.json\n",
    );
    expect(a.code).toBe(0);
    expect(fake.requests).toHaveLength(3);

    // The workspace: the allowed edit is made, the one outside the allowed paths is not.
    expect(readFileSync(join(a.ws, "docs/guide.md"), "utf8")).toBe(
      "# Guide\n\n## Release\n\nNotes are drafted in docs/notes.md.\n",
    );
    expect(readFileSync(join(a.ws, "docs/notes.md"), "utf8")).toBe("# Notes\n");
    expect(readFileSync(join(a.ws, "src/app.ts"), "utf8")).toBe(APP);
    const planFile = JSON.parse(
      readFileSync(join(a.ws, ".pmagent-artifacts/orchestrator-plan-7-plan.json"), "utf8"),
    ) as Record<string, unknown>;
    expect(planFile).toMatchObject({ entry_id: "plan-7", explanation: "drafting first", plan: plan.plan });

    // The events: each change an ARTIFACT, the refusal reported, then the answer's artifact.
    const artifacts = a.events.filter((e) => e.event_type === "ARTIFACT").map((e) => e.payload);
    expect(artifacts).toEqual([
      {
        kind: "file",
        ref: "docs/guide.md",
        metadata: {
          tool: "apply_patch",
          call_id: "call_guide",
          entry_id: "plan-7",
          change: "update",
          lines_before: 5,
          lines_after: 5,
        },
      },
      {
        kind: "file",
        ref: "docs/notes.md",
        metadata: {
          tool: "apply_patch",
          call_id: "call_guide",
          entry_id: "plan-7",
          change: "add",
          lines_before: null,
          lines_after: 1,
        },
      },
      {
        kind: "plan",
        ref: ".pmagent-artifacts/orchestrator-plan-7-plan.json",
        metadata: {
          tool: "update_plan",
          call_id: "call_plan",
          entry_id: "plan-7",
          steps: 2,
          explanation: "drafting first",
        },
      },
      expect.objectContaining({ kind: "file", ref: ".pmagent-artifacts/orchestrator-plan-7.json" }),
    ]);
    const refusedOutput =
      'error [path_not_allowed]: apply_patch: path "src/app.ts" is outside the allowed paths (STATE/, docs/); nothing was changed';
    expect(a.events.find((e) => e.payload.kind === "tool_refused")?.payload).toEqual({
      message: `apply_patch refused: ${refusedOutput}`,
      kind: "tool_refused",
      metadata: { tool: "apply_patch", call_id: "call_src", entry_id: "plan-7", code: "path_not_allowed" },
    });
    expect(a.events.at(-1)).toMatchObject({
      event_type: "COMPLETED",
      payload: { status: "success", summary: "notes drafted, review next" },
    });
    expect(readOutbox(outboxPath(a.ws)).items).toHaveLength(a.events.length);

    // The requests: tools offered with strict JSON-schema parameters, then each call's output fed back.
    const bodies = fake.requests.map(
      (r) => r.body as { tools?: Array<Record<string, unknown>>; input: Item[]; stream?: boolean },
    );
    for (const body of bodies) {
      expect(body.stream === true).toBe(!streamFlag.includes("--no-stream"));
      expect(body.tools?.map((t) => [t.type, t.name, t.strict])).toEqual([
        ["function", "apply_patch", true],
        ["function", "update_plan", true],
      ]);
    }
    expect(bodies[0]!.tools![0]!.parameters).toEqual({
      type: "object",
      properties: { input: { type: "string", description: expect.any(String) as unknown } },
      required: ["input"],
      additionalProperties: false,
    });
    expect(bodies[0]!.tools![0]!.description).toContain("Only files under STATE/, docs/ may be changed");
    expect(bodies[0]!.input[0]!.content).toContain(
      "[context_ledger]\nentry_id: plan-7\nlane: layer_b/doc_update\nrole: Aya\ncycle: 2\nrefs: none",
    );
    const first = bodies[0]!.input.length;
    expect(bodies[1]!.input.slice(0, first)).toEqual(bodies[0]!.input);
    expect(bodies[1]!.input.slice(first).map((i) => [i.type, i.call_id, i.name ?? i.output])).toEqual([
      ["function_call", "call_guide", "apply_patch"],
      ["function_call", "call_src", "apply_patch"],
      [
        "function_call_output",
        "call_guide",
        "applied: updated docs/guide.md (5 → 5 lines); added docs/notes.md (1 line)",
      ],
      ["function_call_output", "call_src", refusedOutput],
    ]);
    expect(JSON.parse(bodies[1]!.input[first]!.arguments!)).toEqual({ input: guidePatch });
    expect(bodies[2]!.input.slice(0, bodies[1]!.input.length)).toEqual(bodies[1]!.input);
    expect(bodies[2]!.input.slice(bodies[1]!.input.length).map((i) => [i.type, i.call_id, i.name ?? i.output])).toEqual(
      [
        ["function_call", "call_plan", "update_plan"],
        ["function_call_output", "call_plan", "plan updated: 2 steps (1 pending, 0 in_progress, 1 completed)"],
      ],
    );

    // The answer's artifact names the calls made.
    const file = JSON.parse(readFileSync(join(a.ws, ".pmagent-artifacts/orchestrator-plan-7.json"), "utf8")) as Record<
      string,
      unknown
    >;
    expect(file).toMatchObject({
      answer,
      tool_calls: [
        { name: "apply_patch", call_id: "call_guide" },
        { name: "apply_patch", call_id: "call_src" },
        { name: "update_plan", call_id: "call_plan" },
      ],
    });
  });

  it("sends bad arguments and unknown tools back to the model as errors, and the run goes on", async () => {
    fake.reply(
      {
        calls: [
          {
            name: "update_plan",
            arguments: { explanation: null, plan: [{ step: " ", owner: "Aya", status: "done" }] },
            call_id: "c1",
          },
          { name: "apply_patch", arguments: "{not json", call_id: "c2" },
          { name: "shell", arguments: { cmd: "rm -rf /" }, call_id: "c3" },
          {
            name: "apply_patch",
            arguments: { input: "*** Begin Patch\n*** Update File: docs/guide.md\n-Missing line\n+x\n*** End Patch" },
            call_id: "c4",
          },
        ],
      },
      { json: answer },
    );
    const a = await agent(streamFlag);
    expect(a.code).toBe(0);
    const outputs = (fake.requests[1]!.body as { input: Item[] }).input
      .filter((i) => i.type === "function_call_output")
      .map((i) => i.output);
    expect(outputs).toEqual([
      'error [invalid_tool_arguments]: update_plan: invalid arguments:\n  $.plan[0].step: step must not be empty\n  $.plan[0].status: Invalid option: expected one of "pending"|"in_progress"|"completed"',
      expect.stringMatching(
        /^error \[invalid_tool_arguments\]: apply_patch: the arguments are not valid JSON \(.+\)$/,
      ) as unknown,
      'error [unknown_tool]: there is no tool "shell": the tools are apply_patch and update_plan',
      "error [invalid_patch]: apply_patch: docs/guide.md: hunk 1 does not match the file; these lines were not found:\n  Missing line\nRead the file again and send context lines as they are; nothing was changed",
    ]);
    expect(a.events.filter((e) => e.payload.kind === "tool_refused")).toHaveLength(4);
    expect(a.events.filter((e) => e.event_type === "ARTIFACT")).toHaveLength(1);
    expect(readFileSync(join(a.ws, "docs/guide.md"), "utf8")).toBe(GUIDE);
    expect(existsSync(join(a.ws, ".pmagent-artifacts/orchestrator-plan-7-plan.json"))).toBe(false);
  });
});
