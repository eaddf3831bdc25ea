#!/usr/bin/env node
// A test sprite driven by a scenario file: `scenario.mjs DIST_DIR SCENARIO.json`.
// Steps: {event}, {bulk: n}, {stdout_only}, {outbox_only}, {log}, {stderr}, {raw_stdout}, {file: {path, text}},
// {sh}, {sleep}, {waiting: {reason, expected_inputs}} (checkpoint + WAITING + exit 0), {exit}.
// On resume (a new .lattice/resume.json), it acknowledges with INFO and runs `on_resume`.
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { execSync } from "node:child_process";

const [dist, scenarioPath] = process.argv.slice(2);
const lattice = await import(join(dist, "lattice", "index.js"));
const scenario = JSON.parse(readFileSync(scenarioPath, "utf8"));
const ws = process.env.LATTICE_WORKSPACE;
const outbox = join(ws, ".lattice", "outbox.jsonl");
mkdirSync(join(ws, ".lattice"), { recursive: true });

const envelope = (event_type, payload) => ({
  protocol_version: "v1",
  event_type,
  sprite_id: process.env.LATTICE_SPRITE_ID,
  work_item_id: process.env.LATTICE_WORK_ITEM_ID,
  timestamp: new Date().toISOString(),
  payload,
});
const toOutbox = (e) => appendFileSync(outbox, `${JSON.stringify(e)}\n`);
const toStdout = (e) => process.stdout.write(`LATTICE_EVENT ${JSON.stringify(e)}\n`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function run(steps) {
  for (const s of steps) {
    if (s.event) {
      toOutbox(s.event);
      toStdout(s.event);
    } else if (s.emit) {
      const e = envelope(s.emit, s.payload ?? {});
      toOutbox(e);
      toStdout(e);
    } else if (s.bulk) {
      // Many events at once: the outbox, then stdout, one write each (a backlog the supervisor reads in batches).
      const lines = Array.from({ length: s.bulk }, (_, i) =>
        JSON.stringify(envelope("INFO", { message: `bulk ${i}` })),
      );
      appendFileSync(outbox, `${lines.join("\n")}\n`);
      process.stdout.write(`${lines.map((l) => `LATTICE_EVENT ${l}`).join("\n")}\n`);
    } else if (s.stdout_only) toStdout(s.stdout_only);
    else if (s.outbox_only) toOutbox(s.outbox_only);
    else if (s.log !== undefined) process.stdout.write(`${s.log}\n`);
    else if (s.raw_stdout !== undefined) process.stdout.write(s.raw_stdout);
    else if (s.raw_outbox !== undefined) appendFileSync(outbox, s.raw_outbox);
    else if (s.stderr !== undefined) process.stderr.write(`${s.stderr}\n`);
    else if (s.file) writeFileSync(join(ws, s.file.path), s.file.text);
    else if (s.sh) {
      try {
        execSync(s.sh, { cwd: ws, stdio: ["ignore", "inherit", "inherit"] });
      } catch {
        process.stdout.write(`sh failed: ${s.sh}\n`);
      }
    } else if (s.sleep) await sleep(s.sleep);
    else if (s.waiting) {
      const id = lattice.createCheckpoint(ws, process.env.LATTICE_CHECKPOINT_DIR).id;
      const e = envelope("WAITING", {
        reason: s.waiting.reason,
        checkpoint_id: s.waiting.checkpoint_id ?? id,
        ...(s.waiting.expected_inputs ? { expected_inputs: s.waiting.expected_inputs } : {}),
      });
      toOutbox(e);
      toStdout(e);
      process.exit(0);
    } else if (s.exit !== undefined) process.exit(s.exit);
  }
}

const resume = lattice.readResume(ws);
if (resume.resume && !resume.replayed) {
  const e = envelope("INFO", {
    message: "resumed",
    kind: "note",
    metadata: { inputs: resume.resume.inputs, context: resume.resume.context },
  });
  toOutbox(e);
  toStdout(e);
  await run(scenario.on_resume ?? []);
} else if (resume.resume && resume.replayed) {
  await run(scenario.on_replay ?? [{ exit: 0 }]);
} else {
  await run(scenario.steps ?? []);
}
