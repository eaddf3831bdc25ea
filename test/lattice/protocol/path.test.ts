/**
 * The whole path: a sprite process writes events to stdout and the outbox; the supervisor side
 * reads stdout in arbitrary chunks as ingest does, reads the outbox from offsets, and between the
 * two copies has every event, each with the same id (what the store keeps once).
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import {
  assertInputs,
  checkpointExists,
  defaultCheckpointDir,
  eventId,
  outboxPath,
  readOutbox,
  restoreCheckpoint,
  writeResume,
  OUTBOX_START,
  type EventOf,
  type ParsedEvent,
  type ParsedLine,
  type ProtocolError,
} from "../../../src/lattice/index.js";
import { CLI } from "../../helpers/proc.js";
import { stdoutLines } from "../../helpers/stdout-lines.js";
import { SPEC_EVENTS, SPEC_STDOUT_LINE } from "../fixtures/spec-examples.js";

let root: string;
let ws: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "lattice-path-"));
  ws = join(root, "workspace");
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

/** Run a sprite and feed its stdout to a parser, re-split into the given chunk sizes. */
function supervise(
  script: string,
  sizes: number[],
  env: Record<string, string> = {},
): Promise<{ lines: ParsedLine[]; code: number | null }> {
  return new Promise((resolve, reject) => {
    const child = spawn("bash", ["-c", script], {
      env: {
        PATH: process.env.PATH,
        LATTICE_WORKSPACE: ws,
        LATTICE_SPRITE_ID: "sprite-42",
        LATTICE_WORK_ITEM_ID: "issue-17",
        ...env,
      },
      stdio: ["ignore", "pipe", "inherit"],
    });
    const parser = stdoutLines();
    const lines: ParsedLine[] = [];
    let i = 0;
    child.stdout.on("data", (data: Buffer) => {
      let pos = 0;
      while (pos < data.length) {
        const n = Math.max(1, sizes[i++ % sizes.length]!);
        lines.push(...parser.push(data.subarray(pos, pos + n)));
        pos += n;
      }
    });
    child.on("error", reject);
    child.on("close", (code) => {
      lines.push(...parser.end());
      resolve({ lines, code });
    });
  });
}

const events = (lines: ReadonlyArray<ParsedLine | ProtocolError>) =>
  lines.filter((l): l is ParsedEvent => l.kind === "event");

describe("the whole path", () => {
  it("the spec's example events, verbatim, from a shell sprite: each in one copy or both, with one id", async () => {
    const examples = [
      SPEC_STDOUT_LINE.slice("LATTICE_EVENT ".length),
      ...SPEC_EVENTS.map((e) => JSON.stringify(JSON.parse(e.text))),
    ];
    writeFileSync(join(root, "events.jsonl"), `${examples.join("\n")}\n`);
    // Event 3 only reaches stdout (the outbox append was lost), event 5 only the outbox (stdout
    // broke); the sprite also logs, prints garbage, and dies in the middle of an outbox line.
    const script = `
      mkdir -p "$LATTICE_WORKSPACE/.lattice"
      n=0
      while IFS= read -r line; do
        n=$((n+1))
        echo "working on step $n"
        [ $n -ne 5 ] && printf 'LATTICE_EVENT %s\\n' "$line"
        [ $n -ne 3 ] && printf '%s\\n' "$line" >> "$LATTICE_WORKSPACE/.lattice/outbox.jsonl"
      done < "${join(root, "events.jsonl")}"
      echo 'LATTICE_EVENT {"protocol_version":"v1","event_type":"INFO"'
      printf '{"protocol_version":"v1","event_ty' >> "$LATTICE_WORKSPACE/.lattice/outbox.jsonl"
      printf 'LATTICE_EVENT %s' '${examples[0]}'
    `;
    const { lines, code } = await supervise(script, [1, 7, 64, 3, 1000]);
    expect(code).toBe(0);
    const outbox = readOutbox(outboxPath(ws), OUTBOX_START);
    expect(outbox.torn).toMatchObject({ bytes: 34 });
    expect(outbox.items.every((i) => i.kind === "event")).toBe(true);

    const errors = lines.filter((l) => l.kind === "protocol_error");
    expect(errors).toHaveLength(1);
    expect(errors[0]!.reason).toMatch(/^invalid JSON: /);
    expect(lines.filter((l) => l.kind === "log")).toHaveLength(examples.length);

    const expected = examples.map((e) => JSON.parse(e) as Record<string, unknown>);
    const ids = expected.map((e) => eventId(e));
    expect(events(outbox.items).map((e) => e.id)).toEqual(ids.filter((_, i) => i !== 2));
    expect(events(lines).map((e) => e.id)).toEqual([...ids.filter((_, i) => i !== 4), ids[0]]);
    // Between them the two copies hold every event; kept by id, each is there once.
    const byId = new Map([...events(outbox.items), ...events(lines)].map((e) => [e.id, e.raw]));
    expect(byId.size).toBe(expected.length);
    expect(ids.map((id) => byId.get(id))).toEqual(expected);
  });

  it("any chunking of a sprite's stdout yields the same events", async () => {
    const payloads = SPEC_EVENTS.map((e) => JSON.stringify(JSON.parse(e.text)));
    writeFileSync(join(root, "events.jsonl"), `${payloads.join("\n")}\n`);
    const script = `while IFS= read -r line; do printf 'LATTICE_EVENT %s\\r\\nlog ✓ ünïcödé\\n' "$line"; done < "${join(root, "events.jsonl")}"`;
    const reference = events((await supervise(script, [1 << 20])).lines).map((e) => e.id);
    expect(reference).toHaveLength(SPEC_EVENTS.length);
    await fc.assert(
      fc.asyncProperty(fc.array(fc.integer({ min: 1, max: 200 }), { minLength: 1, maxLength: 10 }), async (sizes) => {
        expect(events((await supervise(script, sizes)).lines).map((e) => e.id)).toEqual(reference);
      }),
      { numRuns: 15 },
    );
  });

  it("pmagent emit with each spec payload: stdout and outbox copies are the same event, stamped now", async () => {
    const before = Date.now();
    const cmds = SPEC_EVENTS.map((e) => {
      const spec = JSON.parse(e.text) as { event_type: string; payload: unknown };
      return `"${process.execPath}" "${CLI}" emit ${spec.event_type} --payload-json '${JSON.stringify(spec.payload)}' || exit 9`;
    });
    const { lines, code } = await supervise(cmds.join("\n"), [13]);
    expect(code).toBe(0);
    const fromStdout = events(lines);
    const fromOutbox = events(readOutbox(outboxPath(ws)).items);
    expect(fromStdout.map((e) => e.id)).toEqual(fromOutbox.map((e) => e.id));
    expect(new Set(fromOutbox.map((e) => e.id)).size).toBe(SPEC_EVENTS.length);
    SPEC_EVENTS.forEach((e, i) => {
      const spec = JSON.parse(e.text) as Record<string, unknown>;
      const got = fromOutbox[i]!.raw;
      expect({ ...got, timestamp: spec.timestamp }).toEqual(spec);
      const ts = Date.parse(got.timestamp as string);
      expect(ts).toBeGreaterThanOrEqual(before);
      expect(ts).toBeLessThanOrEqual(Date.now());
    });
  });
});

describe("the WAITING flow of a shell sprite", () => {
  it("blocking action, checkpoint, WAITING; then restore, resume, and a replayed resume is a no-op", async () => {
    const pm = `"${process.execPath}" "${CLI}"`;
    // A doc_update-like sprite: first run edits and pauses; a resumed run reads its inputs once.
    const script = `
      set -e
      resume=$(${pm} resume-info)
      case "$resume" in
        *'"resume": null'*)
          mkdir -p "$LATTICE_WORKSPACE/docs"
          echo "draft" > "$LATTICE_WORKSPACE/docs/guide.md"
          ${pm} emit ACTION_REQUEST --action OPEN_PR --param title="Update guide" --param head=sprite/guide --blocking
          chk=$(${pm} checkpoint create)
          ${pm} emit WAITING --reason PR_REVIEW --checkpoint "$chk" --expect approved=boolean --expect "comments=array<string>"
          echo "scribble after waiting" > "$LATTICE_WORKSPACE/docs/guide.md"
          exit 0 ;;
        *'"replayed": true'*)
          ${pm} emit INFO --message "resume already processed; nothing to do" --kind note
          exit 0 ;;
        *)
          ${pm} emit INFO --message "resumed with $(echo "$resume" | grep -o '"approved": [a-z]*')" --kind note
          ${pm} emit COMPLETED --status success --summary "guide updated"
          exit 0 ;;
      esac
    `;
    mkdirSync(ws, { recursive: true });
    const first = await supervise(script, [4096]);
    expect(first.code).toBe(0);
    const evs = events(first.lines);
    expect(evs.map((e) => e.event.event_type)).toEqual(["ACTION_REQUEST", "WAITING"]);
    const waiting = evs[1]!.event as EventOf<"WAITING">;
    const chkDir = defaultCheckpointDir(ws, {});
    expect(checkpointExists(chkDir, waiting.payload.checkpoint_id)).toBe(true);

    // The supervisor fulfils the action, checks the inputs, restores and resumes.
    const inputs = { approved: true, comments: ["Looks good"] };
    assertInputs(inputs, waiting.payload.expected_inputs ?? {});
    expect(() => assertInputs({ approved: "yes" }, waiting.payload.expected_inputs ?? {})).toThrow(
      "inputs.approved: expected boolean, got string",
    );
    restoreCheckpoint(ws, chkDir, waiting.payload.checkpoint_id);
    expect(readFileSync(join(ws, "docs/guide.md"), "utf8")).toBe("draft\n");
    writeResume(ws, { work_item_id: "issue-17", checkpoint_id: waiting.payload.checkpoint_id, inputs });

    const second = await supervise(script, [4096]);
    expect(
      events(second.lines).map((e) => [e.event.event_type, (e.event.payload as { message?: string }).message]),
    ).toEqual([
      ["INFO", 'resumed with "approved": true'],
      ["COMPLETED", undefined],
    ]);
    // The same resume delivered again (a supervisor restart) is a no-op for the sprite.
    const third = await supervise(script, [4096]);
    expect(events(third.lines).map((e) => (e.event.payload as { message?: string }).message)).toEqual([
      "resume already processed; nothing to do",
    ]);

    // Every event is in the outbox once, in order, across the three runs (.lattice/ survived the restore).
    const all = events(readOutbox(outboxPath(ws)).items);
    expect(all.map((e) => e.event.event_type)).toEqual(["ACTION_REQUEST", "WAITING", "INFO", "COMPLETED", "INFO"]);
    expect(new Set([...all, ...evs, ...events(second.lines), ...events(third.lines)].map((e) => e.id)).size).toBe(5);
  });
});
