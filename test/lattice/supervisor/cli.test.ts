import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCli } from "../../helpers/proc.js";
import { readOutbox, outboxPath } from "../../../src/lattice/index.js";
import { SPEC_RESUME } from "../fixtures/spec-examples.js";

let root: string;
let ws: string;
const env = () => ({
  PATH: process.env.PATH,
  LATTICE_SPRITE_ID: "sprite-42",
  LATTICE_WORK_ITEM_ID: "issue-17",
  LATTICE_WORKSPACE: ws,
  LATTICE_CHECKPOINT_DIR: join(root, "chk"),
});
const emit = (...args: string[]) => runCli(["emit", ...args], { env: env() });

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "lattice-cli-"));
  ws = join(root, "workspace");
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

function payloadOf(stdout: string): unknown {
  expect(stdout.startsWith("LATTICE_EVENT ")).toBe(true);
  expect(stdout.endsWith("\n")).toBe(true);
  return (JSON.parse(stdout.slice("LATTICE_EVENT ".length)) as { payload: unknown }).payload;
}

describe("pmagent emit", () => {
  const cases: Array<[string, string[], unknown]> = [
    [
      "INFO",
      ["info", "--message", "Running tests", "--kind", "progress", "--metadata-json", '{"percent":75}'],
      { message: "Running tests", kind: "progress", metadata: { percent: 75 } },
    ],
    ["PHASE_STARTED", ["PHASE_STARTED", "--phase", "implement"], { phase: "implement" }],
    ["PHASE_FINISHED", ["phase-finished", "--phase", "test", "--failure"], { phase: "test", success: false }],
    [
      "ACTION_REQUEST",
      ["action_request", "--action", "OPEN_PR", "--param", "title=Fix cache", "--param", "body=a=b", "--blocking"],
      { action: "OPEN_PR", parameters: { title: "Fix cache", body: "a=b" }, blocking: true },
    ],
    [
      "ARTIFACT",
      ["artifact", "--kind", "branch", "--ref", "sprite/fix-cache", "--url", "https://example.com/pr/1"],
      { kind: "branch", ref: "sprite/fix-cache", url: "https://example.com/pr/1" },
    ],
    [
      "WAITING",
      [
        "waiting",
        "--reason",
        "PR_REVIEW",
        "--checkpoint",
        "chk_abc123",
        "--expect",
        "approved=boolean",
        "--expect",
        "comments=array<string>",
      ],
      {
        reason: "PR_REVIEW",
        checkpoint_id: "chk_abc123",
        expected_inputs: { approved: "boolean", comments: "array<string>" },
      },
    ],
    ["COMPLETED", ["completed", "--status", "success", "--summary", "done"], { status: "success", summary: "done" }],
    [
      "ERROR",
      ["error", "--message", "Build failed", "--details-json", '{"exit_code":1}'],
      { message: "Build failed", details: { exit_code: 1 } },
    ],
    [
      "ENVIRONMENT_PROPOSAL",
      [
        "environment_proposal",
        "--phase",
        "bootstrap",
        "--exit-code",
        "127",
        "--stderr-hint",
        "bash: node: command not found",
        "--adjustment",
        "runtime_install",
        "--details-json",
        '{"runtime":"node","version":"20"}',
        "--confidence",
        "0.85",
        "--evidence",
        "package.json present",
        "--evidence",
        "no .nvmrc found",
        "--scope",
        "repo_specific",
      ],
      {
        observed_failure: { phase: "bootstrap", exit_code: 127, stderr_hint: "bash: node: command not found" },
        suggested_adjustment: { type: "runtime_install", details: { runtime: "node", version: "20" } },
        confidence: 0.85,
        evidence: ["package.json present", "no .nvmrc found"],
        scope: "repo_specific",
      },
    ],
  ];

  it.each(cases)("%s from flags: printed with the prefix and appended to the outbox", async (_type, args, payload) => {
    const before = readOutbox(outboxPath(ws)).items.length;
    const r = await emit(...args);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(payloadOf(r.stdout)).toEqual(payload);
    const items = readOutbox(outboxPath(ws)).items;
    expect(items).toHaveLength(before + 1);
    expect(
      `LATTICE_EVENT ${JSON.stringify(items.at(-1)!.kind === "event" ? (items.at(-1) as { raw: unknown }).raw : null)}\n`,
    ).toBe(r.stdout);
  });

  it("takes the whole payload from --payload-json or --payload-file", async () => {
    expect(payloadOf((await emit("COMPLETED", "--payload-json", '{"status":"failure","summary":"x"}')).stdout)).toEqual(
      { status: "failure", summary: "x" },
    );
    expect(
      payloadOf(
        (await emit("COMPLETED", "--status", "success", "--outcome", "changes_requested", "--summary", "rename it"))
          .stdout,
      ),
    ).toEqual({ status: "success", outcome: "changes_requested", summary: "rename it" });
    const file = join(root, "payload.json");
    writeFileSync(file, '{"phase":"review"}');
    expect(payloadOf((await emit("PHASE_STARTED", "--payload-file", file)).stdout)).toEqual({ phase: "review" });
    const stdin = await runCli(["emit", "INFO", "--payload-file", "-"], {
      env: env(),
      input: '{"message":"from stdin"}',
    });
    expect(payloadOf(stdin.stdout)).toEqual({ message: "from stdin" });
  });

  const errors: Array<[string, string[], string]> = [
    [
      "an unknown type",
      ["BOGUS"],
      'unknown event type "BOGUS" (expected one of INFO, PHASE_STARTED, PHASE_FINISHED, ACTION_REQUEST, ARTIFACT, WAITING, COMPLETED, ERROR, ENVIRONMENT_PROPOSAL)',
    ],
    [
      "a missing required field",
      ["INFO"],
      "INFO event is invalid:\n  payload.message (--message): required (expected string)",
    ],
    [
      "WAITING without its checkpoint and with a bad type",
      ["WAITING", "--reason", "r", "--expect", "n=number"],
      'WAITING event is invalid:\n  payload.checkpoint_id (--checkpoint): required (expected string)\n  payload.expected_inputs.n (--expect): "number" is not an input type',
    ],
    [
      "PHASE_FINISHED without outcome",
      ["PHASE_FINISHED", "--phase", "x"],
      "payload.success (--success): required (expected boolean)",
    ],
    [
      "--success with --failure",
      ["PHASE_FINISHED", "--phase", "x", "--success", "--failure"],
      "give --success or --failure, not both",
    ],
    [
      "a flag of another type",
      ["INFO", "--message", "m", "--phase", "x"],
      "--phase does not apply to INFO (it is for PHASE_STARTED, PHASE_FINISHED, ENVIRONMENT_PROPOSAL)",
    ],
    [
      "a bad status",
      ["COMPLETED", "--status", "ok"],
      'payload.status (--status): Invalid option: expected one of "success"|"failure"',
    ],
    [
      "an outcome that is no lowercase name",
      ["COMPLETED", "--status", "success", "--outcome", "Approved!"],
      "payload.outcome (--outcome): an outcome is a lowercase name, e.g. changes_requested",
    ],
    [
      "a bad --param",
      ["ACTION_REQUEST", "--action", "A", "--param", "novalue"],
      '--param expects KEY=VALUE, got "novalue"',
    ],
    [
      "--param with --params-json",
      ["ACTION_REQUEST", "--action", "A", "--param", "a=1", "--params-json", "{}"],
      "give --param or --params-json, not both",
    ],
    ["bad JSON", ["ERROR", "--message", "m", "--details-json", "{nope"], "--details-json is not valid JSON"],
    [
      "a JSON array",
      ["ERROR", "--message", "m", "--details-json", "[1]"],
      "--details-json must be a JSON object, got an array",
    ],
    [
      "a non-numeric confidence",
      ["ENVIRONMENT_PROPOSAL", "--confidence", "high"],
      '--confidence expects a number from 0.0 to 1.0, got "high"',
    ],
    [
      "a confidence out of range",
      [
        "ENVIRONMENT_PROPOSAL",
        "--phase",
        "b",
        "--exit-code",
        "1",
        "--stderr-hint",
        "",
        "--adjustment",
        "runtime_install",
        "--details-json",
        "{}",
        "--confidence",
        "1.5",
        "--evidence",
        "e",
        "--scope",
        "repo_specific",
      ],
      "payload.confidence (--confidence): must be between 0.0 and 1.0",
    ],
    [
      "an unknown adjustment",
      [
        "ENVIRONMENT_PROPOSAL",
        "--phase",
        "b",
        "--exit-code",
        "1",
        "--stderr-hint",
        "",
        "--adjustment",
        "reboot",
        "--details-json",
        "{}",
        "--confidence",
        "1",
        "--evidence",
        "e",
        "--scope",
        "repo_specific",
      ],
      'payload.suggested_adjustment.type (--adjustment): Invalid option: expected one of "runtime_install"',
    ],
    [
      "a non-integer exit code",
      ["ENVIRONMENT_PROPOSAL", "--exit-code", "1.5"],
      '--exit-code expects a whole number, got "1.5"',
    ],
    ["a bad url", ["ARTIFACT", "--kind", "pr_url", "--url", "nope"], "payload.url (--url): Invalid URL"],
    [
      "field flags with --payload-json",
      ["INFO", "--message", "m", "--payload-json", "{}"],
      "--message cannot be combined with --payload-json/--payload-file (put the field in the payload)",
    ],
    [
      "both payload sources",
      ["INFO", "--payload-json", "{}", "--payload-file", "x"],
      "give --payload-json or --payload-file, not both",
    ],
    [
      "an unreadable payload file",
      ["INFO", "--payload-file", "/nonexistent/p.json"],
      "cannot read /nonexistent/p.json: ENOENT",
    ],
    [
      "an invalid payload file",
      ["COMPLETED", "--payload-json", '{"status":"success","summary":5}'],
      "payload.summary: Invalid input: expected string, received number",
    ],
  ];

  it.each(errors)("refuses %s with a usage error naming the field", async (_name, args, message) => {
    const r = await emit(...args);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain(message);
  });

  it("refuses to run without the sprite environment", async () => {
    const r = await runCli(["emit", "INFO", "--message", "m"], {
      env: { PATH: process.env.PATH, LATTICE_WORKSPACE: ws },
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("LATTICE_SPRITE_ID is not set");
  });
});

describe("pmagent checkpoint and resume-info", () => {
  it("create prints an id; list, restore and prune work on it", async () => {
    const w = join(root, "cw");
    mkdirSync(w);
    writeFileSync(join(w, "a.txt"), "one");
    const e = { ...env(), LATTICE_WORKSPACE: w };
    const created = await runCli(["checkpoint", "create"], { env: e });
    expect(created.code).toBe(0);
    const id = created.stdout.trim();
    expect(id).toMatch(/^chk_[0-9a-f]{24}$/);
    writeFileSync(join(w, "a.txt"), "two");
    writeFileSync(join(w, "b.txt"), "extra");
    const second = JSON.parse((await runCli(["checkpoint", "create", "--format", "json"], { env: e })).stdout) as {
      id: string;
      files: number;
    };
    expect(second.files).toBe(2);

    const list = JSON.parse((await runCli(["checkpoint", "list", "--format", "json"], { env: e })).stdout) as Array<{
      id: string;
      files: number;
      bytes: number;
      created_at: string;
    }>;
    expect(list.map((c) => [c.id, c.files, c.bytes])).toEqual([
      [id, 1, 3],
      [second.id, 2, 8],
    ]);
    expect((await runCli(["checkpoint", "list"], { env: e })).stdout).toContain(
      `${id}  ${list[0]!.created_at}  1 file  `,
    );

    const restored = await runCli(["checkpoint", "restore", id], { env: e });
    expect(restored.stdout.trim()).toBe(`restored ${id}: 1 written, 1 removed, 0 unchanged`);
    expect(readFileSync(join(w, "a.txt"), "utf8")).toBe("one");

    const pruned = await runCli(["checkpoint", "prune", "--keep", "1", "--format", "json"], { env: e });
    expect(JSON.parse(pruned.stdout)).toMatchObject({ removed_checkpoints: [id], kept: 1, removed_blobs: 1 });

    const missing = await runCli(["checkpoint", "restore", id], { env: e });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(`checkpoint ${id} does not exist`);
    const bad = await runCli(["checkpoint", "restore", "nope"], { env: e });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('"nope" is not a checkpoint id');
    const keep = await runCli(["checkpoint", "prune", "--keep", "x"], { env: e });
    expect(keep.code).toBe(2);
    expect(keep.stderr).toContain('--keep expects a whole number, got "x"');
    const noWs = await runCli(["checkpoint", "create", "--workspace", join(root, "absent")], { env: e });
    expect(noWs.code).toBe(1);
    expect(noWs.stderr).toContain(`workspace ${join(root, "absent")} does not exist`);
  });

  it("resume-info prints resume.json with the replay status", async () => {
    const w = join(root, "rw");
    const e = { ...env(), LATTICE_WORKSPACE: w };
    expect(JSON.parse((await runCli(["resume-info"], { env: e })).stdout)).toEqual({
      resume: null,
      replayed: false,
      key: null,
    });
    mkdirSync(join(w, ".lattice"), { recursive: true });
    writeFileSync(join(w, ".lattice/resume.json"), SPEC_RESUME);
    const peek = JSON.parse((await runCli(["resume-info", "--no-mark"], { env: e })).stdout) as {
      replayed: boolean;
      resume: unknown;
    };
    expect(peek).toMatchObject({ replayed: false, resume: JSON.parse(SPEC_RESUME) });
    expect(JSON.parse((await runCli(["resume-info"], { env: e })).stdout)).toMatchObject({ replayed: false });
    expect(JSON.parse((await runCli(["resume-info"], { env: e })).stdout)).toMatchObject({ replayed: true });
    writeFileSync(join(w, ".lattice/resume.json"), '{"work_item_id":"x"}');
    const bad = await runCli(["resume-info"], { env: e });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain(
      "resume.json is invalid:\n  $.checkpoint_id: Invalid input: expected string, received undefined",
    );
  });
});
