import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  Sprite,
  spriteContext,
  checkpointExists,
  readOutbox,
  outboxPath,
  readResume,
  writeResume,
  eventId,
  type LatticeEvent,
} from "../../../src/lattice/index.js";
import { runProcess, REPO_ROOT } from "../../helpers/proc.js";
import { SPEC_EVENTS, SPEC_RESUME } from "../fixtures/spec-examples.js";

let root: string;
let ws: string;
let printed: string[];

function sprite(extra: Record<string, string> = {}): Sprite {
  return new Sprite({
    env: {
      LATTICE_SPRITE_ID: "sprite-42",
      LATTICE_WORK_ITEM_ID: "issue-17",
      LATTICE_WORKSPACE: ws,
      LATTICE_CHECKPOINT_DIR: join(root, "chk"),
      ...extra,
    },
    write: (l) => printed.push(l),
  });
}

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "lattice-sprite-"));
  ws = join(root, "workspace");
  printed = [];
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe("Sprite", () => {
  it("takes its identity from the environment, with /workspace as the default workspace", () => {
    const ctx = spriteContext({ env: { LATTICE_SPRITE_ID: "s", LATTICE_WORK_ITEM_ID: "w" } });
    expect(ctx).toEqual({
      spriteId: "s",
      workItemId: "w",
      workspace: "/workspace",
      checkpointDir: "/.lattice-checkpoints/workspace",
    });
    expect(() => new Sprite({ env: { LATTICE_WORK_ITEM_ID: "w" } })).toThrow(
      "LATTICE_SPRITE_ID is not set: the supervisor sets it when it starts a sprite",
    );
    expect(() => new Sprite({ env: { LATTICE_SPRITE_ID: "s" } })).toThrow("LATTICE_WORK_ITEM_ID is not set");
  });

  it("emits every spec example payload to stdout (prefixed) and to the outbox (created), with a correct timestamp", () => {
    const s = sprite();
    const before = Date.now();
    const emitted: LatticeEvent[] = [];
    for (const example of SPEC_EVENTS) {
      const spec = JSON.parse(example.text) as { event_type: "INFO"; payload: never };
      emitted.push(s.emit(spec.event_type, spec.payload));
    }
    const after = Date.now();
    expect(printed).toHaveLength(SPEC_EVENTS.length);
    const outbox = readFileSync(outboxPath(ws), "utf8").trimEnd().split("\n");
    expect(outbox).toHaveLength(SPEC_EVENTS.length);
    SPEC_EVENTS.forEach((example, i) => {
      const spec = JSON.parse(example.text) as Record<string, unknown>;
      expect(printed[i]).toBe(`LATTICE_EVENT ${outbox[i]}\n`);
      const ev = JSON.parse(outbox[i]!) as Record<string, unknown>;
      const ts = ev.timestamp as string;
      expect(ts).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      expect(Date.parse(ts)).toBeGreaterThanOrEqual(before);
      expect(Date.parse(ts)).toBeLessThanOrEqual(after);
      expect({ ...ev, timestamp: spec.timestamp }).toEqual(spec);
      expect(emitted[i]!.event_type).toBe(example.type);
    });
  });

  it("has one method per event type", () => {
    const s = sprite();
    s.info("Running test suite (75% complete)", { kind: "progress", metadata: { percent: 75 } });
    s.phaseStarted("implement");
    s.phaseFinished("implement", true);
    s.actionRequest("POST_COMMENT", { body: "done" });
    s.actionRequest("OPEN_PR", { title: "t" }, { blocking: true });
    s.artifact("branch", { ref: "sprite/fix-cache", url: null, metadata: {} });
    const chk = s.checkpoint();
    s.waiting("PR_REVIEW", chk, { approved: "boolean", comments: "array<string>" });
    s.completed("success", "all good");
    s.completed("failure");
    s.error("Build failed", { exit_code: 1 });
    s.environmentProposal({
      observed_failure: { phase: "bootstrap", exit_code: 127, stderr_hint: "node: not found" },
      suggested_adjustment: { type: "runtime_install", details: { runtime: "node" } },
      confidence: 0.85,
      evidence: ["package.json present"],
      scope: "repo_specific",
    });
    const r = readOutbox(outboxPath(ws));
    expect(r.items.map((i) => (i.kind === "event" ? i.event.event_type : i.reason))).toEqual([
      "INFO",
      "PHASE_STARTED",
      "PHASE_FINISHED",
      "ACTION_REQUEST",
      "ACTION_REQUEST",
      "ARTIFACT",
      "WAITING",
      "COMPLETED",
      "COMPLETED",
      "ERROR",
      "ENVIRONMENT_PROPOSAL",
    ]);
    expect(r.items[3]).toMatchObject({
      event: { payload: { action: "POST_COMMENT", parameters: { body: "done" }, blocking: false } },
    });
    expect(r.items[6]).toMatchObject({ event: { payload: { checkpoint_id: chk } } });
    expect(checkpointExists(join(root, "chk"), chk)).toBe(true);
  });

  it("validates before writing anything, naming the payload field", () => {
    const s = sprite();
    expect(() => s.completed("ok" as never)).toThrow(
      'COMPLETED event is invalid:\n  payload.status: Invalid option: expected one of "success"|"failure"',
    );
    expect(() => s.waiting("r", "not-a-checkpoint", { a: "float" })).toThrow(
      /payload\.checkpoint_id: expected a checkpoint id like chk_abc123[\s\S]*payload\.expected_inputs\.a: "float" is not an input type/,
    );
    expect(() =>
      s.environmentProposal({
        observed_failure: { phase: "b", exit_code: 1, stderr_hint: "" },
        suggested_adjustment: { type: "runtime_install", details: {} },
        confidence: 2,
        evidence: [],
        scope: "repo_specific",
      }),
    ).toThrow("payload.confidence: must be between 0.0 and 1.0");
    expect(() => s.info("")).toThrow("payload.message: must be a non-empty string");
    expect(existsSync(outboxPath(ws))).toBe(false);
    expect(printed).toEqual([]);
  });

  it("reads resume.json and detects a replayed resume with the .lattice/resumed marker", () => {
    const s = sprite();
    expect(s.readResume()).toEqual({ resume: null, replayed: false, key: null });
    mkdirSync(join(ws, ".lattice"), { recursive: true });
    writeFileSync(join(ws, ".lattice/resume.json"), SPEC_RESUME);
    const first = s.readResume();
    expect(first).toMatchObject({
      replayed: false,
      resume: {
        checkpoint_id: "chk_abc123",
        inputs: { approved: true, comments: ["Looks good, minor nit on line 42"] },
      },
    });
    expect(first.key).toBe(eventId(JSON.parse(SPEC_RESUME)));
    expect(readFileSync(join(ws, ".lattice/resumed"), "utf8")).toBe(`${first.key}\n`);
    expect(statSync(join(ws, ".lattice/resumed")).mode & 0o777).toBe(0o600);
    // Same checkpoint and payload (even re-serialized): a replay.
    writeFileSync(join(ws, ".lattice/resume.json"), JSON.stringify(JSON.parse(SPEC_RESUME)));
    expect(s.readResume()).toMatchObject({ replayed: true, key: first.key });
    // A different payload for the same checkpoint is a new resume.
    writeFileSync(
      join(ws, ".lattice/resume.json"),
      JSON.stringify({ ...JSON.parse(SPEC_RESUME), inputs: { approved: false, comments: [] } }),
    );
    expect(s.readResume({ mark: false }).replayed).toBe(false);
    expect(s.readResume({ mark: false }).replayed).toBe(false);
    expect(s.readResume().replayed).toBe(false);
    expect(s.readResume().replayed).toBe(true);
  });

  it("writeResume (supervisor side) writes a 0600 resume.json whose key readResume sees", () => {
    const key = writeResume(ws, { work_item_id: "issue-17", checkpoint_id: "chk_abc123", inputs: { token: "s3cret" } });
    const file = join(ws, ".lattice/resume.json");
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual({
      work_item_id: "issue-17",
      checkpoint_id: "chk_abc123",
      inputs: { token: "s3cret" },
      context: {},
    });
    expect(readResume(ws)).toMatchObject({ key, replayed: false });
    expect(
      writeResume(ws, { work_item_id: "issue-17", checkpoint_id: "chk_abc123", inputs: { token: "s3cret" } }),
    ).toBe(key);
    expect(readResume(ws)).toMatchObject({ key, replayed: true });
    expect(() => writeResume(ws, { work_item_id: "", checkpoint_id: "x" })).toThrow(
      "resume payload is invalid:\n  $.work_item_id: must be a non-empty string\n  $.checkpoint_id: expected a checkpoint id like chk_abc123",
    );
  });

  it("refuses a resume.json that is not JSON or lacks fields, naming the file and field", () => {
    mkdirSync(join(ws, ".lattice"), { recursive: true });
    const file = join(ws, ".lattice/resume.json");
    writeFileSync(file, '{"inputs": {"token": ghp_abcdefghijklmnopqrstuvwxyz0123456789}}');
    expect(() => readResume(ws)).toThrow(`${file} is not valid JSON: Unexpected token 'g'`);
    try {
      readResume(ws);
    } catch (err) {
      expect((err as Error).message).not.toContain("ghp_");
    }
    writeFileSync(file, JSON.stringify({ work_item_id: "issue-17", inputs: [] }));
    expect(() => readResume(ws)).toThrow(
      `${file} is invalid:\n  $.checkpoint_id: Invalid input: expected string, received undefined\n  $.inputs: Invalid input: expected record, received array`,
    );
  });

  it("is importable as pmagent/sprite by a separate sprite process", async () => {
    const script = `
      import { Sprite } from "pmagent/sprite";
      const s = new Sprite();
      s.phaseStarted("bootstrap");
      s.completed("success", s.checkpoint());
    `;
    const r = await runProcess(process.execPath, ["--input-type=module", "-e", script], {
      cwd: REPO_ROOT,
      env: {
        PATH: process.env.PATH,
        LATTICE_SPRITE_ID: "sprite-7",
        LATTICE_WORK_ITEM_ID: "task-1",
        LATTICE_WORKSPACE: ws,
      },
    });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split("\n");
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(
      /^LATTICE_EVENT \{"protocol_version":"v1","event_type":"PHASE_STARTED","sprite_id":"sprite-7","work_item_id":"task-1"/,
    );
    const summary = (JSON.parse(lines[1]!.slice("LATTICE_EVENT ".length)) as { payload: { summary: string } }).payload
      .summary;
    expect(checkpointExists(join(root, ".lattice-checkpoints", "workspace"), summary)).toBe(true);
  });
});
