import { describe, expect, it } from "vitest";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Blackboard } from "../../src/blackboard/index.js";
import { loadProject } from "../../src/config/index.js";
import { Worker, type RunRecord, type Supervisor } from "../../src/lattice/index.js";
import { LocalForge } from "../../src/forge/index.js";
import { projectSupervisor } from "../../src/app/index.js";
import { Sprite } from "../../src/lattice/sprite/sprite.js";
import { parseConfig } from "../../src/config/index.js";
import { checkAnswer, outputSchemaFromZod, reviewOutcome, type RoleStepResult } from "../../src/prompt/index.js";
import {
  DocUpdateProposalSchema,
  DocUpdateReviewSchema,
  MAX_DOC_CONTEXT_CHARS,
  createDemoRepository,
  decideUpdate,
  documentsContext,
  exampleLaneConfig,
  reviewAnswerSchema,
  shoTask,
  type LaneRunContext,
} from "../../src/lane/index.js";
import { CLI, runCli } from "../helpers/proc.js";
import { useFakeOpenAI } from "../helpers/openai-fixture.js";
import { availableStoreKinds, type TestStore } from "../helpers/stores.js";

/** The one file a run left in `dir` of its workspace (an artifact at the contract's path). */
function onlyFile(workspace: string, dir: string): string {
  const files = readdirSync(join(workspace, dir), { recursive: true, encoding: "utf8" }).filter((f) =>
    f.endsWith(".json"),
  );
  expect(files).toHaveLength(1);
  return join(workspace, dir, files[0]!);
}

const KEY = "sk-test-lane-model-key-0123456789";
const kinds = await availableStoreKinds();
const sqlite = kinds.filter((k) => k.name === "sqlite");
const fake = useFakeOpenAI({ clearRequests: false });

const git = (cwd: string, ...args: string[]) => execFileSync("git", args, { cwd, encoding: "utf8" }).trim();

const APPENDED = "### Progress\n\nAya and Sho answered through the model in this cycle.";
/** Aya's answer: one good append, one replacement that truncates the guide. */
const proposalAnswer = {
  summary: "Record the model-backed cycle in STATE",
  updates: [
    {
      path: "STATE/current_state.md",
      reason: "the lane ran with a model",
      change_type: "append",
      suggested_markdown: APPENDED,
    },
    {
      path: "docs/guide.md",
      reason: "a shorter guide",
      change_type: "replace",
      suggested_markdown: "# Guide\n\nShort.",
    },
  ],
};
const reviewAnswer = (decision: "approve" | "block", level = "hard_gate") => ({
  level,
  decision,
  summary: decision === "approve" ? "both updates read well" : "the proposal must not go on",
  updates: [
    { update_id: "u1", decision: "accept", reasons: [] },
    { update_id: "u2", decision: "accept", reasons: [] },
  ],
});

interface Cycle {
  dir: string;
  entries: Array<[string, string, string]>;
  runs: RunRecord[];
  supervisor: Supervisor;
  forge: LocalForge;
}

/**
 * The demo repository with `model` configured (the fake server), one Human request, and a worker
 * for every role until nothing is open. The supervisor holds the key; the sprites never do.
 */
/** The parts of the demo config the tests change. */
interface DemoConfig {
  model: { base_url: string; model: string; max_retries: number };
  lanes: Array<{ roles: Array<{ credentials?: string[]; runner: { command: string[] } }> }>;
}

async function modelCycle(ts: TestStore, tweak: (config: DemoConfig) => void = () => {}): Promise<Cycle> {
  const dir = join(mkdtempSync(join(tmpdir(), "pmagent-lane-model-")), "repo");
  createDemoRepository(dir);
  const file = join(dir, "pmagent.config.json");
  const config = JSON.parse(readFileSync(file, "utf8")) as DemoConfig;
  config.model = { base_url: fake.baseURL, model: "gpt-test", max_retries: 0 };
  tweak(config);
  writeFileSync(file, `${JSON.stringify(config, null, 2)}\n`);
  git(
    dir,
    "-c",
    "user.name=Human",
    "-c",
    "user.email=human@pmagent.invalid",
    "commit",
    "--quiet",
    "-am",
    "model configured",
  );
  const project = loadProject({ cwd: dir });
  const board = new Blackboard(ts.store, { projectId: "demo", humans: ["Human"] });
  await board.post("Human", {
    id: "req-1",
    to: "Aya",
    kind: "doc_update_proposal_request",
    payload: {
      summary: "Record the model-backed cycle",
      details: { request: "Note in STATE that the lane ran with a model." },
    },
    target_docs: ["STATE/current_state.md", "docs/guide.md"],
  });
  const supervisor = projectSupervisor({
    store: ts.store,
    project,
    pmagentCommand: [process.execPath, CLI],
    env: { PATH: process.env.PATH, OPENAI_API_KEY: KEY },
    consoleWrite: () => {},
  });
  const roles = project.config.lanes[0]!.roles.map((r) => r.name);
  await new Worker({ supervisor, roles, id: "test-worker", once: true }).run(AbortSignal.timeout(150_000));
  const entries = (await board.list()).map(
    (e) => [e.entry.id, e.entry.status, e.entry.note ?? ""] as [string, string, string],
  );
  const runs = await supervisor.runs.list({});
  const forge = new LocalForge({ store: ts.store, projectId: "demo", root: dir, bareRepo: ".pmagent/forge.git" });
  return { dir, entries, runs, supervisor, forge };
}

type Msg = { role: string; content: string };
const inputOf = (i: number) => fake.requests[i]!.body.input as Msg[];
const block = (i: number, tag: string) => inputOf(i).find((m) => m.content.startsWith(`<${tag}>`))?.content ?? "";

describe.each(kinds)("the doc_update lane with a model configured ($name)", (kind) => {
  it("Aya and Sho answer through the model (key fetched with FETCH_CREDENTIAL), the guard overrides Sho's accept of the truncating update, Tsugu opens the pull request and every entry ends done", async () => {
    const ts = await kind.open();
    try {
      const before = fake.requests.length;
      fake.reply({ json: proposalAnswer }, { json: reviewAnswer("approve") });
      const { dir, entries, runs, supervisor, forge } = await modelCycle(ts);
      expect(entries.map(([id, status]) => [id, status])).toEqual([
        ["req-1", "done"],
        ["req-1-review", "done"],
        ["req-1-review-apply", "done"],
        ["req-1-review-apply-pm_snapshot", "done"],
        ["req-1-review-apply-pm_snapshot-done", "done"],
        ["req-1-review-apply-pm_snapshot-done-cycle_done", "open"],
      ]);
      expect(runs.map((r) => [r.role, r.state]).sort()).toEqual([
        ["Aya", "succeeded"],
        ["Gen", "succeeded"],
        ["Hana", "succeeded"],
        ["Sho", "succeeded"],
        ["Tsugu", "succeeded"],
      ]);
      expect(fake.pending()).toBe(0);
      expect(fake.requests.length - before).toBe(2);
      const [aya, sho] = [before, before + 1];

      // Both sprites asked the supervisor for the key; it reached the model and nothing else.
      for (const role of ["Aya", "Sho"]) {
        const run = runs.find((r) => r.role === role)!;
        const events = await supervisor.runs.events(run.id);
        expect(
          events.some(
            (e) =>
              e.event_type === "ACTION_REQUEST" &&
              (e.event.payload as { action: string }).action === "FETCH_CREDENTIAL",
          ),
        ).toBe(true);
        expect(JSON.stringify(events)).not.toContain(KEY);
      }
      expect(fake.requests[aya]!.headers.authorization).toBe(`Bearer ${KEY}`);

      // The prompt contract: one base prompt; the role's developer template with the ledger; the documents as context; a strict schema.
      const [a, s] = [fake.requests[aya]!.body, fake.requests[sho]!.body];
      expect(a.instructions).toBe(s.instructions);
      expect(block(aya, "developer_instructions")).toContain("# Role: orchestrator");
      expect(block(aya, "developer_instructions")).toContain(
        "[context_ledger]\nentry_id: req-1\nlane: layer_b/doc_update\nrole: Aya\ncycle: 1\nrefs: none",
      );
      expect(block(aya, "environment_context")).toContain("## STATE/current_state.md (current text)");
      expect(block(aya, "environment_context")).toContain(
        "The doc_update lane turns requests into reviewed documentation pull requests.",
      );
      expect(block(aya, "environment_context")).toContain("Sho refuses any update that would truncate a document.");
      expect(inputOf(aya).at(-1)!.content).toContain("Blackboard entry req-1 (doc_update_proposal_request)");
      expect(a.text).toMatchObject({ format: { type: "json_schema", strict: true, name: "doc_update_proposal" } });
      expect(block(sho, "developer_instructions")).toContain("Review level: `hard_gate`.");
      expect(block(sho, "developer_instructions")).toMatch(
        /\[context_ledger\]\nentry_id: req-1-review\nlane: layer_b\/doc_update\nrole: Sho\ncycle: 1\nrefs:\n- source_board_id: req-1\n- run_id: \S+\n- doc_update_proposal_v1: reports\/doc_update_proposals\/\d{4}-\d\d-\d\d-req-1\/doc_update_proposal_v1\.json/,
      );
      expect(block(sho, "turn_context")).toContain(
        "- u2 (docs/guide.md): refused — would shrink docs/guide.md from 15 to 3 lines",
      );
      expect(block(sho, "environment_context")).toContain('"suggestion_markdown": "# Guide\\n\\nShort."');
      const reviewFormat = (
        s.text as {
          format: {
            name: string;
            schema: { properties: { updates: { items: { properties: { update_id: unknown } } } } };
          };
        }
      ).format;
      expect(reviewFormat.name).toBe("doc_update_review");
      expect(reviewFormat.schema.properties.updates.items.properties.update_id).toMatchObject({ enum: ["u1", "u2"] });

      // The artifacts the next roles read.
      const ayaRun = runs.find((r) => r.role === "Aya")!;
      const proposal = DocUpdateProposalSchema.parse(
        JSON.parse(readFileSync(onlyFile(ayaRun.workspace, "reports/doc_update_proposals"), "utf8")),
      );
      expect(proposal).toMatchObject({
        schema_version: "doc_update_proposal_v1",
        cycle_id: "req-1",
        request_entry_id: "req-1",
        summary: "Record the model-backed cycle in STATE",
      });
      expect(proposal.updates.map((u) => [u.id, u.target.path, u.apply_as])).toEqual([
        ["u1", "STATE/current_state.md", "append"],
        ["u2", "docs/guide.md", "replace"],
      ]);
      const shoRun = runs.find((r) => r.role === "Sho")!;
      const review = DocUpdateReviewSchema.parse(
        JSON.parse(readFileSync(onlyFile(shoRun.workspace, "reports/doc_update_reviews"), "utf8")),
      );
      expect(review.update_judgements.map((d) => [d.update_id, d.decision])).toEqual([
        ["u1", "accept"],
        ["u2", "reject"],
      ]);
      expect(review.update_judgements[1]!.reason).toMatch(
        /^would shrink docs\/guide.md from 15 to 3 lines \(below 70% of its lines\): a truncated document/,
      );
      expect(review.target_files!.map((f) => f.target.path)).toEqual(["STATE/current_state.md"]);
      const shoEvents = await supervisor.runs.events(shoRun.id);
      const override = shoEvents.find((e) => (e.event.payload as { kind?: string }).kind === "guard_override");
      expect((override?.event.payload as { message: string }).message).toContain(
        "the guard overrides the reviewer's accept of u2 (docs/guide.md): would shrink",
      );
      expect(
        (shoEvents.find((e) => e.event_type === "COMPLETED")?.event.payload as { summary: string }).summary,
      ).toContain("1 accepted, 1 rejected; review approve at hard_gate: both updates read well");

      // Tsugu's branch and pull request carry the accepted update only, and Gen's snapshot.
      const prs = await forge.list();
      expect(prs).toMatchObject([{ number: 1, head: "pmagent/layer_b/doc_update/req-1", base: "main", state: "open" }]);
      const bare = join(dir, ".pmagent/forge.git");
      expect(git(bare, "diff", "--name-only", "main", "pmagent/layer_b/doc_update/req-1")).toMatch(
        /^STATE\/current_state\.md\nreports\/doc_update_proposals\/\d{4}-\d{2}-\d{2}-req-1\/doc_update_proposal_v1\.json\nreports\/doc_update_reviews\/\d{4}-\d{2}-\d{2}-req-1\/doc_update_review_v1\.json\nreports\/pm_snapshots\/\d{4}-\d{2}-\d{2}_demo\.md$/,
      );
      expect(git(bare, "show", "pmagent/layer_b/doc_update/req-1:STATE/current_state.md")).toContain(APPENDED);
    } finally {
      await ts.cleanup();
    }
  }, 200_000);
});

describe.each(sqlite)("the model-backed lane refuses ($name)", (kind) => {
  it("an invalid answer is sent back once with the validation errors; a second invalid answer fails Aya's run saying why", async () => {
    const ts = await kind.open();
    try {
      const before = fake.requests.length;
      fake.reply(
        { json: { summary: "s", updates: [] } },
        {
          json: {
            summary: "s",
            updates: [{ path: "STATE/current_state.md", reason: " ", change_type: "rewrite", suggested_markdown: "x" }],
          },
        },
      );
      const { entries, runs } = await modelCycle(ts);
      expect(entries.map(([id, status]) => [id, status])).toEqual([
        ["req-1", "error"],
        ["req-1-error", "open"],
      ]);
      const aya = runs.find((r) => r.role === "Aya")!;
      expect(aya.state).toBe("failed");
      expect(aya.reason).toContain(
        "ERROR: the model's answer does not match output schema doc_update_proposal, also after a retry with the validation errors:",
      );
      expect(aya.reason).toContain("$.updates[0].reason: reason must not be empty");
      expect(aya.reason).toContain("$.updates[0].change_type");
      expect(fake.requests.length - before).toBe(2);
      const retry = fake.requests[before + 1]!.body.input as Msg[];
      expect(retry.at(-1)!.content).toContain(
        'Your answer does not match the output schema "doc_update_proposal":\n- $.updates: Too small: expected array to have >=1 items',
      );
    } finally {
      await ts.cleanup();
    }
  }, 200_000);

  it("no key and a role not allowed it: the FETCH_CREDENTIAL refusal fails Aya's run saying how to allow it", async () => {
    const ts = await kind.open();
    try {
      const before = fake.requests.length;
      const { entries, runs } = await modelCycle(ts, (c) => {
        delete c.lanes[0]!.roles[0]!.credentials;
      });
      expect(entries.map(([id, status]) => [id, status])).toEqual([
        ["req-1", "error"],
        ["req-1-error", "open"],
      ]);
      expect(runs.find((r) => r.role === "Aya")!.reason).toContain(
        'ERROR: the supervisor could not hand over the model key (FETCH_CREDENTIAL): role "Aya" may not fetch credential "OPENAI_API_KEY" (it may fetch none); add it to that role\'s "credentials" in pmagent.config.json to allow it',
      );
      expect(fake.requests.length).toBe(before);
    } finally {
      await ts.cleanup();
    }
  }, 200_000);

  it("Sho named directly as `pmagent agent --lane-artifact doc_update_review_v1`: a block at hard_gate fails the run and nothing reaches Tsugu", async () => {
    const ts = await kind.open();
    try {
      fake.reply({ json: proposalAnswer }, { json: reviewAnswer("block") });
      const { entries, runs } = await modelCycle(ts, (c) => {
        c.lanes[0]!.roles[1]!.runner.command = ["pmagent", "agent", "--lane-artifact", "doc_update_review_v1"];
      });
      expect(entries.map(([id, status]) => [id, status])).toEqual([
        ["req-1", "done"],
        ["req-1-review", "error"],
        ["req-1-review-error", "open"],
      ]);
      const sho = runs.find((r) => r.role === "Sho")!;
      expect(sho.reason).toBe(
        "COMPLETED with status failure: review of req-1 blocks the lane (1 accepted, 1 rejected); review block at hard_gate: the proposal must not go on",
      );
      expect(JSON.parse(readFileSync(onlyFile(sho.workspace, "reports/doc_update_reviews"), "utf8"))).toMatchObject({
        schema_version: "doc_update_review_v1",
        overall_assessment: { risk_level: "medium" },
      });
    } finally {
      await ts.cleanup();
    }
  }, 200_000);
});

describe("Sho's decision per update", () => {
  const guardOk = { reasons: [], linesBefore: 10, linesAfter: 12 };
  const guardNo = { reasons: ["would shrink x"], linesBefore: 10, linesAfter: 2 };
  const accept = { decision: "accept" as const, reasons: [] };
  const reject = { decision: "reject" as const, reasons: ["drops the Goals section"] };

  it.each([
    ["hard_gate", guardNo, accept, "reject", ["would shrink x"]],
    ["feedback", guardNo, accept, "reject", ["would shrink x"]],
    ["hard_gate", guardNo, reject, "reject", ["would shrink x", "reviewer: drops the Goals section"]],
    ["hard_gate", guardOk, reject, "reject", ["reviewer: drops the Goals section"]],
    ["soft_gate", guardOk, reject, "reject", ["reviewer: drops the Goals section"]],
    ["feedback", guardOk, reject, "accept", []],
    [
      "soft_gate",
      guardOk,
      { decision: "reject" as const, reasons: [" "] },
      "reject",
      ["rejected by the reviewer (no reason given)"],
    ],
    ["hard_gate", guardOk, accept, "accept", []],
  ] as const)("at %s, guard %j and model %j → %s", (level, guard, model, decision, reasons) => {
    expect(decideUpdate(guard as typeof guardOk, model, level)).toEqual({
      decision,
      reasons,
      lines_before: guard.linesBefore,
      lines_after: guard.linesAfter,
    });
  });

  const schema = outputSchemaFromZod(
    "doc_update_review",
    reviewAnswerSchema([{ id: "u1" }, { id: "u2" }], "soft_gate"),
  );
  const answer = (updates: unknown[], level = "soft_gate") =>
    JSON.stringify({ level, decision: "approve", summary: "ok", updates });

  it.each([
    [answer([{ update_id: "u1", decision: "accept", reasons: [] }]), "$.updates: has no decision for u2"],
    [
      answer([
        { update_id: "u1", decision: "accept", reasons: [] },
        { update_id: "u1", decision: "reject", reasons: [] },
      ]),
      "$.updates: decides u1 more than once",
    ],
    [answer([{ update_id: "u3", decision: "accept", reasons: [] }]), "$.updates[0].update_id"],
    [
      answer(
        [
          { update_id: "u1", decision: "accept", reasons: [] },
          { update_id: "u2", decision: "accept", reasons: [] },
        ],
        "hard_gate",
      ),
      "$.level",
    ],
  ])("refuses a review answer %s", (text, issue) => {
    const check = checkAnswer(schema, text);
    expect(check.ok).toBe(false);
    expect((check as { issues: string[] }).issues.join("\n")).toContain(issue);
  });

  it("takes one decision per update at the configured level", () => {
    expect(
      checkAnswer(
        schema,
        answer([
          { update_id: "u2", decision: "reject", reasons: ["no"] },
          { update_id: "u1", decision: "accept", reasons: [] },
        ]),
      ).ok,
    ).toBe(true);
  });
});

describe("lanes[].review_level", () => {
  it("refuses a level that is not one of the reviewer's, naming the path and the choices", () => {
    const config = exampleLaneConfig("demo") as { lanes: Array<Record<string, unknown>> };
    config.lanes[0]!.review_level = "strict";
    let error: Error | undefined;
    try {
      parseConfig(JSON.stringify(config), "pmagent.config.json");
    } catch (err) {
      error = err as Error;
    }
    expect(error?.message).toContain(
      '$.lanes[0].review_level: Invalid option: expected one of "feedback"|"soft_gate"|"hard_gate"',
    );
  });
});

describe("pmagent agent --lane-artifact", () => {
  it.each([
    [
      ["--lane-artifact", "doc_update_plan_v1"],
      'pmagent: unknown lane artifact "doc_update_plan_v1": expected one of doc_update_proposal_v1, doc_update_review_v1 [unknown_lane_artifact]',
    ],
    [
      ["--lane-artifact", "doc_update_review_v1", "--role", "orchestrator"],
      "pmagent: --lane-artifact doc_update_review_v1 is answered by the reviewer role, not by orchestrator: drop --role or make it reviewer [conflicting_options]",
    ],
    [
      ["--lane-artifact", "doc_update_proposal_v1", "--review-level", "soft_gate"],
      "pmagent: --review-level applies to the reviewer role only, not to orchestrator [conflicting_options]",
    ],
    [
      ["--lane-artifact", "doc_update_review_v1", "--lane", "layer_b/doc_update"],
      "pmagent: --lane does not apply with --lane-artifact: the lane is the one that configures the run's role [conflicting_options]",
    ],
    [
      [],
      "pmagent: give --role (orchestrator, reviewer, executor, searcher) or --lane-artifact (doc_update_proposal_v1, doc_update_review_v1) [missing_option]",
    ],
    [
      ["--lane-artifact", "doc_update_review_v1"],
      "pmagent: a lane sprite runs under the supervisor (pmagent worker or pmagent run --entry): LATTICE_ROLE, LATTICE_WORKSPACE and PMAGENT_ENTRY_FILE are not all set [not_in_a_run]",
    ],
  ])("refuses %j", async (args, message) => {
    const r = await runCli(["agent", ...args], { env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "" } });
    expect(r.code).toBe(2);
    expect(r.stderr.split("\n")[0]).toBe(message);
  });

  it("documents the lane path in --help of agent and lane-sprite", async () => {
    const agent = await runCli(["agent", "--help"]);
    expect(agent.stdout).toContain("--lane-artifact <kind>");
    const lane = await runCli(["lane-sprite", "--help"]);
    expect(lane.stdout.replace(/\s+/g, " ")).toContain(
      "With `model` in the project's pmagent.config.json, aya and sho answer through the LLM role agent",
    );
  });
});

describe("Sho's outcome at each level (the task alone, without a model call)", () => {
  const lane = parseConfig(JSON.stringify(exampleLaneConfig("demo")), "example").lanes[0]!;

  /** A workspace with two STATE documents and Aya's proposal, and Sho's context on it. */
  function shoContext(): {
    ctx: LaneRunContext;
    events: Array<{ event_type: string; payload: Record<string, unknown> }>;
  } {
    const workspace = mkdtempSync(join(tmpdir(), "pmagent-sho-task-"));
    mkdirSync(join(workspace, "STATE"));
    writeFileSync(join(workspace, "STATE/a.md"), "# A\n\nOne.\n");
    writeFileSync(join(workspace, "STATE/b.md"), "# B\n\nTwo.\n");
    const proposal = {
      version: "doc_update_proposal_v1",
      cycle_id: "req-1",
      request_entry_id: "req-1",
      summary: "two appends",
      created_at: "2026-11-20T10:00:00.000Z",
      updates: [
        { id: "u1", path: "STATE/a.md", reason: "r", change_type: "append", suggested_markdown: "More A." },
        { id: "u2", path: "STATE/b.md", reason: "r", change_type: "append", suggested_markdown: "More B." },
      ],
    };
    const ref = join(workspace, "proposal.json");
    writeFileSync(ref, JSON.stringify(proposal));
    // Sho commits his review on the cycle's branch: the workspace is a repository.
    execFileSync("git", ["init", "--quiet", "-b", "main", workspace]);
    execFileSync(
      "git",
      ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "--quiet", "--allow-empty", "-m", "init"],
      { cwd: workspace },
    );
    const events: Array<{ event_type: string; payload: Record<string, unknown> }> = [];
    const sprite = new Sprite({
      spriteId: "s-1",
      workItemId: "req-1-review",
      workspace,
      write: (line) => void events.push(JSON.parse(line.slice(line.indexOf("{"))) as never),
    });
    const entry = {
      id: "req-1-review",
      kind: "doc_update_review_request",
      payload: { refs: [{ type: "artifact", kind: "doc_update_proposal_v1", ref }] },
      target_docs: [],
    };
    return {
      ctx: {
        sprite,
        role: "Sho",
        workspace,
        project: {
          root: workspace,
          configPath: "",
          config: parseConfig(JSON.stringify(exampleLaneConfig("demo")), "x"),
        },
        lane,
        entry,
        cycleId: "req-1",
        branch: "doc-update/req-1",
        base: undefined,
        onCycleBranch: false,
        entryFile: "",
      },
      events,
    };
  }

  const answer = (level: string, decision: string, second: "accept" | "reject") => ({
    level,
    decision,
    summary: "u2 says too little",
    updates: [
      { update_id: "u1", decision: "accept", reasons: [] },
      { update_id: "u2", decision: second, reasons: second === "reject" ? ["says too little"] : [] },
    ],
  });
  const run = (level: "feedback" | "soft_gate" | "hard_gate", a: ReturnType<typeof answer>) => {
    const { ctx, events } = shoContext();
    const task = shoTask(ctx, level, () => new Date("2026-11-20T11:00:00Z"));
    const prepared = task.prepare();
    expect(checkAnswer(prepared.outputSchema, JSON.stringify(a)).ok).toBe(true);
    const step = {
      answer: a,
      review: reviewOutcome(level, a),
      request: { model: "gpt-test" },
    } as unknown as RoleStepResult;
    const outcome = task.finish(step);
    const review = DocUpdateReviewSchema.parse(
      JSON.parse(
        readFileSync(
          join(ctx.workspace, "reports/doc_update_reviews/2026-11-20-req-1/doc_update_review_v1.json"),
          "utf8",
        ),
      ),
    );
    return { outcome, review, events };
  };

  it("soft_gate: the model's reject binds, the lane goes on and asks for a revision of the rejected update", () => {
    const { outcome, review, events } = run("soft_gate", answer("soft_gate", "revise", "reject"));
    expect(review.target_files!.map((f) => f.target.path)).toEqual(["STATE/a.md"]);
    expect(outcome).toEqual({
      status: "success",
      summary: "review of req-1: 1 accepted, 1 rejected; review revise at soft_gate: u2 says too little",
      revision_requested: true,
      requested_changes: ["u2 (STATE/b.md): reviewer: says too little"],
    });
    expect(events.find((e) => e.event_type === "ARTIFACT")?.payload).toMatchObject({
      kind: "doc_update_review_v1",
      metadata: { accepted: 1, rejected: 1, level: "soft_gate", decision: "revise" },
    });
  });

  it("feedback: the model's reject is advice; both updates are accepted and nothing blocks", () => {
    const { outcome, review, events } = run("feedback", answer("feedback", "block", "reject"));
    expect(review.target_files!.map((f) => f.target.path)).toEqual(["STATE/a.md", "STATE/b.md"]);
    expect(outcome).toMatchObject({ status: "success", revision_requested: false });
    expect(
      events.some(
        (e) =>
          e.payload.kind === "review_advice" &&
          String(e.payload.message).includes(
            "reviewer advice on u2 (STATE/b.md) at feedback level, not binding: says too little",
          ),
      ),
    ).toBe(true);
  });

  it("hard_gate: a model that rejects every update fails the step like the deterministic Sho", () => {
    const a = {
      ...answer("hard_gate", "revise", "reject"),
      updates: [
        { update_id: "u1", decision: "reject", reasons: ["no"] },
        { update_id: "u2", decision: "reject", reasons: ["no"] },
      ],
    };
    const { outcome } = run("hard_gate", a as ReturnType<typeof answer>);
    expect(outcome).toMatchObject({
      status: "failure",
      summary: "review of req-1: every update was rejected (reviewer: no | reviewer: no)",
    });
  });

  it("gives the model the documents it may read, cuts a long one, and never reads a path outside the allowed ones", () => {
    const { ctx } = shoContext();
    writeFileSync(join(ctx.workspace, "STATE/long.md"), "x".repeat(MAX_DOC_CONTEXT_CHARS + 10));
    writeFileSync(join(ctx.workspace, "secret.md"), "do not show");
    const text = documentsContext(ctx, ["STATE/a.md", "STATE/a.md", "STATE/new.md", "STATE/long.md", "secret.md"]);
    expect(text).toContain(
      "Lane layer_b/doc_update. Allowed paths: STATE/, docs/, reports/. STATE document: STATE/current_state.md.",
    );
    expect(text.match(/## STATE\/a\.md/g)).toHaveLength(1);
    expect(text).toContain("## STATE/a.md (current text)\n\n````markdown\n# A\n\nOne.\n````");
    expect(text).toContain("## STATE/new.md\n\nThe file does not exist yet (use change_type create).");
    expect(text).toContain(
      `## STATE/long.md (current text, the first ${MAX_DOC_CONTEXT_CHARS} of ${MAX_DOC_CONTEXT_CHARS + 10} characters)`,
    );
    expect(text).toContain(
      '## secret.md\n\nNot shown: path "secret.md" is outside the allowed paths (STATE/, docs/, reports/).',
    );
    expect(text).not.toContain("do not show");
  });
});
