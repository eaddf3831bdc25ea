#!/usr/bin/env node
// A sprite written from the Lattice protocol text alone (lattice-communication-protocol-v1.md):
// no pmagent SDK. It writes the literal paths the spec gives (/workspace/.lattice/outbox.jsonl,
// /workspace/.lattice/resume.json), prints every event with the LATTICE_EVENT prefix and appends
// it to the outbox, takes its sprite id and work item from its exec context (LATTICE_SPRITE_ID,
// LATTICE_WORK_ITEM_ID), checkpoints with `pmagent checkpoint create`, and follows the spec's
// blocking flow: ACTION_REQUEST OPEN_PR (blocking) → checkpoint → WAITING PR_REVIEW with
// expected_inputs {approved, comments} → exit. On resume: reads resume.json, acknowledges with
// INFO, records what it got in /workspace/.lattice/got.json and COMPLETES (success when approved).
// `--workspace-from-env`: the one departure, for a run without the sandbox (where /workspace is not
// the workspace): the workspace is $LATTICE_WORKSPACE instead.
import { execFileSync } from "node:child_process";
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";

const root = process.argv[2] === "--workspace-from-env" ? process.env.LATTICE_WORKSPACE : "/workspace";
const dir = `${root}/.lattice`;
const outbox = `${dir}/outbox.jsonl`;
const resumeFile = `${dir}/resume.json`;
const marker = `${dir}/resumed`;

mkdirSync(dir, { recursive: true });

function emit(event_type, payload) {
  const event = {
    protocol_version: "v1",
    event_type,
    sprite_id: process.env.LATTICE_SPRITE_ID,
    work_item_id: process.env.LATTICE_WORK_ITEM_ID,
    timestamp: new Date().toISOString(),
    payload,
  };
  const line = JSON.stringify(event);
  process.stdout.write(`LATTICE_EVENT ${line}\n`);
  appendFileSync(outbox, `${line}\n`);
}

function checkpoint() {
  return execFileSync("pmagent", ["checkpoint", "create"], { encoding: "utf8" }).trim();
}

if (existsSync(resumeFile)) {
  const text = readFileSync(resumeFile, "utf8");
  const resume = JSON.parse(text);
  // Idempotency: the same resume again is a no-op.
  if (existsSync(marker) && readFileSync(marker, "utf8") === text) process.exit(0);
  writeFileSync(marker, text);
  emit("INFO", { message: `resumed from ${resume.checkpoint_id}`, kind: "note" });
  writeFileSync(`${dir}/got.json`, JSON.stringify({ root, resume }));
  const approved = resume.inputs.approved === true;
  emit("COMPLETED", {
    status: approved ? "success" : "failure",
    summary: approved ? `merged after review: ${resume.inputs.comments.join("; ")}` : "review did not approve",
  });
  process.exit(0);
}

const git = (...args) =>
  execFileSync("git", ["-c", "user.name=sprite", "-c", "user.email=sprite@example.invalid", ...args], {
    cwd: root,
    stdio: "ignore",
  });
emit("PHASE_STARTED", { phase: "implement" });
git("checkout", "-q", "-b", "sprite/fix-cache");
writeFileSync(`${root}/fix.txt`, "cache invalidated\n");
git("add", "fix.txt");
git("commit", "-q", "-m", "Fix cache invalidation");
emit("PHASE_FINISHED", { phase: "implement", success: true });
emit("ARTIFACT", { kind: "branch", ref: "sprite/fix-cache", url: null, metadata: {} });
emit("ACTION_REQUEST", {
  action: "OPEN_PR",
  parameters: { title: "Fix cache invalidation", body: "Resolves #17", base: "main", head: "sprite/fix-cache" },
  blocking: true,
});
const chk = checkpoint();
emit("WAITING", {
  reason: "PR_REVIEW",
  checkpoint_id: chk,
  expected_inputs: { approved: "boolean", comments: "array<string>" },
});
process.exit(0);
