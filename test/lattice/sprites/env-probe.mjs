#!/usr/bin/env node
// A sprite that reports what its run sees: `env-probe.mjs PROGRAM...` writes `.lattice/../probe.json`
// in its workspace (its PATH, the PMAGENT_* variables, and for each program where it was found and
// what `PROGRAM --version` printed), then emits COMPLETED.
import { appendFileSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { execFileSync } from "node:child_process";

const ws = process.env.LATTICE_WORKSPACE;
const programs = {};
for (const name of process.argv.slice(2)) {
  try {
    const where = execFileSync("sh", ["-c", `command -v ${name}`], { encoding: "utf8" }).trim();
    programs[name] = { where, output: execFileSync(name, ["--version"], { encoding: "utf8" }).trim() };
  } catch {
    programs[name] = null;
  }
}
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => k === "PATH" || k.startsWith("PMAGENT_")));
writeFileSync(join(ws, "probe.json"), JSON.stringify({ env, programs }, null, 2));
const event = {
  protocol_version: "v1",
  event_type: "COMPLETED",
  sprite_id: process.env.LATTICE_SPRITE_ID,
  work_item_id: process.env.LATTICE_WORK_ITEM_ID,
  timestamp: new Date().toISOString(),
  payload: { status: "success", summary: "probed" },
};
mkdirSync(join(ws, ".lattice"), { recursive: true });
appendFileSync(join(ws, ".lattice", "outbox.jsonl"), `${JSON.stringify(event)}\n`);
process.stdout.write(`LATTICE_EVENT ${JSON.stringify(event)}\n`);
