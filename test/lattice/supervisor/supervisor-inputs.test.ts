/**
 * Whole runs with hostile output: a good run stays good whatever bad lines it also writes (these
 * once failed it as "cannot start the sprite" and lost its events), and an outbox swapped for a
 * FIFO or a link does not hang the supervisor.
 */
import { describe, expect, it } from "vitest";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { availableStoreKinds } from "../../helpers/stores.js";
import { SPEC_EVENTS } from "../helpers.js";
import { useSupervisorFixture } from "../../helpers/supervisor-fixture.js";
import { newRun } from "../../helpers/runs.js";

const kinds = await availableStoreKinds();

describe.each(kinds)("supervisor with hostile sprite output on $name", (kind) => {
  const fx = useSupervisorFixture(kind);

  it("keeps a good run good through NUL, escaped U+0000, deep JSON and bytes that are not UTF-8, refusing each bad line", async () => {
    const sup = fx.tp.supervisor();
    const deep = `${"[".repeat(5000)}${"]".repeat(5000)}`;
    // An INFO event's text up to its message's opening quote.
    const head = JSON.stringify(SPEC_EVENTS.info).split("Starting implementation")[0]!;
    const info = (payload: string) =>
      JSON.stringify(SPEC_EVENTS.info).replace('{"message":"Starting implementation"}', () => payload);
    const run = await sup.startRun({
      role: "Builder",
      command: fx.tp.sprite("hostile", {
        steps: [
          { event: SPEC_EVENTS.info },
          { log: "a log line with a NUL: \u0000 here" },
          { raw_stdout: 'LATTICE_EVENT {"raw":"\u0000"}\n' },
          { raw_stdout: `LATTICE_EVENT ${info('{"message":"a\\u0000b"}')}\n` },
          { raw_outbox: `${info(`{"message":"m","metadata":{"d":${deep}}}`)}\n` },
          { raw_stdout: `LATTICE_EVENT ${info(`{"message":"m","metadata":{"d":${deep}}}`)}\n` },
          // A Latin-1 é: a byte that is not UTF-8.
          { sh: `printf 'LATTICE_EVENT %scaf\\351"}}\\n' '${head}'` },
          { event: SPEC_EVENTS.phaseStarted },
          { event: SPEC_EVENTS.completed },
        ],
      }),
    });
    expect(run).toMatchObject({ state: "succeeded", reason: null });
    expect((await sup.runs.events(run.id)).map((e) => e.event_type)).toEqual(["INFO", "PHASE_STARTED", "COMPLETED"]);
    const reasons = (await sup.runs.protocolErrors(run.id)).map((e) => `${e.source}: ${e.reason}`);
    expect(reasons).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^stdout: invalid JSON: /),
        "stdout: schema violation: $.payload.message holds U+0000 (NUL), which the store cannot keep as text; leave it out or encode it (e.g. base64)",
        "outbox: invalid JSON: the event nests deeper than 64 levels of objects and arrays (MAX_JSON_DEPTH); flatten it",
        "stdout: invalid JSON: the event nests deeper than 64 levels of objects and arrays (MAX_JSON_DEPTH); flatten it",
        "stdout: invalid UTF-8: the line holds bytes that are not UTF-8 text; an event is UTF-8 JSON (escape other bytes, e.g. as base64)",
      ]),
    );
    expect((await sup.runs.logs(run.id)).map((l) => l.text)).toContain("a log line with a NUL: \uFFFD here");
  });

  it("does not hang on an outbox swapped for a FIFO: the outbox is refused, stdout's events still count", async () => {
    const sup = fx.tp.supervisor();
    const run = await sup.startRun({
      role: "Builder",
      command: fx.tp.sprite("fifo", {
        steps: [
          { sh: "rm -f .lattice/outbox.jsonl && mkfifo .lattice/outbox.jsonl" },
          { stdout_only: SPEC_EVENTS.completed },
        ],
      }),
    });
    expect(run.state).toBe("succeeded");
    const reasons = (await sup.runs.protocolErrors(run.id)).map((e) => e.reason);
    expect(reasons).toEqual([
      expect.stringMatching(
        /^outbox unreadable, no longer read for this run: the outbox .*outbox\.jsonl is a FIFO, not a regular file/,
      ),
    ]);
  });

  it("reconciles a run whose outbox was swapped for a FIFO instead of hanging on it", async () => {
    const sup = fx.tp.supervisor();
    const ws = mkdtempSync(join(tmpdir(), "pmagent-fifo-ws-"));
    try {
      mkdirSync(join(ws, ".lattice"));
      execFileSync("mkfifo", [join(ws, ".lattice", "outbox.jsonl")]);
      // A run its supervisor left running, its sprite gone.
      await sup.runs.create(
        newRun("run_fifo", ws, {
          checkpoint_dir: join(ws, "chk"),
          run_dir: join(ws, "run"),
          host: sup.host,
          supervisor_pid: process.pid,
        }),
      );
      const [run] = await sup.reconcile();
      expect(run).toMatchObject({
        id: "run_fifo",
        state: "failed",
        reason: expect.stringContaining(`the sprite ended (exit code unknown) without COMPLETED, ERROR or WAITING; `),
      });
      // It says where the workspace and its outbox are.
      expect(run!.reason).toContain(join(ws, ".lattice", "outbox.jsonl"));
      expect((await sup.runs.protocolErrors("run_fifo")).map((e) => e.reason)).toEqual([
        expect.stringContaining("outbox.jsonl is a FIFO, not a regular file"),
      ]);
    } finally {
      rmSync(ws, { recursive: true, force: true });
    }
  });
});
