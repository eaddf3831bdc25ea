import { describe, expect, it, beforeAll, afterAll } from "vitest";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCli } from "../helpers/proc.js";
import { openSqliteTestStore, type TestStore } from "../helpers/stores.js";
import { scenarioSprite } from "../lattice/helpers.js";

describe("pmagent run / runs / resume", () => {
  let ts: TestStore;
  let root: string;
  let env: NodeJS.ProcessEnv;
  const sprite = (name: string, scenario: unknown) => scenarioSprite(root, name, scenario);
  const cli = (args: string[]) => runCli(args, { cwd: root, env });

  beforeAll(async () => {
    ts = await openSqliteTestStore();
    root = mkdtempSync(join(tmpdir(), "pmagent-cli-lattice-"));
    env = { ...process.env, ...ts.env };
    const config = {
      project_id: "cli",
      lanes: [{ layer: "t", name: "l", roles: [{ name: "Builder", allowed_kinds: ["build_request"] }] }],
    };
    writeFileSync(join(root, "pmagent.config.json"), JSON.stringify(config));
  });
  afterAll(async () => {
    await ts.cleanup();
    rmSync(root, { recursive: true, force: true });
  });

  it("runs a sprite, lists it, shows its events and logs", async () => {
    const r = await cli([
      "run",
      "--role",
      "Builder",
      "--format",
      "json",
      "--",
      ...sprite("ok", {
        steps: [
          { log: "hello from the sprite" },
          { emit: "INFO", payload: { message: "working" } },
          { emit: "COMPLETED", payload: { status: "success" } },
        ],
      }),
    ]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const run = JSON.parse(r.stdout) as { id: string; state: string; event_count: number };
    expect(run).toMatchObject({ state: "succeeded", event_count: 2 });
    const list = await cli(["runs", "list"]);
    expect(list.stdout).toContain(`${run.id}  succeeded  Builder  2 events`);
    const events = await cli(["runs", "events", run.id]);
    expect(events.stdout).toMatch(/1 {2}INFO +working {2}\[outbox line 1\]/);
    const logs = await cli(["runs", "logs", run.id]);
    expect(logs.stdout).toBe("hello from the sprite\n");
    const show = await cli(["runs", "show", run.id]);
    expect(show.stdout).toContain("attempts:   1, last exit code 0");
  });

  it("exits 1 for a failed run and names the reason", async () => {
    const r = await cli(["run", "--role", "Builder", "--", ...sprite("bad", { steps: [{ exit: 4 }] })]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(
      "failed  Builder  0 events: the sprite exited with code 4 and sent no Lattice events, so its exit status decides; ",
    );
    // A sprite that spoke Lattice and then ended without a word crashed mid-protocol, whatever its exit status.
    const crashed = await cli([
      "run",
      "--role",
      "Builder",
      "--",
      ...sprite("crashed", { steps: [{ emit: "INFO", payload: { message: "half way" } }, { exit: 0 }] }),
    ]);
    expect(crashed.code).toBe(1);
    expect(crashed.stdout).toContain(
      "failed  Builder  1 event: the sprite ended (exit code 0) without COMPLETED, ERROR or WAITING; ",
    );
  });

  it("runs any program: one that never speaks Lattice ends by its exit status, with a note that it sent no events", async () => {
    const ok = await cli(["run", "--role", "Builder", "--format", "json", "--", "sh", "-c", "echo hi"]);
    expect(ok.code, ok.stderr).toBe(0);
    const run = JSON.parse(ok.stdout) as { id: string; state: string; reason: string; event_count: number };
    expect(run).toMatchObject({ state: "succeeded", event_count: 0 });
    expect(run.reason).toMatch(
      /^the sprite exited with code 0 and sent no Lattice events, so its exit status decides; /,
    );
    expect((await cli(["runs", "logs", run.id])).stdout).toBe("hi\n");
    const bad = await cli(["run", "--role", "Builder", "--", "sh", "-c", "echo oops >&2; exit 3"]);
    expect(bad.code).toBe(1);
    expect(bad.stdout).toContain(
      "failed  Builder  0 events: the sprite exited with code 3 and sent no Lattice events, so its exit status decides; ",
    );
  });

  it("resumes with --input values parsed per expected type; the same resume again is a no-op", async () => {
    const wait = await cli([
      "run",
      "--role",
      "Builder",
      "--format",
      "json",
      "--",
      ...sprite("wait", {
        steps: [
          {
            waiting: {
              reason: "REVIEW",
              expected_inputs: { approved: "boolean", count: "integer", tags: "array<string>", note: "string" },
            },
          },
        ],
        on_resume: [{ emit: "COMPLETED", payload: { status: "success" } }],
      }),
    ]);
    expect(wait.code).toBe(0);
    const id = (JSON.parse(wait.stdout) as { id: string; state: string }).id;
    const bad = async (args: string[], message: string) => {
      const r = await cli(["resume", id, ...args]);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(message);
    };
    await bad(["--input", "approved=maybe"], '--input approved expects true or false, got "maybe"');
    await bad(["--input", "count=1.5"], '--input count expects an integer, got "1.5"');
    await bad(["--input", "tags=[1"], "--input tags (array<string>, as JSON) is not valid JSON");
    await bad(
      ["--input", "nope=1"],
      "--input nope: not in the run's expected_inputs (expected approved, count, tags, note)",
    );
    await bad(["--input", "approved"], '--input expects key=value, got "approved"');
    await bad(["--input", "approved=true"], "inputs.count: missing (expected integer)");
    await bad(
      ["--input", "approved=true", "--inputs-file", "x.json"],
      "give the inputs either with --input or with --inputs-file, not both",
    );
    await bad(["--context-json", "[1]"], "--context-json expects a JSON object");
    const args = [
      "--input",
      "approved=true",
      "--input",
      "count=3",
      "--input",
      'tags=["a","b"]',
      "--input",
      "note=looks good",
    ];
    const ok = await cli(["resume", id, ...args]);
    expect(ok.stderr).toBe("");
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain(`${id}  succeeded`);
    // Waiting is shown while the run waits, not once it has finished.
    const show = await cli(["runs", "show", id]);
    expect(show.stdout).toContain("succeeded");
    expect(show.stdout).not.toContain("waiting:");
    const again = await cli(["resume", id, ...args]);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain("already resumed with this checkpoint and payload: nothing done");
    const events = await cli(["runs", "events", id, "--format", "json"]);
    const ack = (
      JSON.parse(events.stdout) as { items: Array<{ event: { payload: { metadata?: { inputs: unknown } } } }> }
    ).items.find((e) => e.event.payload.metadata);
    expect(ack!.event.payload.metadata!.inputs).toEqual({
      approved: true,
      count: 3,
      tags: ["a", "b"],
      note: "looks good",
    });
  });

  it("refuses bad requests with exit codes and messages", async () => {
    const missing = await cli(["runs", "show", "run_nope"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(
      "run run_nope does not exist in project cli (see `pmagent runs list`) [run_not_found]",
    );
    const role = await cli(["run", "--role", "Ghost", "--", "true"]);
    expect(role.code).toBe(2);
    expect(role.stderr).toContain(
      'role "Ghost" is not configured in any lane (configured roles: Builder) [unknown_role]',
    );
    const noCommand = await cli(["run", "--role", "Builder"]);
    expect(noCommand.code).toBe(2);
    expect(noCommand.stderr).toContain("role Builder has no runner.command or runner.agent in pmagent.config.json");
    const timeout = await cli(["run", "--role", "Builder", "--timeout", "0", "--", "true"]);
    expect(timeout.code).toBe(2);
    expect(timeout.stderr).toContain("--timeout must be between 1 and ∞, got 0");
    const finished = (
      JSON.parse((await cli(["runs", "list", "--format", "json"])).stdout) as { items: Array<{ id: string }> }
    ).items[0]!.id;
    const cancel = await cli(["runs", "cancel", finished]);
    expect(cancel.code).toBe(1);
    expect(cancel.stderr).toContain(`run ${finished} is already succeeded: nothing to cancel`);
    const notWaiting = await cli(["resume", finished, "--inputs-file", "-"]);
    expect(notWaiting.code).toBe(2);
    expect(notWaiting.stderr).toContain("standard input is not valid JSON");
  });

  it("pmagent worker --once runs what is open and stops", async () => {
    const cfg = {
      project_id: "cli",
      lanes: [
        {
          layer: "t",
          name: "l",
          roles: [
            {
              name: "Builder",
              allowed_kinds: ["build_request"],
              runner: { command: sprite("w", { steps: [{ emit: "COMPLETED", payload: { status: "success" } }] }) },
            },
          ],
        },
      ],
    };
    writeFileSync(join(root, "pmagent.config.json"), JSON.stringify(cfg));
    const post = await runCli(["bb", "post", "-"], {
      cwd: root,
      env,
      input: JSON.stringify({ id: "job-1", to: "Builder", kind: "build_request" }),
    });
    expect(post.code).toBe(0);
    const w = await cli(["worker", "--role", "Builder", "--once"]);
    expect(w.code).toBe(0);
    expect(w.stdout).toMatch(/succeeded {2}Builder, entry job-1 {2}1 event$/m);
    const show = await cli(["bb", "show", "job-1", "--format", "json"]);
    expect(JSON.parse(show.stdout).status).toBe("done");
  });
});
