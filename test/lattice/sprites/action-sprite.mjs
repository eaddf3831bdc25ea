#!/usr/bin/env node
// A well-behaved sprite for the action end-to-end tests: `action-sprite.mjs DIST_DIR PLAN.json`.
// First start: optional `commit` on a new branch (git in the workspace, no push), an optional `sh`
// command in the workspace (what a hostile sprite does to it), then the ACTION_REQUEST of the plan, blocking: checkpoint, WAITING with the plan's expected_inputs, exit.
// On resume: writes what it got to `.lattice/got.json` — a secret input only as its sha256, never
// printed — acknowledges with INFO and COMPLETES.
import { createHash } from "node:crypto";
import { execFileSync, execSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const [dist, planPath] = process.argv.slice(2);
const { Sprite } = await import(join(dist, "lattice", "index.js"));
const plan = JSON.parse(readFileSync(planPath, "utf8"));
const sprite = new Sprite();
const ws = sprite.workspace;

const resume = sprite.readResume({ mark: true });
if (resume.resume && !resume.replayed) {
  const { inputs, context } = resume.resume;
  const got = { ...inputs, context };
  if (typeof inputs.value === "string") got.value = createHash("sha256").update(inputs.value).digest("hex");
  writeFileSync(join(ws, ".lattice", "got.json"), JSON.stringify(got));
  sprite.info("resumed", {
    kind: "note",
    metadata: { keys: Object.keys(inputs).sort(), error: context.error ?? null },
  });
  sprite.completed(
    context.error ? "failure" : "success",
    context.error ? context.error.message : "action result received",
  );
  process.exit(0);
}
if (resume.resume) process.exit(0);

if (plan.commit) {
  const git = (...args) =>
    execFileSync("git", ["-c", "user.name=sprite", "-c", "user.email=sprite@example.invalid", ...args], {
      cwd: ws,
      stdio: "ignore",
    });
  git("checkout", "-q", "-b", plan.commit.branch);
  writeFileSync(join(ws, plan.commit.file), plan.commit.text);
  git("add", plan.commit.file);
  git("commit", "-q", "-m", `work on ${plan.commit.branch}`);
}
if (plan.sh) execSync(plan.sh, { cwd: ws, stdio: "ignore" });
sprite.phaseStarted("implement");
sprite.actionRequest(plan.action, plan.parameters, { blocking: true });
sprite.waiting(`waiting for ${plan.action}`, sprite.checkpoint(), plan.expected_inputs);
